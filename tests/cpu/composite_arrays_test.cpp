// Arrays of composite elements in kernels (docs/design/0015): whole and per-component loads,
// stores and atomics of every element type, composite deterministic targets (each component the
// exact sum, the same bits on every strategy and worker count), gradients and graph capture.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <vector>
#include <weft/weft.hpp>

#include "support/composite_bits.hpp"
#include "support/deterministic_cases.hpp"
#include "support/errors.hpp"
#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::test::bits;

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::test::error_from;
using weft::test::test_device;

// `e` names this file, `line` and the message piece `what`.
void expect_error_at(const weft::Error& e, int line, const std::string& what) {
    EXPECT_NE(e.message().find(what), std::string::npos) << e.message();
    EXPECT_NE(e.file().find("composite_arrays_test.cpp"), std::string::npos) << e.file();
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.message();
}

// A host value whose components are c0 + 0, c0 + 1, ... (in the packed order).
template <class E>
weft::host_t<E> counting(double c0) {
    using T = typename weft::Layout<E>::scalar;
    constexpr int n = weft::components_of<E>;
    T c[n];
    for (int i = 0; i < n; ++i) c[i] = T(c0 + i);
    weft::host_t<E> h;
    static_assert(sizeof(h) == sizeof(c));
    std::memcpy(&h, c, sizeof(c));
    return h;
}
template <class E>
std::vector<typename weft::Layout<E>::scalar> components(const weft::host_t<E>& h) {
    std::vector<typename weft::Layout<E>::scalar> c(weft::components_of<E>);
    std::memcpy(c.data(), &h, sizeof(h));
    return c;
}

template <class E>
class CompositeElements : public ::testing::Test {};
using ElementTypes =
    ::testing::Types<weft::vec<2, weft::float16>, weft::vec<3, weft::bfloat16>, weft::vec<4, weft::float16>,
                     weft::vec2, weft::vec3, weft::vec4, weft::vec3d, weft::vec4d, weft::vec2i, weft::vec3i,
                     weft::vec4i, weft::mat22, weft::mat33, weft::mat44, weft::mat33d, weft::quat,
                     weft::quatd, weft::transform, weft::transformd>;
TYPED_TEST_SUITE(CompositeElements, ElementTypes);

// out[i] = in[i] whole, and row[i] gets component c of in[i] through e[c] reads: every component
// lands where the packed layout puts it, on a 2-D array and through a transposed view.
TYPED_TEST(CompositeElements, LoadsAndStoresWholeElementsOfTwoDimensionalArrays) {
    using E = TypeParam;
    weft::Module m{"composite_copy"};
    auto copy = m.kernel("copy", [](Array<E, 2> in, Array<E, 2> out) {
        auto i = weft::tid();
        E e = in(i, 0);  // a whole element as a value
        out(i, 0) = e;
        weft::for_(1, in.shape(1), [&](weft::Int j) { out(i, j) = in(i, j); });
    });
    const auto dev = test_device();
    std::vector<weft::host_t<E>> host;
    for (int i = 0; i < 6; ++i) host.push_back(counting<E>(10.0 * i));
    auto in = weft::from_vector<E>(host, weft::Shape{3, 2}, dev);
    auto out = weft::zeros<E>(weft::Shape{3, 2}, dev);
    weft::launch(copy, 3, in, out);
    const auto got = out.to_vector();
    for (int i = 0; i < 6; ++i) EXPECT_EQ(components<E>(got[i]), components<E>(host[i])) << i;

    // The transposed view: element (i, j) of the view is element (j, i) of `in`.
    auto back = weft::zeros<E>(weft::Shape{2, 3}, dev);
    weft::launch(copy, 2, in.transpose(), back);
    const auto t = back.to_vector();
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) EXPECT_EQ(components<E>(t[r * 3 + c]), components<E>(host[c * 2 + r]));
}

TEST(CompositeArrays, ComponentWritesReachOneComponent) {
    weft::Module m{"composite_components"};
    auto k = m.kernel("k", [](Array<weft::vec3> v, Array<weft::mat33> mats, Array<weft::transform> xf,
                              Array<weft::quat> q) {
        auto i = weft::tid();
        v[i].y = 7.0f;
        v[i][2] += 1.5f;
        v[i].x -= 0.5f;
        mats[i][1][2] = 9.0f;
        mats[i][2][0] += 2.0f;
        xf[i].p = weft::vec3(1.0f, 2.0f, 3.0f);
        xf[i].q.w = 4.0f;
        q[i].z = -1.0f;
        auto named = v[i];  // a named element is a local: writing it leaves the array alone
        named.x = 100.0f;
    });
    const auto dev = test_device();
    auto v = weft::zeros<weft::vec3>(2, dev);
    auto mats = weft::zeros<weft::mat33>(2, dev);
    auto xf = weft::zeros<weft::transform>(2, dev);
    auto q = weft::zeros<weft::quat>(2, dev);
    weft::launch(k, 2, v, mats, xf, q);
    for (const auto& e : v.to_vector()) EXPECT_EQ(e, (weft::host::vec3f{-0.5f, 7.0f, 1.5f}));
    for (const auto& e : mats.to_vector()) {
        weft::host::mat33f want;
        want[1][2] = 9.0f;
        want[2][0] = 2.0f;
        EXPECT_EQ(e, want);
    }
    for (const auto& e : xf.to_vector()) {
        EXPECT_EQ(e.p, (weft::host::vec3f{1.0f, 2.0f, 3.0f}));
        EXPECT_EQ(e.q, (weft::host::quatf{0.0f, 0.0f, 0.0f, 4.0f}));
    }
    for (const auto& e : q.to_vector()) EXPECT_EQ(e, (weft::host::quatf{0.0f, 0.0f, -1.0f, 0.0f}));
}

TEST(CompositeArrays, ComponentViewIsTheComponentInKernels) {
    weft::Module m{"composite_component_view"};
    auto twice = m.kernel("twice", [](Array<float> c) {
        auto i = weft::tid();
        c[i] = c[i] * 2.0f;
    });
    const auto dev = test_device();
    auto v = weft::from_vector<weft::vec3>({{1, 2, 3}, {4, 5, 6}}, dev);
    weft::launch(twice, 2, v.component(1));
    EXPECT_EQ(v.to_vector(), (std::vector<weft::host::vec3f>{{1, 4, 3}, {4, 10, 6}}));
}

// Scatter of vec3 contributions with random indices: every component of every output is the
// exact sum (min/max under the total order), the same on every strategy and worker count.
struct Scatter {
    std::vector<int> index;
    std::vector<weft::host::vec3f> values;
    std::vector<weft::host::vec3f> initial;
};
Scatter scatter_case(int threads, int outputs, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Scatter s;
    for (int t = 0; t < threads; ++t) {
        s.index.push_back(static_cast<int>(rng() % static_cast<uint64_t>(outputs)));
        weft::host::vec3f v;
        for (int c = 0; c < 3; ++c) v[c] = weft::test::random_value<float>(rng, -30, 20);
        s.values.push_back(v);
    }
    for (int o = 0; o < outputs; ++o) s.initial.push_back({0.5f * o, -1.0f, 3.0f});
    return s;
}
std::vector<weft::host::vec3f> oracle(weft::test::Reduction r, const Scatter& s, bool negate) {
    std::vector<weft::host::vec3f> out(s.initial.size());
    for (int c = 0; c < 3; ++c) {
        std::vector<float> init, vals;
        for (const auto& e : s.initial) init.push_back(e[c]);
        for (const auto& e : s.values) vals.push_back(negate ? -e[c] : e[c]);
        const auto got = weft::test::reduce_by_destination(r, init, s.index, vals);
        for (size_t o = 0; o < out.size(); ++o) out[o][c] = got[o];
    }
    return out;
}

TEST(CompositeArrays, DeterministicVec3TargetsAreExactPerComponentOnEveryStrategyAndWorkerCount) {
    const auto dev = test_device();
    const Scatter s = scatter_case(3000, 37, 7);
    const auto sum = oracle(weft::test::Reduction::Sum, s, false);
    const auto difference = oracle(weft::test::Reduction::Sum, s, true);
    const auto low = oracle(weft::test::Reduction::Min, s, false);
    const auto high = oracle(weft::test::Reduction::Max, s, false);
    for (const auto& config : weft::test::kConfigs) {
        for (int workers : {1, 2, 7}) {
            weft::Module m{"composite_det",
                           {.deterministic = config.mode,
                            .deterministic_strategy = config.strategy,
                            .cpu_threads = workers}};
            auto add = m.kernel("add", [](Array<int> idx, Array<weft::vec3> v, Array<weft::vec3> out) {
                auto i = weft::tid();
                out[idx[i]] += v[i];
            });
            auto sub = m.kernel("sub", [](Array<int> idx, Array<weft::vec3> v, Array<weft::vec3> out) {
                auto i = weft::tid();
                weft::atomic_sub(out, idx[i], v[i]);
            });
            auto mn = m.kernel("mn", [](Array<int> idx, Array<weft::vec3> v, Array<weft::vec3> out) {
                auto i = weft::tid();
                weft::atomic_min(out, idx[i], v[i]);
            });
            auto mx = m.kernel("mx", [](Array<int> idx, Array<weft::vec3> v, Array<weft::vec3> out) {
                auto i = weft::tid();
                weft::atomic_max(out, idx[i], v[i]);
            });
            auto idx = weft::from_vector(s.index, dev);
            auto v = weft::from_vector<weft::vec3>(s.values, dev);
            auto run = [&](const auto& kernel) {
                auto out = weft::from_vector<weft::vec3>(s.initial, dev);
                weft::launch(kernel, static_cast<int64_t>(s.index.size()), idx, v, out);
                return out.to_vector();
            };
            const std::string where = std::string(config.name) + " workers " + std::to_string(workers);
            EXPECT_EQ(bits(run(add)), bits(sum)) << where;
            EXPECT_EQ(bits(run(add)), bits(sum)) << where << " (again)";
            EXPECT_EQ(bits(run(sub)), bits(difference)) << where;
            EXPECT_EQ(bits(run(mn)), bits(low)) << where;
            EXPECT_EQ(bits(run(mx)), bits(high)) << where;
        }
    }
}

TEST(CompositeArrays, DeterministicMatrixComponentAndWholeTargetsAreExactSums) {
    const auto dev = test_device();
    std::mt19937_64 rng(11);
    const int threads = 2000;
    std::vector<float> a;
    for (int t = 0; t < threads * 9; ++t) a.push_back(weft::test::random_value<float>(rng, -20, 10));
    for (const auto& config : weft::test::kConfigs) {
        weft::Module m{"composite_det_mat",
                       {.deterministic = config.mode, .deterministic_strategy = config.strategy}};
        auto k = m.kernel("k", [](Array<weft::mat33> src, Array<weft::mat33> out) {
            auto i = weft::tid();
            out[i % 5] += src[i];
            out[5][1][2] += src[i][0][0];  // one component of one element
        });
        std::vector<weft::host::mat33f> src(threads);
        std::memcpy(src.data(), a.data(), a.size() * 4);
        auto s = weft::from_vector<weft::mat33>(src, dev);
        auto out = weft::zeros<weft::mat33>(6, dev);
        weft::launch(k, threads, s, out);
        const auto got = out.to_vector();
        for (int o = 0; o < 5; ++o)
            for (int e = 0; e < 9; ++e) {
                std::vector<float> c;
                for (int t = o; t < threads; t += 5) c.push_back(a[t * 9 + e]);
                EXPECT_EQ(got[o][e / 3][e % 3], weft::test::exact_sum(0.0f, c)) << config.name << " " << o;
            }
        std::vector<float> c;
        for (int t = 0; t < threads; ++t) c.push_back(a[t * 9]);
        EXPECT_EQ(got[5][1][2], weft::test::exact_sum(0.0f, c)) << config.name;
        EXPECT_EQ(got[5][0][0], 0.0f);
    }
}

TEST(CompositeArrays, PlainAtomicsReturnThePreviousElement) {
    weft::Module m{"composite_old"};
    auto k = m.kernel("k", [](Array<weft::vec3i> counters, Array<weft::vec3i> old) {
        auto i = weft::tid();
        old[i] = weft::atomic_add(counters, 0, weft::vec3i(1, 2, 3));
    });
    const auto dev = test_device();
    auto counters = weft::zeros<weft::vec3i>(1, dev);
    auto old = weft::zeros<weft::vec3i>(64, dev);
    weft::launch(k, 64, counters, old);
    EXPECT_EQ(counters.to_vector()[0], (weft::host::vec3i{64, 128, 192}));
    std::vector<int> seen(64, 0);
    for (const auto& o : old.to_vector()) {
        ASSERT_EQ(o.y, 2 * o.x);
        ASSERT_EQ(o.z, 3 * o.x);
        ++seen.at(static_cast<size_t>(o.x));
    }
    for (int s : seen) EXPECT_EQ(s, 1);
}

TEST(CompositeArrays, ComponentIndexOutOfRangeIsAnErrorAtTheUsersLine) {
    weft::Module m{"composite_bad_component"};
    int line = 0;
    m.kernel("k", [&](Array<weft::vec3> v) {
        line = __LINE__ + 1;
        v[weft::tid()][3] = 1.0f;
    });
    const weft::Error e = error_from([&] { (void)m.ir(); });
    expect_error_at(e, line, "vector component index 3 is out of range");
}

TEST(CompositeArrays, IntegerCompositeMinIsRejected) {
    weft::Module m{"composite_int_min"};
    int line = 0;
    m.kernel("k", [&](Array<weft::vec3i> v) {
        line = __LINE__ + 1;
        weft::atomic_min(v, 0, weft::vec3i(1, 2, 3));
    });
    const weft::Error e = error_from([&] { (void)m.ir(); });
    expect_error_at(e, line, "atomic_min of an integer composite is not supported");
}

TEST(CompositeArrays, AConsumedIntegerCompositeAtomicIsRejectedInDeterministicModules) {
    weft::Module m{"composite_int_consumed", {.deterministic = Deterministic::RunToRun}};
    int line = 0;
    m.kernel("k", [&](Array<weft::vec3i> counters, Array<weft::vec3i> old) {
        line = __LINE__ + 1;
        old[weft::tid()] = weft::atomic_add(counters, 0, weft::vec3i(1, 2, 3));
    });
    const weft::Error e = error_from([&] { (void)m.ir(); });
    expect_error_at(e, line, "integer composite array 'arg0' is used");
}

TEST(CompositeArrays, AnArrayOfOtherComponentsIsALaunchError) {
    weft::Module m{"composite_wrong_array"};
    auto k = m.kernel("k", {"v"}, [](Array<weft::vec3> v) { v[weft::tid()].x = 1.0f; });
    const auto dev = test_device();
    const weft::AnyArray four = weft::zeros<weft::vec4>(4, dev);
    const int line = __LINE__ + 1;
    expect_error_at(error_from([&] { weft::launch(*k.state(), 4, {four}); }), line,
                    "3 float32 components per element");
}

TEST(CompositeArrays, GradientsOfVec3ArraysAreVec3Arrays) {
    for (Deterministic mode : {Deterministic::NotGuaranteed, Deterministic::RunToRun}) {
        weft::Module m{"composite_grad", {.deterministic = mode}};
        // loss += |x_i|^2 + x_i . w: d/dx_i = 2 x_i + w
        auto k = m.kernel("k", [](Array<weft::vec3d> x, Array<weft::vec3d> w, Array<double> loss) {
            auto i = weft::tid();
            weft::vec3d p = x[i];
            loss[0] += weft::dot(p, p) + weft::dot(p, weft::vec3d(w[0]));
        });
        const auto dev = test_device();
        auto x = weft::from_vector<weft::vec3d>({{1, 2, 3}, {-1, 0.5, 4}}, dev, weft::requires_grad);
        auto w = weft::from_vector<weft::vec3d>({{0.25, -2, 8}}, dev);
        auto loss = weft::zeros<double>(1, dev, weft::requires_grad);
        weft::Tape tape;
        tape.start();
        weft::launch(k, 2, x, w, loss);
        tape.stop();
        tape.backward(loss);
        const weft::DeviceArray<weft::vec3d> g = x.grad();
        EXPECT_EQ(g.components(), 3);
        EXPECT_EQ(g.to_vector(), (std::vector<weft::host::vec3d>{{2.25, 2, 14}, {-1.75, -1, 16}}));
    }
}

TEST(CompositeArrays, CapturedCompositeLaunchesReplay) {
    weft::Module m{"composite_graph", {.deterministic = Deterministic::RunToRun}};
    auto step = m.kernel("step", [](Array<weft::vec3> x, Array<weft::vec3> v, Array<weft::vec3> sum) {
        auto i = weft::tid();
        x[i] = x[i] + v[i];
        sum[0] += x[i];
    });
    const auto dev = test_device();
    auto x = weft::zeros<weft::vec3>(4, dev);
    auto v = weft::from_vector<weft::vec3>({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}}, dev);
    auto sum = weft::zeros<weft::vec3>(1, dev);
    weft::Graph g = weft::capture(dev, [&] { weft::launch(step, 4, x, v, sum); });
    for (int r = 0; r < 3; ++r) g.launch();
    weft::synchronize(dev);
    // The capture itself may or may not run the work; x after n runs is n v, sum the sum over runs.
    const auto xs = x.to_vector();
    const float runs = xs[3].x;
    EXPECT_TRUE(runs == 3.0f || runs == 4.0f) << runs;
    const float total = runs * (runs + 1) / 2;  // sum over runs r of r (per unit component)
    EXPECT_EQ(sum.to_vector()[0], (weft::host::vec3f{2 * total, 2 * total, 2 * total}));
}

// GpuToGpu: a kernel of composite builtins that accumulates into vec3, mat33 and quat targets
// gives the same bits on the GPU and on the CPU (runs under the gpu label).
TEST(CompositeArrays, GpuToGpuCpuEqualsGpu) {
    if (test_device().is_cpu()) GTEST_SKIP() << "compares the GPU with the CPU; runs under the gpu label";
    weft::Module m{"composite_arrays_g2g", {.deterministic = Deterministic::GpuToGpu}};
    auto k = m.kernel("k", [](Array<int> idx, Array<weft::vec3> v, Array<weft::transform> xf,
                              Array<weft::vec3> sums, Array<weft::mat33> outer, Array<weft::quat> turns) {
        auto i = weft::tid();
        weft::vec3 p = v[i];
        const weft::transform t(xf[i].p, weft::normalize(weft::quat(xf[i].q)));
        const weft::vec3 moved = weft::transform_point(t, p);
        sums[idx[i]] += weft::cross(moved, p) / (1.0f + weft::length(p));
        outer[idx[i] % 3] += weft::mat33(moved, p, weft::normalize(moved));
        turns[idx[i] % 2] += weft::quat(t.q);
    });
    const int threads = 4096;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<float> d(-2, 2);
    std::vector<int> index;
    std::vector<weft::host::vec3f> v;
    std::vector<weft::host::transformf> xf;
    for (int t = 0; t < threads; ++t) {
        index.push_back(static_cast<int>(rng() % 17));
        v.push_back({d(rng), d(rng), d(rng)});
        xf.push_back({{d(rng), d(rng), d(rng)}, {d(rng), d(rng), d(rng), d(rng)}});
    }
    auto run = [&](weft::Device dev) {
        auto sums = weft::zeros<weft::vec3>(17, dev);
        auto outer = weft::zeros<weft::mat33>(3, dev);
        auto turns = weft::zeros<weft::quat>(2, dev);
        weft::launch(k, threads, weft::from_vector(index, dev), weft::from_vector<weft::vec3>(v, dev),
                     weft::from_vector<weft::transform>(xf, dev), sums, outer, turns);
        std::vector<uint32_t> b = bits(sums.to_vector());
        for (const auto& o : outer.to_vector())
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) b.push_back(std::bit_cast<uint32_t>(o[r][c]));
        for (const auto& q : turns.to_vector())
            for (float x : {q.x, q.y, q.z, q.w}) b.push_back(std::bit_cast<uint32_t>(x));
        return b;
    };
    EXPECT_EQ(run(test_device()), run(weft::device("cpu")));
}

}  // namespace
