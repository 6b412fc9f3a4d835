// Serial CPU launches (one chunk, the atomics' targets to themselves: wf::Launch::serial) give the
// results of atomic instructions: plain atomics the thread-order results, deterministic sums the
// correctly rounded exact sums, bit for bit what a launch over several workers gives, also where
// a serial window carries or spills (contributions over a wide range of magnitudes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>
#include <weft/weft.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;

const weft::Device cpu = weft::Device::cpu();

// `threads` contributions of `values[i]` into `out[bins[i]]`: in a module of one worker (every
// launch serial) and of three (launches of many threads run in chunks, with atomics).
template <class T>
weft::Kernel<Array<T>, Array<int>, Array<T>> scatter_kernel(const char* name, Deterministic mode,
                                                            weft::DeterministicStrategy strategy,
                                                            int workers) {
    return weft::unique_kernel(
        name, {.deterministic = mode, .deterministic_strategy = strategy, .cpu_threads = workers},
        {"values", "bins", "out"}, [](Array<T> values, Array<int> bins, Array<T> out) {
            auto i = weft::tid();
            out[bins[i]] += values[i];
        });
}

template <class T>
struct Scatter {
    weft::Kernel<Array<T>, Array<int>, Array<T>> serial, chunked;
    explicit Scatter(Deterministic mode,
                     weft::DeterministicStrategy strategy = weft::DeterministicStrategy::Auto)
        : serial(scatter_kernel<T>("serial_scatter", mode, strategy, 1)),
          chunked(scatter_kernel<T>("chunked_scatter", mode, strategy, 3)) {}
};

template <class T>
std::vector<T> run(const weft::Kernel<Array<T>, Array<int>, Array<T>>& k, const std::vector<T>& values,
                   const std::vector<int>& bins, int outputs) {
    auto v = weft::from_vector(values, cpu);
    auto b = weft::from_vector(bins, cpu);
    auto out = weft::zeros<T>(outputs, cpu);
    weft::launch(k, static_cast<int64_t>(values.size()), v, b, out);
    return out.to_vector();
}

// Values over 2^-40 .. 2^40 of both signs: far wider than a window, so contributions spill.
template <class T>
std::vector<T> wide_values(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<T> v(n);
    for (T& x : v)
        x = static_cast<T>(std::ldexp(std::uniform_real_distribution<double>(-1.0, 1.0)(rng),
                                      static_cast<int>(rng() % 81) - 40));
    return v;
}

template <class T>
void expect_exact(const std::vector<T>& got, const std::vector<T>& values, const std::vector<int>& bins) {
    std::vector<std::vector<T>> per(got.size());
    for (size_t i = 0; i < values.size(); ++i) per[bins[i]].push_back(values[i]);
    for (size_t o = 0; o < got.size(); ++o)
        ASSERT_TRUE(weft::test::same_value(got[o], weft::test::exact_sum(T(0), per[o])))
            << "output " << o << ": " << weft::test::describe(got[o]) << " instead of "
            << weft::test::describe(weft::test::exact_sum(T(0), per[o]));
}

TEST(SerialLaunches, DeterministicSumsOverWideMagnitudesAreExactAndMatchChunkedLaunches) {
    WEFT_SKIP_UNLESS_CPU();
    for (const auto strategy : {weft::DeterministicStrategy::Auto, weft::DeterministicStrategy::Compact,
                                weft::DeterministicStrategy::Exact}) {
        const Scatter<float> k(Deterministic::RunToRun, strategy);
        for (const int outputs : {1, 7, 4096}) {
            const std::vector<float> values = wide_values<float>(20000, 3 + outputs);
            std::vector<int> bins(values.size());
            for (size_t i = 0; i < bins.size(); ++i) bins[i] = static_cast<int>((i * 2654435761u) % outputs);
            const std::vector<float> serial = run(k.serial, values, bins, outputs);
            expect_exact(serial, values, bins);
            const std::vector<float> chunked = run(k.chunked, values, bins, outputs);
            for (int o = 0; o < outputs; ++o)
                ASSERT_TRUE(weft::test::same_bits(serial[o], chunked[o])) << "output " << o;
        }
    }
}

// Contributions whose lowest bit lies the whole span (38) above the window's anchor fill its 62
// bits in a few adds: the window carries into the spill, and the sum stays exact.
TEST(SerialLaunches, ASerialWindowCarriesWithoutLosingBits) {
    WEFT_SKIP_UNLESS_CPU();
    const Scatter<float> k(Deterministic::RunToRun, weft::DeterministicStrategy::Compact);
    std::vector<float> values{1.0f};
    // (2^24 - 1) * 2^-9: its lowest bit 14 above 1.0's, 38 above the serial anchor (24 below 1.0's).
    const float big = 16777215.0f / 512.0f;
    for (int i = 0; i < 5000; ++i) values.push_back(i % 3 == 0 ? -big : big);
    values.push_back(0.75f);
    const std::vector<int> bins(values.size(), 0);
    const std::vector<float> serial = run(k.serial, values, bins, 1);
    expect_exact(serial, values, bins);
    EXPECT_TRUE(weft::test::same_bits(serial[0], run(k.chunked, values, bins, 1)[0]));
}

TEST(SerialLaunches, Float64AndHalfSumsMatchChunkedLaunches) {
    WEFT_SKIP_UNLESS_CPU();
    {
        const Scatter<double> k(Deterministic::RunToRun);
        const std::vector<double> values = wide_values<double>(5000, 11);
        std::vector<int> bins(values.size());
        for (size_t i = 0; i < bins.size(); ++i) bins[i] = static_cast<int>(i % 13);
        const std::vector<double> serial = run(k.serial, values, bins, 13);
        expect_exact(serial, values, bins);
        EXPECT_EQ(serial, run(k.chunked, values, bins, 13));
    }
    {
        const Scatter<weft::float16> k(Deterministic::RunToRun);
        std::vector<weft::float16> values;
        for (const float v : wide_values<float>(5000, 12))
            values.push_back(weft::float16(std::ldexp(v, -30)));
        std::vector<int> bins(values.size());
        for (size_t i = 0; i < bins.size(); ++i) bins[i] = static_cast<int>(i % 5);
        const std::vector<weft::float16> serial = run(k.serial, values, bins, 5);
        const std::vector<weft::float16> chunked = run(k.chunked, values, bins, 5);
        for (int o = 0; o < 5; ++o) EXPECT_EQ(serial[o].bits, chunked[o].bits) << "output " << o;
    }
}

// Plain atomics of a serial launch: the thread-order float sum, exact integer results, and the
// values atomics return (a counter handing out each position once, in thread order).
TEST(SerialLaunches, PlainAtomicsGiveThreadOrderResults) {
    WEFT_SKIP_UNLESS_CPU();
    const Scatter<float> k(Deterministic::NotGuaranteed);
    const std::vector<float> values = wide_values<float>(3000, 5);
    const std::vector<int> bins(values.size(), 0);
    float sequential = 0.0f;
    for (const float v : values) sequential += v;
    EXPECT_TRUE(weft::test::same_bits(run(k.serial, values, bins, 1)[0], sequential));

    auto counter =
        weft::unique_kernel("serial_counter", {.cpu_threads = 1}, {"next", "order", "low", "high"},
                            [](Array<int> next, Array<int> order, Array<int> low, Array<int> high) {
                                auto i = weft::tid();
                                order[weft::atomic_add(next, 0, 1)] = i;
                                weft::atomic_min(low, 0, 1000 - i);
                                weft::atomic_max(high, 0, i * 3);
                                weft::atomic_cas(next, 1, i, i + 1);
                            });
    const int n = 1000;
    auto next = weft::zeros<int>(2, cpu);
    auto order = weft::zeros<int>(n, cpu);
    auto low = weft::full<int>(1, 5000, cpu);
    auto high = weft::zeros<int>(1, cpu);
    weft::launch(counter, n, next, order, low, high);
    std::vector<int> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = i;
    EXPECT_EQ(order.to_vector(), expected);
    EXPECT_EQ(next.to_vector(), (std::vector<int>{n, n}));  // each CAS found the previous thread's value
    EXPECT_EQ(low.to_vector(), std::vector<int>{1000 - (n - 1)});
    EXPECT_EQ(high.to_vector(), std::vector<int>{(n - 1) * 3});
}

}  // namespace
