// weft::HashGrid: neighbours found through the grid equal a brute-force search (points inside
// and beyond the grid's extent, query radii smaller and larger than a cell, boxes wider than the
// grid), the cell-sorted point ids are the canonical order (by cell, ascending inside a cell) on
// every build and worker count, empty input, rebuilds that grow and shrink, and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::HashGridView;
using weft::Int;
using weft::kernel_side;
using weft::vec3;
using weft::host::vec3f;
using weft::test::test_device;

constexpr int kCap = 256;  // neighbours recorded per query point

std::vector<vec3f> random_points(int n, float lo, float hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<vec3f> p(n);
    for (auto& x : p) x = {u(rng), u(rng), u(rng)};
    return p;
}

float dist_sq(const vec3f& a, const vec3f& b) {
    const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return dx * dx + dy * dy + dz * dz;
}

// The user's side: for each query point, the points within `radius` found through the grid.
auto neighbour_kernel(weft::Module& m) {
    return m.kernel("neighbours", {"grid", "x", "queries", "radius", "count", "list"},
                    [](HashGridView<kernel_side> grid, Array<vec3> x, Array<vec3> queries, weft::Float radius,
                       Array<int> count, Array<int> list) {
                        auto i = weft::tid();
                        const vec3 p = queries[i];
                        Int n = 0;
                        weft::for_each_neighbor(grid, p, radius, [&](Int j) {
                            const vec3 q = x[j];
                            weft::if_(weft::length_sq(q - p) < radius * radius, [&] {
                                weft::if_(n < kCap, [&] { list[i * kCap + n] = j; });
                                n += 1;
                            });
                        });
                        count[i] = n;
                    });
}

struct Found {
    std::vector<std::vector<int>> lists;  // in the order found
};

Found query(const weft::HashGrid& grid, const std::vector<vec3f>& points, const std::vector<vec3f>& queries,
            float radius) {
    static weft::Module m{"hash_grid_queries"};
    static auto k = neighbour_kernel(m);
    const auto dev = grid.device();
    const int nq = static_cast<int>(queries.size());
    auto x = weft::from_vector<vec3>(points.empty() ? std::vector<vec3f>{{0, 0, 0}} : points, dev);
    auto q = weft::from_vector<vec3>(queries, dev);
    auto count = weft::zeros<int>(nq, dev);
    auto list = weft::zeros<int>(static_cast<int64_t>(nq) * kCap, dev);
    weft::launch(k, nq, grid.view(), x, q, radius, count, list);
    const auto c = count.to_vector();
    const auto l = list.to_vector();
    Found f;
    for (int i = 0; i < nq; ++i) {
        EXPECT_LE(c[i], kCap) << "raise kCap";
        f.lists.emplace_back(l.begin() + i * kCap, l.begin() + i * kCap + std::min(c[i], kCap));
    }
    return f;
}

// The grid's result against brute force. Pairs within a relative 1e-5 of the radius may fall
// either way (the device and the host may round the distance differently) and are left out.
void expect_brute_force(const Found& found, const std::vector<vec3f>& points,
                        const std::vector<vec3f>& queries, float radius) {
    const float r2 = radius * radius;
    int pairs = 0;
    for (size_t i = 0; i < queries.size(); ++i) {
        std::vector<int> got = found.lists[i];
        std::sort(got.begin(), got.end());
        EXPECT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end())
            << "a neighbour found twice, query " << i;
        std::set<int> want, ambiguous;
        for (size_t j = 0; j < points.size(); ++j) {
            const float d2 = dist_sq(points[j], queries[i]);
            if (std::abs(d2 - r2) <= 1e-5f * r2)
                ambiguous.insert(static_cast<int>(j));
            else if (d2 < r2)
                want.insert(static_cast<int>(j));
        }
        std::set<int> have;
        for (int j : got)
            if (!ambiguous.count(j)) have.insert(j);
        EXPECT_EQ(have, want) << "query " << i;
        pairs += static_cast<int>(want.size());
    }
    EXPECT_GT(pairs, 0);
}

// The canonical order: point indices sorted by (hashed cell, index), as the host computes cells.
std::vector<int> canonical_ids(const std::vector<vec3f>& points, float w, int dx, int dy, int dz) {
    auto coord = [&](float x) {
        const float c = std::clamp(std::floor(x / w), -536870912.0f, 536870912.0f);
        return static_cast<int>(c);
    };
    auto wrap = [](int x, int d) { return ((x % d) + d) % d; };
    std::vector<std::pair<int, int>> keyed;
    for (size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        const int cell = (wrap(coord(p.z), dz) * dy + wrap(coord(p.y), dy)) * dx + wrap(coord(p.x), dx);
        keyed.emplace_back(cell, static_cast<int>(i));
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<int> ids;
    for (const auto& [cell, i] : keyed) ids.push_back(i);
    return ids;
}

// Random points in a box three times the grid's extent, shifted so a third lie below zero: every
// hashed cell holds points from several places.
TEST(HashGrid, NeighboursEqualBruteForceInsideAndBeyondTheExtent) {
    const auto dev = test_device();
    const float radius = 0.1f;
    const int dims = 8;  // extent 0.8 per axis
    const auto points = random_points(3000, -0.8f, 1.6f, 1);
    weft::HashGrid grid(dims, dims, dims, dev);
    grid.build(weft::from_vector<vec3>(points, dev), radius);
    EXPECT_EQ(grid.num_points(), 3000);
    EXPECT_EQ(grid.point_ids().to_vector(), canonical_ids(points, radius, dims, dims, dims));
    const auto offsets = grid.cell_offsets().to_vector();
    ASSERT_EQ(offsets.size(), size_t{dims * dims * dims + 1});
    EXPECT_EQ(offsets.front(), 0);
    EXPECT_EQ(offsets.back(), 3000);
    EXPECT_TRUE(std::is_sorted(offsets.begin(), offsets.end()));

    // Queries at the points themselves, and elsewhere (also far outside the extent).
    auto queries = points;
    for (const auto& q : random_points(500, -3.0f, 3.0f, 2)) queries.push_back(q);
    expect_brute_force(query(grid, points, queries, radius), points, queries, radius);
    // A radius of half a cell, and of 2.5 cells (5 x 5 x 5 cells per query).
    expect_brute_force(query(grid, points, queries, 0.05f), points, queries, 0.05f);
    expect_brute_force(query(grid, points, queries, 0.25f), points, queries, 0.25f);
}

// Two points straddling x = 0 (cells -1 and 0, hashed to dim - 1 and 0) and points that share a
// hashed cell without being near each other.
TEST(HashGrid, NeighboursAcrossTheWrapAndFarPointsInOneCell) {
    const auto dev = test_device();
    const std::vector<vec3f> points = {{-0.01f, 0.5f, 0.5f},
                                       {0.01f, 0.5f, 0.5f},
                                       {4.01f, 0.5f, 0.5f},
                                       {0.01f, -3.5f, 8.5f},
                                       {-1000.0f, 2000.0f, 1e9f}};
    weft::HashGrid grid(4, 4, 4, dev);
    grid.build(weft::from_vector<vec3>(points, dev), 1.0f);
    const auto found = query(grid, points, points, 0.1f);
    std::vector<std::vector<int>> want = {{0, 1}, {0, 1}, {2}, {3}, {4}};
    for (size_t i = 0; i < points.size(); ++i) {
        auto got = found.lists[i];
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, want[i]) << i;
    }
    EXPECT_EQ(grid.point_ids().to_vector(), canonical_ids(points, 1.0f, 4, 4, 4));
}

// A query box wider than the whole grid visits each hashed cell once: every point once.
TEST(HashGrid, QueryWiderThanTheGridFindsEachPointOnce) {
    const auto dev = test_device();
    const auto points = random_points(200, -1.0f, 1.0f, 3);
    weft::HashGrid grid(2, 3, 1, dev);
    grid.build(weft::from_vector<vec3>(points, dev), 0.25f);
    const std::vector<vec3f> queries = {{0, 0, 0}, {0.3f, -0.2f, 0.9f}};
    expect_brute_force(query(grid, points, queries, 10.0f), points, queries, 10.0f);
    for (const auto& l : query(grid, points, queries, 10.0f).lists) EXPECT_EQ(l.size(), points.size());
}

// The sorted ids are the canonical order on every build and with 1, 2 and 7 CPU workers.
TEST(HashGrid, SortedIdsRepeatOverBuildsAndWorkerCounts) {
    const auto dev = test_device();
    // Many points per cell, so slot order inside a cell matters.
    const auto points = random_points(20000, -0.5f, 0.5f, 4);
    const auto want = canonical_ids(points, 0.2f, 4, 4, 4);
    auto x = weft::from_vector<vec3>(points, dev);
    for (int threads : {1, 2, 7}) {
        weft::HashGrid grid(4, 4, 4, dev, {.cpu_threads = threads});
        for (int rep = 0; rep < 3; ++rep) {
            grid.build(x, 0.2f);
            EXPECT_EQ(grid.point_ids().to_vector(), want) << threads << " workers, build " << rep;
        }
    }
    // The user's module mode does not matter: the build module is deterministic regardless.
    weft::HashGrid grid(4, 4, 4, dev, {.deterministic = weft::Deterministic::NotGuaranteed});
    grid.build(x, 0.2f);
    EXPECT_EQ(grid.point_ids().to_vector(), want);
}

// No points: the grid is empty and queries find nothing; a later build fills it, a smaller one
// shrinks it.
TEST(HashGrid, EmptyInputAndRebuilds) {
    const auto dev = test_device();
    weft::HashGrid grid(4, 4, 4, dev);
    const std::vector<vec3f> queries = {{0.1f, 0.1f, 0.1f}, {2.0f, -1.0f, 0.0f}};
    for (const auto& l : query(grid, {}, queries, 0.5f).lists) EXPECT_TRUE(l.empty());  // never built
    grid.build(weft::zeros<vec3>(0, dev), 0.5f);
    EXPECT_EQ(grid.num_points(), 0);
    EXPECT_EQ(grid.point_ids().size(), 0);
    for (int o : grid.cell_offsets().to_vector()) EXPECT_EQ(o, 0);
    for (const auto& l : query(grid, {}, queries, 0.5f).lists) EXPECT_TRUE(l.empty());

    for (int n : {500, 2000, 50}) {
        const auto points = random_points(n, -1.0f, 1.0f, 10 + n);
        grid.build(weft::from_vector<vec3>(points, dev), 0.5f);
        EXPECT_EQ(grid.num_points(), n);
        EXPECT_EQ(grid.point_ids().to_vector(), canonical_ids(points, 0.5f, 4, 4, 4)) << n;
        expect_brute_force(query(grid, points, points, 0.3f), points, points, 0.3f);
    }
}

// Warp's idiom: launch over the sorted order, i = hash_grid_point_id(grid, tid).
TEST(HashGrid, PointIdAndCellInKernels) {
    const auto dev = test_device();
    const auto points = random_points(1000, -1.0f, 2.0f, 5);
    weft::HashGrid grid(5, 6, 7, dev);
    auto x = weft::from_vector<vec3>(points, dev);
    grid.build(x, 0.3f);
    weft::Module m{"hash_grid_ids"};
    auto k =
        m.kernel("k", [](HashGridView<kernel_side> g, Array<vec3> x, Array<int> order, Array<int> cells) {
            auto t = weft::tid();
            const Int i = weft::hash_grid_point_id(g, t);
            order[t] = i;
            const vec3 p = x[i];
            cells[i] = weft::hash_grid_cell(g, p);
        });
    auto order = weft::zeros<int>(1000, dev);
    auto cells = weft::zeros<int>(1000, dev);
    weft::launch(k, 1000, grid.view(), x, order, cells);
    EXPECT_EQ(order.to_vector(), grid.point_ids().to_vector());
    const auto c = cells.to_vector();
    const auto offsets = grid.cell_offsets().to_vector();
    const auto ids = grid.point_ids().to_vector();
    for (int cell = 0; cell < 5 * 6 * 7; ++cell)
        for (int k2 = offsets[cell]; k2 < offsets[cell + 1]; ++k2) EXPECT_EQ(c[ids[k2]], cell);
}

// The example of docs/kernel-language.md ("Neighbour search"), as written there.
TEST(HashGrid, GuideExample) {
    const auto dev = test_device();
    const int n = 2000;
    const auto points = random_points(n, 0.0f, 1.0f, 6);
    auto x = weft::from_vector<vec3>(points, dev);
    auto count = weft::zeros<int>(n, dev);
    weft::HashGrid grid(16, 16, 16, dev);
    weft::Module sim{"hash_grid_guide"};
    // clang-format off
    auto k = sim.kernel("count_close", [](weft::HashGridView<weft::kernel_side> grid, weft::Array<weft::vec3> x,
                                          weft::Array<int> count) {
        auto i = weft::hash_grid_point_id(grid, weft::tid());  // threads in cell order: nearby points
        const weft::vec3 p = x[i];
        weft::for_each_neighbor(grid, p, 0.1f, [&](weft::Int j) {
            const weft::vec3 q = x[j];
            weft::if_(j != i && weft::length(q - p) < 0.1f, [&] { count[i] += 1; });
        });
    });
    grid.build(x, 0.1f);
    weft::launch(k, n, grid.view(), x, count);
    // clang-format on
    const auto got = count.to_vector();
    int total = 0;
    for (int i = 0; i < n; ++i) {
        int want = 0;
        for (int j = 0; j < n; ++j) {
            const float d = std::sqrt(dist_sq(points[i], points[j]));
            if (j != i && std::abs(d - 0.1f) > 1e-5f && d < 0.1f) ++want;
        }
        int close = 0;  // pairs at the radius itself may fall either way
        for (int j = 0; j < n; ++j)
            if (j != i && std::abs(std::sqrt(dist_sq(points[i], points[j])) - 0.1f) <= 1e-5f) ++close;
        EXPECT_GE(got[i], want) << i;
        EXPECT_LE(got[i], want + close) << i;
        total += got[i];
    }
    EXPECT_GT(total, n);
}

// A view taken before a rebuild is refused at its next launch, naming that launch's line, whether
// the grid grew (it read point indices past their end: garbage neighbours, issue 32, item 10) or
// only changed its cell width; a view taken after the build finds the neighbours of the new points.
TEST(HashGrid, AViewTakenBeforeARebuildIsRefusedAndANewOneIsRight) {
    static weft::Module m{"hash_grid_stale"};
    static auto k = neighbour_kernel(m);
    const auto dev = test_device();
    weft::HashGrid grid(16, 16, 16, dev);
    const auto few = random_points(500, 0.0f, 4.0f, 21);
    const auto many = random_points(5000, 0.0f, 4.0f, 22);
    auto x_few = weft::from_vector<vec3>(few, dev);
    auto x_many = weft::from_vector<vec3>(many, dev);
    const float radius = 0.25f;
    auto count = weft::zeros<int>(static_cast<int64_t>(many.size()), dev);
    auto list = weft::zeros<int>(static_cast<int64_t>(many.size()) * kCap, dev);
    const int nq = static_cast<int>(many.size());
    for (const bool grows : {true, false}) {
        grid.build(x_few, 2.0f * radius);
        const HashGridView<> stale = grid.view();
        weft::launch(k, 1, stale, x_few, x_few, radius, count, list);  // fine before the rebuild
        if (grows)
            grid.build(x_many, 2.0f * radius);
        else
            grid.build(x_few, 3.0f * radius);
        const int line = __LINE__ + 1;
        const auto launch_stale = [&] { weft::launch(k, nq, stale, x_many, x_many, radius, count, list); };
        try {
            launch_stale();
            ADD_FAILURE() << "a view taken before the rebuild was launched with (grows: " << grows << ")";
        } catch (const weft::Error& e) {
            EXPECT_NE(e.message().find("taken before the grid's last build()"), std::string::npos)
                << e.what();
            EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.what();
        }
    }
    grid.build(x_many, 2.0f * radius);
    expect_brute_force(query(grid, many, many, radius), many, many, radius);
}

TEST(HashGrid, BadArgumentsAreErrors) {
    const auto dev = test_device();
    EXPECT_THROW(weft::HashGrid(0, 4, 4, dev), weft::Error);
    EXPECT_THROW(weft::HashGrid(2048, 2048, 2048, dev), weft::Error);
    weft::HashGrid grid(4, 4, 4, dev);
    auto x = weft::zeros<vec3>(3, dev);
    EXPECT_THROW(grid.build(x, 0.0f), weft::Error);
    EXPECT_THROW(grid.build(x, -1.0f), weft::Error);
    EXPECT_THROW(grid.build(x, std::nanf("")), weft::Error);
    EXPECT_THROW(grid.build(x, INFINITY), weft::Error);
    EXPECT_THROW(grid.build(weft::zeros<vec3>({2, 2}, dev), 1.0f), weft::Error);
    try {
        grid.build(x, -1.0f);
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find("cell width"), std::string::npos) << e.message();
        EXPECT_NE(e.file().find("hash_grid_test.cpp"), std::string::npos) << e.file();
    }
}

}  // namespace
