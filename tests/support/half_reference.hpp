// Test oracles for float16 and bfloat16, written independently of src/device/half.h: values are
// rebuilt from their fields with std::ldexp, rounding picks the nearer neighbour from a sorted
// table of every finite value (ties to the even bit pattern), and sums are exact in a wide integer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include <weft/half.hpp>

namespace weft::test {

template <class H>
struct HalfFields;
template <>
struct HalfFields<float16> {
    static constexpr int kMantissa = 10, kExponentBits = 5;
};
template <>
struct HalfFields<bfloat16> {
    static constexpr int kMantissa = 7, kExponentBits = 8;
};

template <class H>
constexpr int kHalfBias = (1 << (HalfFields<H>::kExponentBits - 1)) - 1;
template <class H>
constexpr int kHalfMaxField = (1 << HalfFields<H>::kExponentBits) - 1;
// log2 of the smallest subnormal: -24 for float16, -133 for bfloat16.
template <class H>
constexpr int kHalfUnit = 1 - kHalfBias<H> - HalfFields<H>::kMantissa;

template <class H>
bool half_is_nan(uint16_t bits) {
    const int e = (bits >> HalfFields<H>::kMantissa) & kHalfMaxField<H>;
    return e == kHalfMaxField<H> && (bits & ((1u << HalfFields<H>::kMantissa) - 1)) != 0;
}

// The value of `bits`, from its fields.
template <class H>
long double half_value(uint16_t bits) {
    constexpr int kM = HalfFields<H>::kMantissa;
    const bool negative = (bits & 0x8000u) != 0;
    const int e = (bits >> kM) & kHalfMaxField<H>;
    const long double m = bits & ((1u << kM) - 1);
    long double v;
    if (e == kHalfMaxField<H>)
        v = m != 0 ? std::numeric_limits<long double>::quiet_NaN()
                   : std::numeric_limits<long double>::infinity();
    else if (e == 0)
        v = std::ldexp(m, kHalfUnit<H>);
    else
        v = std::ldexp((1 << kM) + m, e - kHalfBias<H> - kM);
    return negative ? -v : v;
}

// The non-negative finite values, ascending with their bits.
template <class H>
const std::vector<long double>& half_table() {
    static const std::vector<long double> table = [] {
        std::vector<long double> t;
        const uint16_t inf = static_cast<uint16_t>(kHalfMaxField<H> << HalfFields<H>::kMantissa);
        for (uint32_t b = 0; b < inf; ++b) t.push_back(half_value<H>(static_cast<uint16_t>(b)));
        return t;
    }();
    return table;
}

// `x` rounded to nearest, ties to even; beyond the largest value by half an ulp or more, infinity.
// (NaN in, the type's quiet NaN out.)
template <class H>
uint16_t reference_round(long double x) {
    constexpr uint16_t kInf = static_cast<uint16_t>(kHalfMaxField<H> << HalfFields<H>::kMantissa);
    if (std::isnan(x)) return static_cast<uint16_t>(kInf | (1u << (HalfFields<H>::kMantissa - 1)));
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const long double a = std::fabs(x);
    const auto& t = half_table<H>();
    const long double top = t.back();
    const long double ulp = top - t[t.size() - 2];
    if (a >= top + ulp / 2) return static_cast<uint16_t>(sign | kInf);
    if (a >= top) return static_cast<uint16_t>(sign | (kInf - 1));
    const size_t hi = static_cast<size_t>(std::upper_bound(t.begin(), t.end(), a) - t.begin());
    const size_t lo = hi - 1;  // t[lo] <= a < t[hi]
    const long double below = a - t[lo], above = t[hi] - a;
    const size_t pick = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
    return static_cast<uint16_t>(sign | pick);
}

// The documented deterministic sum of `values` into a target holding `initial`: the exact sum
// rounded once to H (NaN anywhere or +inf with -inf: NaN; an exact zero is -0 only when the
// initial value is -0 and no contribution is +0). Every finite value of H is a multiple of
// 2^-133 below 2^128; the sum is kept as an integer of those units in 64-bit pieces.
template <class H>
uint16_t reference_sum(H initial, const std::vector<H>& values) {
    bool nan = false, pos_inf = false, neg_inf = false, pos_zero = false;
    // Units of 2^kHalfUnit<H>: below 2^(128 + 133) for bfloat16, so four signed 64-bit limbs
    // in base 2^62 hold any sum of fewer than 2^30 values.
    constexpr int kBase = 62;
    std::vector<__int128> limbs(6, 0);
    auto take = [&](H h, bool contribution) {
        const uint16_t b = h.bits;
        const long double v = half_value<H>(b);
        if (std::isnan(v)) return void(nan = true);
        if (std::isinf(v)) return void((v > 0 ? pos_inf : neg_inf) = true);
        if (contribution && v == 0 && !std::signbit(v)) pos_zero = true;
        // |v| = sig * 2^(shift) units.
        constexpr int kM = HalfFields<H>::kMantissa;
        const int e = (b >> kM) & kHalfMaxField<H>;
        const uint64_t sig = (b & ((1u << kM) - 1)) | (e ? (1u << kM) : 0u);
        const int shift = e ? e - 1 : 0;
        const __int128 signed_sig = (b & 0x8000u) ? -static_cast<__int128>(sig) : static_cast<__int128>(sig);
        limbs[static_cast<size_t>(shift / kBase)] += signed_sig << (shift % kBase);
    };
    take(initial, false);
    for (H v : values) take(v, true);
    constexpr uint16_t kInf = static_cast<uint16_t>(kHalfMaxField<H> << HalfFields<H>::kMantissa);
    if (nan || (pos_inf && neg_inf)) return reference_round<H>(std::numeric_limits<long double>::quiet_NaN());
    if (pos_inf) return kInf;
    if (neg_inf) return static_cast<uint16_t>(0x8000u | kInf);
    // Normalize to limbs in [0, 2^62) with a signed top; then the value as a long double: exact
    // when its bits span at most 64, else the low bits only decide as a sticky bit.
    for (size_t k = 0; k + 1 < limbs.size(); ++k) {
        const __int128 carry = limbs[k] >> kBase;  // floor
        limbs[k] -= carry << kBase;
        limbs[k + 1] += carry;
    }
    const bool negative = limbs.back() < 0;
    if (negative) {
        for (auto& l : limbs) l = -l;
        for (size_t k = 0; k + 1 < limbs.size(); ++k) {
            const __int128 carry = limbs[k] >> kBase;
            limbs[k] -= carry << kBase;
            limbs[k + 1] += carry;
        }
    }
    size_t top = limbs.size();
    while (top > 0 && limbs[top - 1] == 0) --top;
    if (top == 0) {
        const bool keep_negative = initial.bits == 0x8000u && !pos_zero;
        return keep_negative ? 0x8000u : 0;
    }
    // The top 63 bits, then one more that is set when any bit below them is (round to odd):
    // 64 bits, exact in a long double, that round to H as the whole magnitude does.
    int high = 61;
    while (((limbs[top - 1] >> high) & 1) == 0) --high;
    const int64_t top_bit = static_cast<int64_t>(top - 1) * kBase + high;
    auto bit = [&](int64_t i) {
        return i >= 0 && ((limbs[static_cast<size_t>(i / kBase)] >> (i % kBase)) & 1) != 0;
    };
    const int64_t low = top_bit - 62;
    uint64_t window = 0;
    for (int64_t i = top_bit; i >= std::max<int64_t>(low, 0); --i) window = (window << 1) | (bit(i) ? 1 : 0);
    bool sticky = false;
    for (int64_t i = 0; i < low; ++i) sticky = sticky || bit(i);
    const long double magnitude =
        low > 0
            ? std::ldexp(static_cast<long double>(window * 2 + (sticky ? 1 : 0)), static_cast<int>(low - 1))
            : static_cast<long double>(window);
    return reference_round<H>(std::ldexp(negative ? -magnitude : magnitude, kHalfUnit<H>));
}

}  // namespace weft::test
