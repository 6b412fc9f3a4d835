// Deterministic backward passes: the spec's gather, whose backward scatters into the values'
// gradient, repeats bit for bit and equals the exact sum of the contributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>
#include <weft/weft.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::test::exact_sum;
using weft::test::same_bits;

weft::Device dev() {
    return weft::test::test_device();
}

template <class T>
auto gather_kernel(Deterministic mode) {
    return weft::unique_kernel("gather", {.deterministic = mode}, {"values", "indices", "out"},
                               [](Array<T> values, Array<int> indices, Array<T> out) {
                                   auto tid = weft::tid();
                                   out[tid] = values[indices[tid]];
                               });
}

// Output gradients over many binades, so that the order of a float sum changes its result.
template <class T>
std::vector<T> spread_values(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-24, 24);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(std::ldexp(mantissa(rng), exponent(rng)));
    return v;
}

template <class T>
void check_gather_backward(Deterministic mode, int sources) {
    const int threads = 4096;
    auto kernel = gather_kernel<T>(mode);
    std::mt19937 rng(7);
    std::vector<int> idx(threads);
    for (int& i : idx) i = static_cast<int>(rng() % static_cast<unsigned>(sources));
    const std::vector<T> out_grad = spread_values<T>(threads, 11);
    auto values = weft::zeros<T>(sources, dev(), weft::requires_grad);
    auto indices = weft::from_vector(idx, dev());
    auto out = weft::zeros<T>(threads, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(kernel, threads, values, indices, out);
    tape.stop();
    std::vector<std::vector<T>> contributions(static_cast<size_t>(sources));
    for (int t = 0; t < threads; ++t) contributions[static_cast<size_t>(idx[t])].push_back(out_grad[t]);
    std::vector<T> first;
    for (int run = 0; run < 4; ++run) {
        tape.zero();
        out.grad().copy_from_host(out_grad.data(), out_grad.size());
        tape.backward();
        const std::vector<T> g = values.grad().to_vector();
        if (run == 0) first = g;
        for (int s = 0; s < sources; ++s) {
            ASSERT_TRUE(same_bits(g[s], first[s])) << "run " << run << ", source " << s;
            ASSERT_TRUE(same_bits(g[s], exact_sum(T(0), contributions[static_cast<size_t>(s)])))
                << "source " << s << ": " << g[s];
        }
    }
}

TEST(DeterministicBackward, GatherRunToRunFloat32) {
    check_gather_backward<float>(Deterministic::RunToRun, 64);
    check_gather_backward<float>(Deterministic::RunToRun, 1);
}
TEST(DeterministicBackward, GatherGpuToGpuFloat32) {
    check_gather_backward<float>(Deterministic::GpuToGpu, 64);
}
TEST(DeterministicBackward, GatherRunToRunFloat64) {
    check_gather_backward<double>(Deterministic::RunToRun, 64);
}
TEST(DeterministicBackward, GatherGpuToGpuFloat64) {
    check_gather_backward<double>(Deterministic::GpuToGpu, 1);
}

// Half-precision gradients: the adjoint's arithmetic and accumulation in float16 and bfloat16
// (each source's gradient is twice its reader count, exact in both types).
template <class H>
void check_half_gather(Deterministic mode) {
    auto kernel = weft::unique_kernel("gather_half", {.deterministic = mode},
                                      [](Array<H> values, Array<int> indices, Array<H> out) {
                                          auto t = weft::tid();
                                          weft::Scalar<H> v = values[indices[t]];
                                          out[t] = v + v;
                                      });
    const int threads = 300;
    std::vector<int> idx(threads);
    for (int t = 0; t < threads; ++t) idx[t] = (t * 13) % 7;
    auto values = weft::full<H>(7, H(1.0), dev(), weft::requires_grad);
    auto indices = weft::from_vector(idx, dev());
    auto out = weft::zeros<H>(threads, dev(), weft::requires_grad);
    out.grad().fill_(H(1.0));
    weft::Tape tape;
    tape.start();
    weft::launch(kernel, threads, values, indices, out);
    tape.stop();
    tape.backward();
    const std::vector<H> g = values.grad().to_vector();
    for (int s = 0; s < 7; ++s) {
        const int readers = static_cast<int>(std::count(idx.begin(), idx.end(), s));
        EXPECT_EQ(static_cast<float>(g[s]), 2.0f * static_cast<float>(readers)) << s;
    }
}

TEST(DeterministicBackward, HalfPrecisionGather) {
    check_half_gather<weft::float16>(Deterministic::RunToRun);
    check_half_gather<weft::bfloat16>(Deterministic::GpuToGpu);
    check_half_gather<weft::float16>(Deterministic::NotGuaranteed);
}

// An input without a gradient makes its backward target inactive; the other stays exact.
TEST(DeterministicBackward, AMissingInputGradientLeavesTheOtherExact) {
    static auto k =
        weft::unique_kernel("two_gathers", {.deterministic = Deterministic::RunToRun},
                            [](Array<float> a, Array<float> b, Array<int> indices, Array<float> out) {
                                auto t = weft::tid();
                                out[t] = a[indices[t]] * 2.0f + b[indices[t]];
                            });
    const int threads = 2048;
    std::vector<int> idx(threads);
    for (int t = 0; t < threads; ++t) idx[t] = (t * 7) % 5;
    const std::vector<float> og = spread_values<float>(threads, 3);
    auto a = weft::zeros<float>(5, dev());
    auto b = weft::zeros<float>(5, dev());
    auto indices = weft::from_vector(idx, dev());
    auto out = weft::zeros<float>(threads, dev());
    auto b_grad = weft::zeros<float>(5, dev());
    auto out_grad = weft::from_vector(og, dev());
    weft::launch_adjoint(k, threads, {weft::AnyArray(), b_grad, weft::AnyArray(), out_grad}, a, b, indices,
                         out);
    std::vector<std::vector<float>> contributions(5);
    for (int t = 0; t < threads; ++t) contributions[static_cast<size_t>(idx[t])].push_back(og[t]);
    const std::vector<float> g = b_grad.to_vector();
    for (int s = 0; s < 5; ++s) EXPECT_TRUE(same_bits(g[s], exact_sum(0.0f, contributions[s]))) << s;
}

// The backward is recompiled with the module: after the mode goes off and on it is exact again.
TEST(DeterministicBackward, RightAfterTheModeIsToggled) {
    weft::Module m{"autodiff_toggle", {.deterministic = Deterministic::RunToRun}};
    auto k = m.kernel("gather", [](Array<float> values, Array<int> indices, Array<float> out) {
        out[weft::tid()] = values[indices[weft::tid()]];
    });
    const int threads = 1024;
    const std::vector<float> og = spread_values<float>(threads, 5);
    std::vector<float> contributions(og);
    auto values = weft::zeros<float>(1, dev());
    auto indices = weft::zeros<int>(threads, dev());
    auto out = weft::zeros<float>(threads, dev());
    auto out_grad = weft::from_vector(og, dev());
    const float exact = exact_sum(0.0f, og);
    for (Deterministic mode :
         {Deterministic::RunToRun, Deterministic::NotGuaranteed, Deterministic::RunToRun}) {
        m.set_options({.deterministic = mode});
        auto g = weft::zeros<float>(1, dev());
        weft::launch_adjoint(k, threads, {g, weft::AnyArray(), out_grad}, values, indices, out);
        const float got = g.to_vector()[0];
        if (mode == Deterministic::RunToRun)
            EXPECT_TRUE(same_bits(got, exact)) << got << " vs " << exact;
        else
            EXPECT_NEAR(got, exact, 1e-3f * std::abs(exact) + 1e-3f);
    }
}

}  // namespace
