// Plain atomics under many workers: every update lands, returned old values are each seen once,
// and a float sum's order shows (reported), while the deterministic sum stays exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;

weft::Device dev() {
    return weft::test::test_device();
}

// More workers than this machine may have cores, so that updates really race.
constexpr int kWorkers = 7;

weft::Module& module() {
    static weft::Module m{"parallel_atomics", {.cpu_threads = kWorkers}};
    return m;
}

// Thread 0 waits until thread `half` (of a later chunk) has started. The worker running thread 0
// cannot run that chunk while it waits, so at least two workers run the launch at once whatever
// the machine's load. (On one worker it would wait forever: these kernels run on kWorkers.)
void rendezvous(const weft::Int& t, const weft::Int& half, const Array<int>& gate) {
    weft::if_(t == half, [&] { weft::atomic_max(gate, 0, 1); });
    weft::if_(t == 0, [&] { weft::while_([&] { return weft::atomic_max(gate, 0, 0) == 0; }, [] {}); });
}

// Closed on the CPU; open on a GPU, whose threads run at once anyway (and where a resident
// thread waiting on one that is not yet scheduled could wait for good).
weft::DeviceArray<int> closed_gate() {
    return weft::full<int>(1, dev().is_cpu() ? 0 : 1, dev());
}

template <class T>
auto counting_kernel() {
    return module().kernel(
        "count_" + std::string(weft::dtype_name(weft::dtype_of<T>)),
        {"counter", "old", "gate", "half", "reps"},
        [](Array<T> counter, Array<T> old, Array<int> gate, weft::Int half, weft::Int reps) {
            auto t = weft::tid();
            rendezvous(t, half, gate);
            // Two neighbouring elements (one 32-bit word for half types).
            weft::for_(reps, [&](weft::Int k) { old[t * reps + k] = weft::atomic_add(counter, t % 2, 1); });
        });
}

// Each thread adds 1, `reps` times, to one of two neighbouring elements and keeps the values it
// replaced: the totals are exact and, per element, the old values are 0, 1, ..., count - 1, each
// once.
const auto k_count_i32 = counting_kernel<int32_t>();
const auto k_count_u32 = counting_kernel<uint32_t>();
const auto k_count_i64 = counting_kernel<int64_t>();
const auto k_count_u64 = counting_kernel<uint64_t>();
const auto k_count_f32 = counting_kernel<float>();
const auto k_count_f64 = counting_kernel<double>();
const auto k_count_f16 = counting_kernel<weft::float16>();
const auto k_count_bf16 = counting_kernel<weft::bfloat16>();

template <class T, class K>
void counts_exactly(const K& kernel, int n, int reps) {
    auto counter = weft::zeros<T>(2, dev());
    auto old = weft::zeros<T>(int64_t{n} * reps, dev());
    weft::launch(kernel, n, counter, old, closed_gate(), n / 2, reps);
    const std::vector<T> c = counter.to_vector();
    EXPECT_EQ(static_cast<double>(c[0]), static_cast<double>((n + 1) / 2 * reps));
    EXPECT_EQ(static_cast<double>(c[1]), static_cast<double>(n / 2 * reps));
    const std::vector<T> o = old.to_vector();
    for (int parity = 0; parity < 2; ++parity) {
        std::vector<double> seen;
        for (int t = parity; t < n; t += 2)
            for (int k = 0; k < reps; ++k)
                seen.push_back(static_cast<double>(o[static_cast<size_t>(t) * reps + k]));
        std::sort(seen.begin(), seen.end());
        std::vector<double> want(seen.size());
        std::iota(want.begin(), want.end(), 0.0);
        EXPECT_EQ(seen, want) << "old values of element " << parity;
    }
}

TEST(ParallelAtomics, AddsAndOldValuesOfEveryDtype) {
    counts_exactly<int32_t>(k_count_i32, 100000, 16);
    counts_exactly<uint32_t>(k_count_u32, 100000, 16);
    counts_exactly<int64_t>(k_count_i64, 100000, 16);
    counts_exactly<uint64_t>(k_count_u64, 100000, 16);
    counts_exactly<float>(k_count_f32, 100000, 16);  // integers below 2^24 are exact
    counts_exactly<double>(k_count_f64, 100000, 16);
    counts_exactly<weft::float16>(k_count_f16, 4000, 1);   // exact up to 2048 per element
    counts_exactly<weft::bfloat16>(k_count_bf16, 500, 1);  // exact up to 256 per element
}

const auto k_bits =
    module().kernel("bits", {"masks", "words", "gate", "half"},
                    [](Array<uint32_t> masks, Array<uint32_t> words, Array<int> gate, weft::Int half) {
                        auto t = weft::tid();
                        rendezvous(t, half, gate);
                        weft::atomic_or(words, 0, masks[t]);
                        weft::atomic_and(words, 1, ~masks[t]);
                        weft::atomic_xor(words, 2, masks[t]);
                    });

TEST(ParallelAtomics, BitOperationsLoseNoBit) {
    const int n = 64000;
    std::vector<uint32_t> masks(n);
    uint32_t xored = 0;
    for (int t = 0; t < n; ++t) {
        masks[t] = 1u << (t % 32) | (t % 7 == 0 ? 1u << ((t / 7) % 32) : 0u);
        xored ^= masks[t];
    }
    auto words = weft::from_vector(std::vector<uint32_t>{0, 0xffffffffu, 0}, dev());
    weft::launch(k_bits, n, weft::from_vector(masks, dev()), words, closed_gate(), n / 2);
    EXPECT_EQ(words.to_vector(), (std::vector<uint32_t>{0xffffffffu, 0, xored}));
}

template <class T>
auto minmax_kernel() {
    return module().kernel("minmax_" + std::string(weft::dtype_name(weft::dtype_of<T>)),
                           {"values", "out", "gate", "half"},
                           [](Array<T> values, Array<T> out, Array<int> gate, weft::Int half) {
                               auto t = weft::tid();
                               rendezvous(t, half, gate);
                               weft::atomic_min(out, 0, values[t]);
                               weft::atomic_max(out, 1, values[t]);
                           });
}

// Float min and max ignore a NaN operand (IEEE minNum/maxNum, as on a GPU), so the result does
// not depend on the order even with NaNs among the values.
const auto k_minmax_f32 = minmax_kernel<float>();
const auto k_minmax_f64 = minmax_kernel<double>();
const auto k_minmax_f16 = minmax_kernel<weft::float16>();
const auto k_minmax_bf16 = minmax_kernel<weft::bfloat16>();

template <class T, class K>
void minmax_ignores_nans(const K& kernel, int n) {
    std::mt19937 rng(17);
    std::vector<T> values(n);
    double lo = 1e9, hi = -1e9;
    for (int t = 0; t < n; ++t) {
        if (t % 10 == 3) {
            values[t] = T(std::numeric_limits<float>::quiet_NaN());
            continue;
        }
        const double v = static_cast<double>(T(std::uniform_real_distribution<float>(-100, 100)(rng)));
        values[t] = T(v);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    for (int repeat = 0; repeat < 3; ++repeat) {
        auto out = weft::from_vector(std::vector<T>{T(1000.0f), T(-1000.0f)}, dev());
        weft::launch(kernel, n, weft::from_vector(values, dev()), out, closed_gate(), n / 2);
        const std::vector<T> got = out.to_vector();
        EXPECT_EQ(static_cast<double>(got[0]), lo);
        EXPECT_EQ(static_cast<double>(got[1]), hi);
    }
}

TEST(ParallelAtomics, FloatMinMaxIgnoreNansInAnyOrder) {
    minmax_ignores_nans<float>(k_minmax_f32, 100000);
    minmax_ignores_nans<double>(k_minmax_f64, 100000);
    minmax_ignores_nans<weft::float16>(k_minmax_f16, 20000);
    minmax_ignores_nans<weft::bfloat16>(k_minmax_bf16, 20000);
}

auto accumulate_in(weft::Module& m) {
    return m.kernel("accumulate", {"values", "out"}, [](Array<float> values, Array<float> out) {
        auto t = weft::tid();
        out[0] += values[t];
    });
}

// A second guard of plain float adds, independent of the counting one (issue 32, item 19): random
// integer-valued float32 contributions into random bins, added and subtracted, over several seeds.
// Integers below 2^24 add exactly in any order, so every bin must be its exact sum: an add lost to
// a race (a float add made of a plain load and store) shows as a bin off by its contribution.
const auto k_scatter_f32 = module().kernel(
    "scatter_f32", {"values", "bins", "sums", "gate", "half"},
    [](Array<float> values, Array<int> bins, Array<float> sums, Array<int> gate, weft::Int half) {
        auto t = weft::tid();
        rendezvous(t, half, gate);
        weft::atomic_add(sums, bins[t], values[t]);
        weft::atomic_sub(sums, bins[t] + 16, values[t]);
    });

TEST(ParallelAtomics, ScatteredFloatAddsOfRandomIntegersAreExactInEveryBin) {
    const int n = 200000;  // |a bin's sum| <= 64 n < 2^24
    for (const unsigned seed : {1u, 2u, 3u, 4u}) {
        std::mt19937 rng(seed);
        std::vector<float> v(n);
        std::vector<int> b(n);
        std::vector<double> want(16, 0.0);
        for (int i = 0; i < n; ++i) {
            v[i] = static_cast<float>(static_cast<int>(rng() % 129) - 64);
            b[i] = static_cast<int>(rng() % 16);
            want[b[i]] += v[i];
        }
        auto sums = weft::zeros<float>(32, dev());
        weft::launch(k_scatter_f32, n, weft::from_vector(v, dev()), weft::from_vector(b, dev()), sums,
                     closed_gate(), n / 2);
        const std::vector<float> got = sums.to_vector();
        for (int k = 0; k < 16; ++k) {
            EXPECT_EQ(static_cast<double>(got[k]), want[k]) << "bin " << k << ", seed " << seed;
            EXPECT_EQ(static_cast<double>(got[k + 16]), -want[k]) << "bin " << k + 16 << ", seed " << seed;
        }
    }
}

// The observation, as a user would make it: repeat one plain float accumulation and count
// its distinct results (reported; with several workers the order of additions changes between
// runs). Only the deterministic side is asserted: the same bits every run, the exact sum.
TEST(ParallelAtomics, PlainFloatSumsVaryWhileDeterministicOnesRepeat) {
    weft::Module plain{"parallel_plain_sum",
                       {.cpu_threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()))}};
    weft::Module exact{"parallel_exact_sum",
                       {.deterministic = weft::Deterministic::RunToRun,
                        .cpu_threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()))}};
    const auto k_plain = accumulate_in(plain);
    const auto k_exact = accumulate_in(exact);
    const int n = 1 << 20, runs = 20;
    std::mt19937 rng(5);
    std::vector<float> v(n);
    for (float& x : v)
        x = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), static_cast<int>(rng() % 16));
    const auto values = weft::from_vector(v, dev());
    const float want = weft::test::reduce_by_destination(weft::test::Reduction::Sum, std::vector<float>{0.0f},
                                                         std::vector<int>(n, 0), v)[0];
    std::set<uint32_t> plain_bits, exact_bits;
    for (int r = 0; r < runs; ++r) {
        auto a = weft::zeros<float>(1, dev());
        auto b = weft::zeros<float>(1, dev());
        weft::launch(k_plain, n, values, a);
        weft::launch(k_exact, n, values, b);
        plain_bits.insert(weft::test::bits_of(a.to_vector()[0]));
        const float got = b.to_vector()[0];
        exact_bits.insert(weft::test::bits_of(got));
        EXPECT_TRUE(weft::test::same_bits(got, want))
            << weft::test::describe(got) << " vs exact " << weft::test::describe(want);
    }
    std::printf("plain float atomics: %zu distinct result(s) in %d runs; deterministic: %zu\n",
                plain_bits.size(), runs, exact_bits.size());
    RecordProperty("plain_distinct_results", static_cast<int>(plain_bits.size()));
    EXPECT_EQ(exact_bits.size(), 1u);
}

}  // namespace
