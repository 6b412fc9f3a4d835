// Plain (NotGuaranteed) float16 and bfloat16 atomic add and sub on a GPU, which take the packed
// half-pair instruction where the GPU has one (src/device/half.h): sums whose every partial sum
// is exact give the exact value, consumed old values form the sequence of partial sums, and the
// other half of each 32-bit word keeps its bits. Each case has one answer for every order of the
// threads. Run by hand without WEFT_TEST_DEVICE, the program checks the CPU instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::bfloat16;
using weft::float16;

template <class H>
struct HalfAtomics {
    weft::Module module{std::string("half_atomics_gpu_") + weft::dtype_name(weft::dtype_of<H>),
                        {.deterministic = weft::Deterministic::NotGuaranteed}};
    weft::Kernel<Array<H>, Array<int>, Array<H>> add = module.kernel(
        "add", {"target", "index", "value"}, [](Array<H> target, Array<int> index, Array<H> value) {
            auto t = weft::tid();
            weft::atomic_add(target, index[t], value[t]);
        });
    weft::Kernel<Array<H>, Array<int>, Array<H>> sub = module.kernel(
        "sub", {"target", "index", "value"}, [](Array<H> target, Array<int> index, Array<H> value) {
            auto t = weft::tid();
            target[index[t]] -= value[t];
        });
    weft::Kernel<Array<H>, Array<int>, Array<H>, Array<H>> add_old =
        module.kernel("add_old", {"target", "index", "value", "old"},
                      [](Array<H> target, Array<int> index, Array<H> value, Array<H> old) {
                          auto t = weft::tid();
                          old[t] = weft::atomic_add(target, index[t], value[t]);
                      });
    weft::Kernel<Array<H>, Array<int>, Array<H>, Array<H>> sub_old =
        module.kernel("sub_old", {"target", "index", "value", "old"},
                      [](Array<H> target, Array<int> index, Array<H> value, Array<H> old) {
                          auto t = weft::tid();
                          old[t] = weft::atomic_sub(target, index[t], value[t]);
                      });
};

template <class H>
HalfAtomics<H>& kernels() {
    static HalfAtomics<H> k;
    return k;
}

// The largest integer n such that every integer 0..n is exact: 2048 in float16, 256 in bfloat16.
// One more rounds back to n (n + 1 is a tie, and n is even), so adding 1 to n any number of times
// gives n, whatever the order.
template <class H>
constexpr int kExactInts = weft::dtype_of<H> == weft::DType::Float16 ? 2048 : 256;

// Threads t = 0..n-1 update element t % elements with `value`.
struct Launch {
    std::vector<int> index;
    int threads;
};
Launch spread(int threads, int elements) {
    Launch l{std::vector<int>(static_cast<size_t>(threads)), threads};
    for (int t = 0; t < threads; ++t) l.index[t] = t % elements;
    return l;
}

template <class H>
std::vector<H> run(const weft::Kernel<Array<H>, Array<int>, Array<H>>& k, std::vector<H> initial,
                   const Launch& l, H value) {
    const weft::Device d = weft::test::test_device();
    auto target = weft::from_vector(initial, d);
    weft::launch(k, l.threads, target, weft::from_vector(l.index, d),
                 weft::from_vector(std::vector<H>(static_cast<size_t>(l.threads), value), d));
    return target.to_vector();
}

// The final target and the old value each thread saw.
template <class H>
std::pair<std::vector<H>, std::vector<H>> run_old(
    const weft::Kernel<Array<H>, Array<int>, Array<H>, Array<H>>& k, std::vector<H> initial, const Launch& l,
    H value) {
    const weft::Device d = weft::test::test_device();
    auto target = weft::from_vector(initial, d);
    auto old = weft::zeros<H>(l.threads, d);
    weft::launch(k, l.threads, target, weft::from_vector(l.index, d),
                 weft::from_vector(std::vector<H>(static_cast<size_t>(l.threads), value), d), old);
    return {target.to_vector(), old.to_vector()};
}

template <class H>
std::vector<uint16_t> bits(const std::vector<H>& v) {
    std::vector<uint16_t> b;
    for (H h : v) b.push_back(h.bits);
    return b;
}

template <class H>
void hot_and_spread_sums() {
    SCOPED_TRACE(weft::dtype_name(weft::dtype_of<H>));
    constexpr int n = kExactInts<H>;
    auto& k = kernels<H>();
    const H one(1.0);
    // One hot element: n adds of 1 give n exactly; a million give n too (each past n rounds back).
    EXPECT_EQ(bits(run(k.add, {H(0.0)}, spread(n, 1), one)), bits(std::vector<H>{H(static_cast<double>(n))}));
    EXPECT_EQ(bits(run(k.add, {H(0.0)}, spread(1 << 20, 1), one)),
              bits(std::vector<H>{H(static_cast<double>(n))}));
    // 4096 neighbours, both halves of every word, 256 adds each: a million threads.
    const std::vector<H> spread_sum = run(k.add, std::vector<H>(4096, H(0.0)), spread(4096 * 256, 4096), one);
    EXPECT_EQ(bits(spread_sum), bits(std::vector<H>(4096, H(256.0))));
    // Subnormal contributions stay (no flush to zero): n of the smallest subnormal, exact.
    const H tiny = H::from_bits(1);
    const std::vector<H> tiny_sum = run(k.add, {H(0.0), H(0.0)}, spread(2 * n, 2), tiny);
    EXPECT_EQ(static_cast<double>(tiny_sum[0]), n * static_cast<double>(tiny));
    EXPECT_EQ(bits(tiny_sum), bits(std::vector<H>(2, tiny_sum[0])));
    EXPECT_NE(tiny_sum[0].bits, 0);
}

TEST(HalfAtomicsGpu, SumsOfExactPartialSumsAreExact) {
    hot_and_spread_sums<float16>();
    hot_and_spread_sums<bfloat16>();
}

// The targets are elements 0 (a word's low half) and 3 (a word's high half); their word mates
// and the elements between hold values that an add of -0 must not change, -0 among them.
template <class H>
void neighbours_keep_their_bits() {
    SCOPED_TRACE(weft::dtype_name(weft::dtype_of<H>));
    constexpr int n = kExactInts<H>;
    const std::vector<H> initial = {H(0.0),  H::from_bits(0x8000), H::from_bits(0x0001),
                                    H(0.0),  H::from_bits(0x8001), H::from_bits(0x7bff),
                                    H(-0.0), H::from_bits(0x3c01)};
    Launch l{std::vector<int>(static_cast<size_t>(2 * n)), 2 * n};
    for (int t = 0; t < 2 * n; ++t) l.index[t] = t % 2 == 0 ? 0 : 3;
    std::vector<H> want = initial;
    want[0] = want[3] = H(static_cast<double>(n));
    EXPECT_EQ(bits(run(kernels<H>().add, initial, l, H(1.0))), bits(want));
    // Subtraction too: n - n is +0.
    std::vector<H> full = initial;
    full[0] = full[3] = H(static_cast<double>(n));
    want[0] = want[3] = H(0.0);
    EXPECT_EQ(bits(run(kernels<H>().sub, full, l, H(1.0))), bits(want));
}

TEST(HalfAtomicsGpu, OtherHalfOfTheWordKeepsItsBits) {
    neighbours_keep_their_bits<float16>();
    neighbours_keep_their_bits<bfloat16>();
}

// 2n threads add 1 to each of two elements (one each half of a word) and keep the old value: each
// element's old values are 0, 1, ..., n-1 once each (distinct: each add saw the one before it)
// and then n, n times (the adds past n round back to n).
template <class H>
void old_values_are_partial_sums() {
    SCOPED_TRACE(weft::dtype_name(weft::dtype_of<H>));
    constexpr int n = kExactInts<H>;
    const Launch l = spread(4 * n, 2);
    const auto [target, old] = run_old(kernels<H>().add_old, {H(0.0), H(0.0)}, l, H(1.0));
    EXPECT_EQ(bits(target), bits(std::vector<H>(2, H(static_cast<double>(n)))));
    for (int e = 0; e < 2; ++e) {
        std::vector<double> seen;
        for (int t = 0; t < l.threads; ++t)
            if (l.index[t] == e) seen.push_back(static_cast<double>(old[t]));
        std::sort(seen.begin(), seen.end());
        std::vector<double> want;
        for (int i = 0; i < n; ++i) want.push_back(i);
        want.resize(2 * n, n);
        EXPECT_EQ(seen, want) << "element " << e;
    }
}

TEST(HalfAtomicsGpu, ConsumedAddReturnsEachPartialSumOnce) {
    old_values_are_partial_sums<float16>();
    old_values_are_partial_sums<bfloat16>();
}

// Subtraction: from n, n subs of 1 give +0 and return n, n-1, ..., 1 once each; from 0, a million
// subs of 1 give -n (each past -n rounds back), the mirror of the add.
template <class H>
void subtraction_is_exact() {
    SCOPED_TRACE(weft::dtype_name(weft::dtype_of<H>));
    constexpr int n = kExactInts<H>;
    const H start(static_cast<double>(n));
    const Launch l = spread(2 * n, 2);
    const auto [target, old] = run_old(kernels<H>().sub_old, {start, start}, l, H(1.0));
    EXPECT_EQ(bits(target), bits(std::vector<H>(2, H(0.0))));
    for (int e = 0; e < 2; ++e) {
        std::vector<double> seen;
        for (int t = 0; t < l.threads; ++t)
            if (l.index[t] == e) seen.push_back(static_cast<double>(old[t]));
        std::sort(seen.begin(), seen.end());
        std::vector<double> want;
        for (int i = 1; i <= n; ++i) want.push_back(i);
        EXPECT_EQ(seen, want) << "element " << e;
    }
    EXPECT_EQ(bits(run(kernels<H>().sub, {H(0.0), H(0.0)}, spread(1 << 20, 2), H(1.0))),
              bits(std::vector<H>(2, H(-static_cast<double>(n)))));
    // Subtracting a negative value adds: n subs of -1 from 0 give n.
    EXPECT_EQ(bits(run(kernels<H>().sub, {H(0.0)}, spread(n, 1), H(-1.0))),
              bits(std::vector<H>{H(static_cast<double>(n))}));
}

TEST(HalfAtomicsGpu, SubtractionIsExact) {
    subtraction_is_exact<float16>();
    subtraction_is_exact<bfloat16>();
}

}  // namespace
