// The streamed rounding of wide exact sums (wf::round_streamed, float64's resolve) against the
// limb-array rounding of narrow ones (wf::round_limbs, float32's): the same bits for adversarial
// words (sparse, dense, cancelling, negative, at every position), every kind of initial value,
// and the exact-zero and signed-zero rules; and against the oracle for real contributions.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/exact_sum.hpp"

namespace {

using weft::test::exact_sum;
using weft::test::same_value;

template <class T>
T streamed(const std::vector<wf::i64>& words, wf::u32 flags, T initial) {
    constexpr int kWords = wf::Exact<typename wf::StateOf<T>::type>::kWords;
    return wf::round_streamed<T, kWords>([&](int k) { return words[static_cast<size_t>(k)]; }, flags,
                                         initial);
}

// The limbs' rounding of the same words, as resolve_sum does it for float32.
template <class T>
T held(const std::vector<wf::i64>& words, wf::u32 flags, T initial) {
    constexpr int kLimbs = wf::Exact<typename wf::StateOf<T>::type>::kWords + 2;
    std::vector<wf::i64> acc(kLimbs, 0);
    std::copy(words.begin(), words.end(), acc.begin());
    return wf::round_limbs<T, kLimbs>(acc.data(), flags, initial);
}

template <class T>
auto bits(T v) {
    if constexpr (sizeof(T) == 2)
        return v.bits;
    else
        return std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(v);
}

// Words as a launch can leave them: a few or many nonzero, each below 2^62 in magnitude, of
// either sign, often adjacent (carries between them), sometimes cancelling to exactly zero.
std::vector<wf::i64> random_words(std::mt19937_64& rng, int count) {
    std::vector<wf::i64> w(static_cast<size_t>(count), 0);
    const int shape = static_cast<int>(rng() % 6);
    const int nonzero = shape == 0 ? count : 1 + static_cast<int>(rng() % 4);
    const int at = static_cast<int>(rng() % static_cast<uint64_t>(count));
    for (int i = 0; i < nonzero; ++i) {
        const int k = shape == 0 ? i : (at + static_cast<int>(rng() % 3)) % count;
        const int width = static_cast<int>(rng() % 63);
        wf::i64 v = static_cast<wf::i64>(rng() >> (64 - width - 1));
        if (shape == 1) v = static_cast<wf::i64>(rng() % 3) - 1;  // tiny words: carries of -1
        if (shape == 2) v = (wf::i64{1} << 32) - static_cast<wf::i64>(rng() % 2);
        w[static_cast<size_t>(k)] += rng() % 2 ? -v : v;
    }
    if (shape == 3 && at + 1 < count) {  // x * 2^32 in word k cancels -x in word k + 1
        const wf::i64 x = static_cast<wf::i64>(rng() >> 34);
        w.assign(static_cast<size_t>(count), 0);
        w[static_cast<size_t>(at)] = x * 4294967296ll;
        w[static_cast<size_t>(at) + 1] = -x;
    }
    if (shape == 4) {  // a negative sum just below a power of two, then words below it
        w[static_cast<size_t>(at)] = -1;
        for (int k = 0; k < at; ++k) w[static_cast<size_t>(k)] = static_cast<wf::i64>(rng() % 2);
    }
    return w;
}

template <class T>
std::vector<T> initial_values(std::mt19937_64& rng) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const auto any = [&] { return std::bit_cast<T>(static_cast<Bits>(rng())); };
    std::vector<T> v = {T(0),
                        -T(0),
                        T(1),
                        -T(1),
                        std::numeric_limits<T>::max(),
                        -std::numeric_limits<T>::max(),
                        std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN()};
    for (int i = 0; i < 6; ++i) v.push_back(any());
    return v;
}

template <class T>
void check_against_limbs(int rounds, uint64_t seed) {
    constexpr int kWords = wf::Exact<T>::kWords;
    std::mt19937_64 rng(seed);
    const wf::u32 flag_sets[] = {0,
                                 wf::kFlagPosZero,
                                 wf::kFlagPosInf,
                                 wf::kFlagNegInf,
                                 wf::kFlagNan,
                                 wf::kFlagPosInf | wf::kFlagNegInf};
    for (int round = 0; round < rounds; ++round) {
        const std::vector<wf::i64> words = random_words(rng, kWords);
        const wf::u32 flags = rng() % 8 == 0 ? flag_sets[rng() % 6] : 0;
        for (T initial : initial_values<T>(rng)) {
            const T want = held<T>(words, flags, initial);
            const T got = streamed<T>(words, flags, initial);
            ASSERT_EQ(bits(got), bits(want)) << "round " << round << ", initial " << initial;
        }
    }
}

TEST(DeterministicRounding, StreamedFloat64SumsGiveTheLimbRoundingsBits) {
    check_against_limbs<double>(20000, 64);
}

TEST(DeterministicRounding, StreamedFloat32SumsGiveTheLimbRoundingsBits) {
    check_against_limbs<float>(20000, 32);
}

// Half-precision targets keep float32 words and round once to their own type.
TEST(DeterministicRounding, StreamedHalfSumsGiveTheLimbRoundingsBits) {
    std::mt19937_64 rng(16);
    for (int round = 0; round < 20000; ++round) {
        const std::vector<wf::i64> words = random_words(rng, wf::Exact<float>::kWords);
        for (float initial : initial_values<float>(rng)) {
            ASSERT_EQ(bits(streamed<wf::f16>(words, 0, wf::f16(initial))),
                      bits(held<wf::f16>(words, 0, wf::f16(initial))))
                << "round " << round;
            ASSERT_EQ(bits(streamed<wf::bf16>(words, 0, wf::bf16(initial))),
                      bits(held<wf::bf16>(words, 0, wf::bf16(initial))))
                << "round " << round;
        }
    }
}

// Real contributions, added as the exact strategy adds them, against the oracle.
TEST(DeterministicRounding, StreamedFloat64SumsMatchTheOracle) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 300; ++round) {
        std::vector<wf::i64> words(wf::Exact<double>::kWords, 0);
        wf::u32 flags = 0;
        wf::DetTarget target{};
        target.words = words.data();
        target.flags = &flags;
        wf::Ctx ctx{};
        std::vector<double> values;
        const int lo = static_cast<int>(rng() % 2046), span = 1 + static_cast<int>(rng() % 200);
        for (int i = 0; i < 50; ++i) {
            const auto e = static_cast<uint64_t>(std::min(2046, lo + static_cast<int>(rng() % span)));
            const double v = std::bit_cast<double>((rng() & 0x800fffffffffffffull) | (e << 52));
            values.push_back(v);
            wf::det_add_to_slot<double>(ctx, &target, 0, v);
        }
        for (double initial :
             {0.0, -0.0, 1.0, -values[0], std::bit_cast<double>(rng() & 0x7fefffffffffffffull)}) {
            const double got = streamed<double>(words, flags, initial);
            ASSERT_TRUE(same_value(got, exact_sum(initial, values))) << "round " << round;
        }
    }
}

}  // namespace
