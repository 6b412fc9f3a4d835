// Kernel indices count from the end when negative, as Python's do: in loads, stores, atomics,
// views, deterministic accumulation targets and slot counters; bounds checks apply after the
// wrap.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Float;
using weft::Int;

weft::Device dev() {
    return weft::test::test_device();
}

std::vector<int> iota(int n, int from = 0) {
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), from);
    return v;
}

TEST(NegativeIndices, ConstantIndicesCountFromTheEnd) {
    for (bool checked : {false, true}) {
        weft::Module m{"neg_constants", {.bounds_check = checked}};
        auto k =
            m.kernel("ends", {"in", "grid", "out"}, [](Array<int> in, Array<int, 2> grid, Array<int> out) {
                out[-1] = in[-1];
                out[-5] = in[-4];
                out[2] = grid(-1, -1) + grid(0, -3) * 100;
            });
        auto in = weft::from_vector(iota(4, 10), dev());
        auto grid = weft::from_vector(iota(12), {4, 3}, dev());
        auto out = weft::zeros<int>(5, dev());
        weft::launch(k, 1, in, grid, out);
        EXPECT_EQ(out.to_vector(), (std::vector<int>{10, 0, 11, 0, 13})) << "bounds_check " << checked;
    }
}

TEST(NegativeIndices, RunTimeIndicesCountFromTheEnd) {
    for (bool checked : {false, true}) {
        weft::Module m{"neg_runtime", {.bounds_check = checked}};
        // A stencil: thread 0's left neighbour is the last element, as out[i - 1] is in Python.
        auto k = m.kernel("left", {"in", "out", "shift"}, [](Array<int> in, Array<int> out, Int shift) {
            auto t = weft::tid();
            out[t] = in[t - 1] + in[shift] * 100;
        });
        auto in = weft::from_vector(iota(5, 1), dev());
        auto out = weft::zeros<int>(5, dev());
        weft::launch(k, 5, in, out, -2);
        EXPECT_EQ(out.to_vector(), (std::vector<int>{405, 401, 402, 403, 404})) << "bounds_check " << checked;
    }
}

TEST(NegativeIndices, AtomicsAndViews) {
    for (bool checked : {false, true}) {
        weft::Module m{"neg_atomics_views", {.bounds_check = checked}};
        auto k = m.kernel("put", {"count", "grid", "row"}, [](Array<int> count, Array<int, 3> grid, Int row) {
            auto t = weft::tid();
            weft::atomic_add(count, -1, 1);
            count[-2] += 2;
            auto last_plane = grid[-1];            // a constant view index
            last_plane[row][t - 3] = t + 1;        // a run-time view index and a negative element index
            weft::atomic_max(grid[0][-1], -1, t);  // an atomic through views
        });
        auto count = weft::zeros<int>(3, dev());
        auto grid = weft::zeros<int>({2, 2, 3}, dev());
        weft::launch(k, 3, count, grid, -1);
        EXPECT_EQ(count.to_vector(), (std::vector<int>{0, 6, 3})) << "bounds_check " << checked;
        // grid[1][1][t - 3] = t + 1 (t - 3 is -3, -2, -1: elements 0, 1, 2); grid[0][1][2] = max t.
        EXPECT_EQ(grid.to_vector(), (std::vector<int>{0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 2, 3}))
            << "bounds_check " << checked;
    }
}

TEST(NegativeIndices, ThroughAFunction) {
    weft::Module m{"neg_function"};
    auto put = m.func("put_last", [](Array<int> out, Int v) { out[-1] = v; });
    auto k = m.kernel("calls", {"rows"}, [&](Array<int, 2> rows) {
        auto t = weft::tid();
        put(rows[t - 2], t + 1);  // rows -2 and -1 are rows 0 and 1
    });
    auto rows = weft::zeros<int>({2, 3}, dev());
    weft::launch(k, 2, rows);
    EXPECT_EQ(rows.to_vector(), (std::vector<int>{0, 0, 1, 0, 0, 2}));
}

// Deterministic targets: `a[-1] += v` is lowered to an accumulation through the target's state,
// which must land on the wrapped element on every device.
TEST(NegativeIndices, DeterministicAccumulationTargets) {
    for (Deterministic mode : {Deterministic::RunToRun, Deterministic::GpuToGpu}) {
        weft::Module m{"neg_accumulate", {.deterministic = mode}};
        auto k = m.kernel("sums", {"v", "out", "top", "bin"},
                          [](Array<float> v, Array<float, 2> out, Array<float> top, Array<int> bin) {
                              auto t = weft::tid();
                              out(-1, -1) += v[t];
                              out[bin[t]][0] += v[t];
                              weft::atomic_max(top, -1, v[t]);
                          });
        const std::vector<float> v = {0.5f, 1.25f, -2.0f, 4.0f, 0.25f, 8.0f};
        const std::vector<int> bin = {-1, -2, 0, 1, -1, -2};
        auto out = weft::zeros<float>({2, 2}, dev());
        auto top = weft::zeros<float>(2, dev());
        weft::launch(k, 6, weft::from_vector(v, dev()), out, top, weft::from_vector(bin, dev()));
        // out(1, 1) sums every value; bins 0 and -2 go to row 0, bins 1 and -1 to row 1.
        EXPECT_EQ(out.to_vector(),
                  (std::vector<float>{1.25f - 2.0f + 8.0f, 0.0f, 0.5f + 4.0f + 0.25f, 12.0f}))
            << weft::deterministic_name(mode);
        EXPECT_EQ(top.to_vector(), (std::vector<float>{0.0f, 8.0f})) << weft::deterministic_name(mode);
    }
}

// Slot counters at a negative index reserve on the wrapped element, in thread order.
TEST(NegativeIndices, DeterministicSlotCounters) {
    for (bool checked : {false, true}) {
        weft::Module m{"neg_slots", {.deterministic = Deterministic::RunToRun, .bounds_check = checked}};
        auto k =
            m.kernel("compact", {"v", "count", "out"}, [](Array<int> v, Array<int> count, Array<int> out) {
                auto t = weft::tid();
                weft::if_(v[t] > 0, [&] {
                    auto slot = weft::atomic_add(count, -1, 1);
                    out[slot] = v[t];
                });
            });
        const std::vector<int> v = {3, -1, 5, 0, 7, 2, -4, 9};
        auto count = weft::from_vector(std::vector<int>{100, 1}, dev());
        auto out = weft::full<int>(8, -9, dev());
        weft::launch(k, 8, weft::from_vector(v, dev()), count, out);
        EXPECT_EQ(count.to_vector(), (std::vector<int>{100, 6})) << "bounds_check " << checked;
        EXPECT_EQ(out.to_vector(), (std::vector<int>{-9, 3, 5, 7, 2, 9, -9, -9}))
            << "bounds_check " << checked;
    }
}

// The same through a kernel-side view of a 2-D counter array: counts[-1] is its last row.
TEST(NegativeIndices, DeterministicSlotCountersThroughAView) {
    weft::Module m{"neg_slots_view", {.deterministic = Deterministic::RunToRun}};
    auto k =
        m.kernel("compact", {"v", "counts", "out"}, [](Array<int> v, Array<int, 2> counts, Array<int> out) {
            auto t = weft::tid();
            weft::if_(v[t] > 0, [&] {
                auto slot = weft::atomic_add(counts[-1], -2, 1);
                out[slot] = v[t];
            });
        });
    const std::vector<int> v = {3, -1, 5, 0, 7, 2, -4, 9};
    auto counts = weft::from_vector(std::vector<int>{50, 60, 70, 80, 2, 90}, {2, 3}, dev());
    auto out = weft::full<int>(8, -9, dev());
    weft::launch(k, 8, weft::from_vector(v, dev()), counts, out);
    EXPECT_EQ(counts.to_vector(), (std::vector<int>{50, 60, 70, 80, 7, 90}));
    EXPECT_EQ(out.to_vector(), (std::vector<int>{-9, -9, 3, 5, 7, 2, 9, -9}));

    // A constant element of a negative-indexed row: the counter is counts(1, 0), not counts(0, 0).
    weft::Module n{"neg_slots_view_constant", {.deterministic = Deterministic::RunToRun}};
    auto first =
        n.kernel("compact", {"v", "counts", "out"}, [](Array<int> v, Array<int, 2> counts, Array<int> out) {
            auto t = weft::tid();
            weft::if_(v[t] > 0, [&] { out[weft::atomic_add(counts[-1], 0, 1)] = v[t]; });
        });
    counts = weft::from_vector(std::vector<int>{50, 60, 70, 1, 80, 90}, {2, 3}, dev());
    out = weft::full<int>(8, -9, dev());
    weft::launch(first, 8, weft::from_vector(v, dev()), counts, out);
    EXPECT_EQ(counts.to_vector(), (std::vector<int>{50, 60, 70, 6, 80, 90}));
    EXPECT_EQ(out.to_vector(), (std::vector<int>{-9, 3, 5, 7, 2, 9, -9, -9}));
}

// With bounds checks, an index below -extent is still out of bounds (and nothing is written);
// -extent itself is the first element.
TEST(NegativeIndices, BoundsAreCheckedAfterTheWrap) {
    weft::Module m{"neg_bounds", {.bounds_check = true}};
    int store_line = 0, view_line = 0;
    auto k = m.kernel("put", {"out", "i"}, [&](Array<int> out, Int i) { store_line = __LINE__, out[i] = 1; });
    auto v = m.kernel("row", {"grid", "r"},
                      [&](Array<int, 2> grid, Int r) { view_line = __LINE__, grid[r][0] = 1; });
    auto out = weft::zeros<int>(5, dev());
    weft::launch(k, 1, out, -5);
    EXPECT_EQ(out.to_vector(), (std::vector<int>{1, 0, 0, 0, 0}));
    try {
        weft::launch(k, 1, out, -6);
        ADD_FAILURE() << "index -6 of 5 elements was not reported";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.line(), static_cast<uint32_t>(store_line)) << e.what();
        EXPECT_NE(e.message().find("index -6 is out of bounds for dimension 0 of array 'out' (extent 5; a "
                                   "negative index counts from the end, down to -5)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(out.to_vector(), (std::vector<int>{1, 0, 0, 0, 0}));
    auto grid = weft::zeros<int>({2, 2}, dev());
    try {
        weft::launch(v, 1, grid, -3);
        ADD_FAILURE() << "view index -3 of 2 rows was not reported";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.line(), static_cast<uint32_t>(view_line)) << e.what();
        EXPECT_NE(e.message().find("index -3 is out of bounds for dimension 0 of array 'grid' (extent 2"),
                  std::string::npos)
            << e.what();
    }
    weft::launch(v, 1, grid, -2);
    EXPECT_EQ(grid.to_vector(), (std::vector<int>{1, 0, 0, 0}));
}

// The wrap costs a compare and select, paid only where an index can be negative.
TEST(NegativeIndices, NoWrapWhereAnIndexCannotBeNegative) {
    weft::Module m{"neg_codegen"};
    m.kernel("saxpy", {"a", "x", "y"}, [](Float a, Array<float> x, Array<float> y) {
        auto i = weft::tid();
        y[i] = a * x[i] + y[i];
        y[0] = y[1];
        weft::for_(0, 4, 1, [&](Int j) { y[j * 2 + i] = x[weft::cast<uint32_t>(i) & 3u]; });
    });
    const std::string plain = m.generated_source(dev());
    EXPECT_EQ(plain.find("wf::wrap"), std::string::npos) << plain;
    m.set_options({.bounds_check = true});
    const std::string checked = m.generated_source(dev());
    EXPECT_EQ(checked.find("wf::checked<1u>"), std::string::npos) << checked;
    EXPECT_NE(checked.find("wf::checked<0u>"), std::string::npos) << checked;

    weft::Module n{"neg_codegen_wraps"};
    n.kernel("shifted", {"x", "k"}, [](Array<float> x, Int k) { x[weft::tid() - k] = 1.0f; });
    EXPECT_NE(n.generated_source(dev()).find("wf::wrap"), std::string::npos) << n.generated_source(dev());
}

}  // namespace
