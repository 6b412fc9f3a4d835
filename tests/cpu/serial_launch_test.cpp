// Serial CPU launches (one chunk, the atomics' targets to themselves: wf::Launch::serial) give the
// results of atomic instructions: plain atomics the thread-order results, deterministic sums the
// correctly rounded exact sums, bit for bit what a launch over several workers gives, also where
// a serial window carries or spills (contributions over a wide range of magnitudes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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

// A serial launch adds to a float64 sum per element while that stays exact (docs/design/0034):
// every kind of initial value against every kind of contribution family, each element's sum
// against the oracle and against a chunked launch's bits. Families: sums exact in float64,
// pairs that cancel (the element keeps its bits), sums that land among float32 subnormals,
// beyond FLT_MAX, magnitudes 2^80 apart (float64 cannot hold them: the cells take over),
// subnormal contributions, ties that a far lower bit breaks, a small value that a larger one
// would swallow, and wide random magnitudes.
TEST(SerialLaunches, Float64SumsGiveTheExactSumWhateverTheInitialValueAndTheMagnitudes) {
    WEFT_SKIP_UNLESS_CPU();
    const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
    const std::vector<float> initials{
        0.0f,      -0.0f,   1.0f,    -3.5f, 1e-40f,
        1e30f,     big,     inf,     -inf,  std::numeric_limits<float>::quiet_NaN(),
        0x1p-126f, -7e-39f, 0x1p-80f};
    std::mt19937 rng(41);
    auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
    const std::vector<std::function<std::vector<float>()>> families{
        [&] {
            std::vector<float> v;
            for (int i = 0; i < 50; ++i) v.push_back(uniform(-1.0f, 1.0f));
            return v;
        },
        [&] {
            const float x = uniform(0.5f, 2.0f);
            return std::vector<float>{x, 0.25f, -x, -0.25f};
        },
        [&] {
            return std::vector<float>{0x1p-125f, -(0x1p-125f - 0x1p-140f), 0x1p-148f};
        },
        [&] {
            return std::vector<float>{big, big * 0.5f, -big * 0.25f};
        },
        [&] {
            return std::vector<float>{0x1p40f, 0x1p-40f, -0x1p40f, 0x1p-41f, 3.0f};
        },
        [&] {
            return std::vector<float>{1e-40f, -3e-41f, 2e-45f, 1.0f};
        },
        // A tie for float32 that a bit 2^-80 breaks (float64 would drop it): with a 2^-80 initial
        // value, the sum alone is exact, the sum and the initial value are not.
        [&] {
            return std::vector<float>{1.0f, 0x1p-24f};
        },
        [&] {
            return std::vector<float>{1.0f, 0x1p-24f, 0x1p-80f};
        },
        [&] {
            return std::vector<float>{0x1p60f, 1.0f, -0x1p60f};
        },
        // 1 after 2^-80 passes the first exactness check (1 + 2^-80 - 2^-80 rounds to 1) and
        // fails only the second: without it the sum would drop the 2^-80 that -1 then exposes.
        [&] {
            return std::vector<float>{0x1p-80f, 1.0f, -1.0f};
        },
        // Special values, which the sum must leave to the cell's flags.
        [&] {
            return std::vector<float>{1.0f, inf, 2.0f};
        },
        [&] {
            return std::vector<float>{-inf, 0.5f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
        },
        [&] {
            std::vector<float> v;
            for (int i = 0; i < 30; ++i)
                v.push_back(std::ldexp(uniform(-1.0f, 1.0f), static_cast<int>(rng() % 120) - 60));
            v.push_back(-0.0f);
            v.push_back(0.0f);
            return v;
        },
    };
    std::vector<float> initial, values;
    std::vector<int> bins;
    for (const float first : initials)
        for (const auto& family : families) {
            const int o = static_cast<int>(initial.size());
            initial.push_back(first);
            for (const float v : family()) {
                values.push_back(v);
                bins.push_back(o);
            }
        }
    // One order for the serial launch, another for the chunked one: the bits may not depend on it.
    std::vector<size_t> order(values.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<float> shuffled;
    std::vector<int> shuffled_bins;
    for (const size_t i : order) {
        shuffled.push_back(values[i]);
        shuffled_bins.push_back(bins[i]);
    }
    const Scatter<float> k(Deterministic::RunToRun, weft::DeterministicStrategy::Compact);
    auto launched = [&](const auto& kernel, const std::vector<float>& v, const std::vector<int>& b) {
        auto out = weft::from_vector(initial, cpu);
        weft::launch(kernel, static_cast<int64_t>(v.size()), weft::from_vector(v, cpu),
                     weft::from_vector(b, cpu), out);
        return out.to_vector();
    };
    const std::vector<float> serial = launched(k.serial, values, bins);
    const std::vector<float> chunked = launched(k.chunked, shuffled, shuffled_bins);
    std::vector<std::vector<float>> per(initial.size());
    for (size_t i = 0; i < values.size(); ++i) per[bins[i]].push_back(values[i]);
    for (size_t o = 0; o < initial.size(); ++o) {
        const float want = weft::test::exact_sum(initial[o], per[o]);
        EXPECT_TRUE(weft::test::same_value(serial[o], want))
            << "output " << o << " (initial " << weft::test::describe(initial[o]) << ", family "
            << o % families.size() << "): " << weft::test::describe(serial[o]) << " instead of "
            << weft::test::describe(want);
        EXPECT_TRUE(weft::test::same_bits(serial[o], chunked[o])) << "output " << o;
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
