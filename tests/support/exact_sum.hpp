// Test oracles for deterministic accumulation: exact, correctly rounded sums and total-order min/max.
//
// Written independently of src/device/deterministic.h, on purpose by other means: each value is
// decomposed with std::frexp into an integer significand and a power of two, positive and negative
// contributions are added into two separate unsigned big integers of 16-bit limbs (units of the
// smallest subnormal), the smaller magnitude is subtracted from the larger, and the difference is
// rounded to nearest even bit by bit and rebuilt with std::ldexp.
//
// The documented rules (DESIGN.md §3, src/device/deterministic.h):
//   sum:  NaN anywhere, or +inf together with -inf -> NaN; else +inf -> +inf; else -inf -> -inf;
//         else the exact sum of the initial value and every contribution, rounded once to nearest
//         even (a rounded magnitude of 2^(max_exponent) or more is +-inf). An exact zero is -0.0
//         only when the initial value is -0.0 and no contribution is +0.0; else +0.0.
//   min/max: the extreme under the total order -inf < ... < -0.0 < +0.0 < ... < +inf, where a
//         NaN wins both min and max.
// Which NaN a NaN result is (sign, payload) is not documented; same_value() treats all NaNs as
// equal, and every other value bit for bit.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace weft::test {

template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
BitsOf<T> bits_of(T v) {
    return std::bit_cast<BitsOf<T>>(v);
}

// Bit-for-bit equality.
template <class T>
bool same_bits(T a, T b) {
    return bits_of(a) == bits_of(b);
}

// Oracle agreement: bit-for-bit, except that any NaN matches any NaN.
template <class T>
bool same_value(T got, T want) {
    if (std::isnan(want)) return std::isnan(got);
    return same_bits(got, want);
}

// "1.5 (0x3fc00000)": a value with its bits, for failure messages.
template <class T>
std::string describe(T v) {
    static const char* kHex = "0123456789abcdef";
    const auto b = bits_of(v);
    std::string hex;
    for (int shift = static_cast<int>(sizeof(T) * 8) - 4; shift >= 0; shift -= 4)
        hex += kHex[(b >> shift) & 0xf];
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", static_cast<double>(v));
    return std::string(text) + " (0x" + hex + ")";
}

namespace detail {

// An unsigned integer of 16-bit limbs, least significant first; each limb is kept below 2^16.
class Natural {
public:
    // Adds `value` * 2^shift.
    void add_shifted(uint64_t value, int64_t shift) {
        const size_t limb = static_cast<size_t>(shift / 16);
        const int bit = static_cast<int>(shift % 16);
        // value << bit spans up to 64 + 15 bits: add it in 16-bit pieces (each shifted piece < 2^31).
        for (size_t piece = 0; value != 0; ++piece, value >>= 16)
            add_at(limb + piece, static_cast<uint32_t>(value & 0xffff) << bit);
    }

    bool is_zero() const {
        return std::all_of(limbs_.begin(), limbs_.end(), [](uint32_t l) { return l == 0; });
    }

    // -1, 0, 1 as *this is less than, equal to or greater than `other`.
    int compare(const Natural& other) const {
        const size_t n = std::max(limbs_.size(), other.limbs_.size());
        for (size_t i = n; i-- > 0;) {
            const uint32_t a = limb(i), b = other.limb(i);
            if (a != b) return a < b ? -1 : 1;
        }
        return 0;
    }

    // *this - smaller (requires *this >= smaller).
    Natural minus(const Natural& smaller) const {
        Natural out = *this;
        int64_t borrow = 0;
        for (size_t i = 0; i < out.limbs_.size(); ++i) {
            int64_t d = static_cast<int64_t>(out.limbs_[i]) - smaller.limb(i) - borrow;
            borrow = d < 0 ? 1 : 0;
            if (d < 0) d += 65536;
            out.limbs_[i] = static_cast<uint32_t>(d);
        }
        if (borrow != 0) throw std::logic_error("Natural::minus: negative result");
        return out;
    }

    // The index of the highest set bit; -1 for zero.
    int64_t top_bit() const {
        for (size_t i = limbs_.size(); i-- > 0;)
            if (limbs_[i] != 0) return static_cast<int64_t>(i) * 16 + (31 - std::countl_zero(limbs_[i]));
        return -1;
    }

    bool bit(int64_t i) const {
        if (i < 0) return false;
        return ((limb(static_cast<size_t>(i / 16)) >> (i % 16)) & 1u) != 0;
    }

    // Whether any bit below position `i` is set.
    bool any_below(int64_t i) const {
        for (int64_t k = 0; k < i; ++k)
            if (bit(k)) return true;
        return false;
    }

private:
    uint32_t limb(size_t i) const { return i < limbs_.size() ? limbs_[i] : 0; }

    void add_at(size_t i, uint32_t v) {
        while (v != 0) {
            if (limbs_.size() <= i) limbs_.resize(i + 1, 0);
            const uint32_t s = limbs_[i] + v;
            limbs_[i] = s & 0xffff;
            v = s >> 16;
            ++i;
        }
    }

    std::vector<uint32_t> limbs_;
};

// log2 of the smallest positive subnormal: -149 for float, -1074 for double.
template <class T>
constexpr int kUnitExponent = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;

// A finite nonzero |v| as significand * 2^shift in units of the smallest subnormal.
template <class T>
void decompose(T v, uint64_t& significand, int64_t& shift) {
    constexpr int kDigits = std::numeric_limits<T>::digits;
    int e = 0;
    const T m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
    const T scaled = std::ldexp(m, kDigits);   // an integer below 2^digits
    uint64_t s = static_cast<uint64_t>(scaled);
    if (static_cast<T>(s) != scaled) throw std::logic_error("decompose: significand is not an integer");
    // |v| = s * 2^(e - digits) = s * 2^(e - digits - unit) units.
    int64_t k = static_cast<int64_t>(e) - kDigits - kUnitExponent<T>;
    while (k < 0) {  // a subnormal: its low bits are zero
        if (s & 1) throw std::logic_error("decompose: inexact subnormal");
        s >>= 1;
        ++k;
    }
    significand = s;
    shift = k;
}

// The rounded value of magnitude * 2^unit, with the given sign (magnitude nonzero).
template <class T>
T round_magnitude(const Natural& magnitude, bool negative) {
    constexpr int kDigits = std::numeric_limits<T>::digits;
    const int64_t top = magnitude.top_bit();
    uint64_t sig = 0;
    int64_t low = 0;  // the position of sig's lowest bit
    if (top < kDigits) {
        for (int64_t i = top; i >= 0; --i) sig = (sig << 1) | (magnitude.bit(i) ? 1 : 0);
    } else {
        low = top - kDigits + 1;
        for (int64_t i = top; i >= low; --i) sig = (sig << 1) | (magnitude.bit(i) ? 1 : 0);
        const bool half = magnitude.bit(low - 1);
        const bool sticky = magnitude.any_below(low - 1);
        if (half && (sticky || (sig & 1))) ++sig;  // nearest, ties to even
        if (sig == (uint64_t{1} << kDigits)) {
            sig >>= 1;
            ++low;
        }
    }
    // sig < 2^digits converts exactly; ldexp is exact for representable results and gives inf
    // on overflow. (A magnitude below 2^(digits-1) units is a subnormal and needs no rounding.)
    const int64_t exponent = low + kUnitExponent<T>;
    T value;
    if (exponent > std::numeric_limits<T>::max_exponent)
        value = std::numeric_limits<T>::infinity();
    else
        value = std::ldexp(static_cast<T>(sig), static_cast<int>(exponent));
    return negative ? -value : value;
}

}  // namespace detail

// The documented result of accumulating `contributions` (already negated for a subtraction)
// into a target holding `initial`.
template <class T>
T exact_sum(T initial, const std::vector<T>& contributions) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
    bool nan = false, pos_inf = false, neg_inf = false, pos_zero_added = false;
    detail::Natural positive, negative;
    auto take = [&](T v) {
        if (std::isnan(v)) {
            nan = true;
        } else if (std::isinf(v)) {
            (v > 0 ? pos_inf : neg_inf) = true;
        } else if (v != 0) {
            uint64_t s = 0;
            int64_t shift = 0;
            detail::decompose(v, s, shift);
            (v > 0 ? positive : negative).add_shifted(s, shift);
        }
    };
    take(initial);
    for (T v : contributions) {
        take(v);
        if (v == 0 && !std::signbit(v)) pos_zero_added = true;
    }
    if (nan || (pos_inf && neg_inf)) return std::numeric_limits<T>::quiet_NaN();
    if (pos_inf) return std::numeric_limits<T>::infinity();
    if (neg_inf) return -std::numeric_limits<T>::infinity();
    const int order = positive.compare(negative);
    if (order == 0) {
        const bool keep_negative = initial == 0 && std::signbit(initial) && !pos_zero_added;
        return keep_negative ? T(-0.0) : T(0.0);
    }
    return order > 0 ? detail::round_magnitude<T>(positive.minus(negative), false)
                     : detail::round_magnitude<T>(negative.minus(positive), true);
}

// a < b under the total order (neither a NaN): -0.0 < +0.0.
template <class T>
bool total_order_less(T a, T b) {
    if (a == b) return std::signbit(a) && !std::signbit(b);
    return a < b;
}

// The minimum of `initial` and `values` under the total order; a NaN wins.
template <class T>
T total_order_min(T initial, const std::vector<T>& values) {
    T best = initial;
    bool nan = std::isnan(initial);
    for (T v : values) {
        if (std::isnan(v))
            nan = true;
        else if (!nan && total_order_less(v, best))
            best = v;
    }
    return nan ? std::numeric_limits<T>::quiet_NaN() : best;
}

// The maximum of `initial` and `values` under the total order; a NaN wins.
template <class T>
T total_order_max(T initial, const std::vector<T>& values) {
    T best = initial;
    bool nan = std::isnan(initial);
    for (T v : values) {
        if (std::isnan(v))
            nan = true;
        else if (!nan && total_order_less(best, v))
            best = v;
    }
    return nan ? std::numeric_limits<T>::quiet_NaN() : best;
}

// ---------------------------------------------------------------------------------------------
// Whole launches: the oracle for every destination, inputs, and comparisons of results.

enum class Reduction { Sum, Min, Max };

// The documented result of every element of a target holding `initial` when thread t
// contributes values[t] to element index[t] (negate the values first for a subtraction).
template <class T>
std::vector<T> reduce_by_destination(Reduction r, const std::vector<T>& initial,
                                     const std::vector<int>& index, const std::vector<T>& values) {
    std::vector<std::vector<T>> by_destination(initial.size());
    for (size_t t = 0; t < index.size(); ++t)
        by_destination.at(static_cast<size_t>(index[t])).push_back(values[t]);
    std::vector<T> out(initial.size());
    for (size_t i = 0; i < initial.size(); ++i) {
        switch (r) {
            case Reduction::Sum: out[i] = exact_sum(initial[i], by_destination[i]); break;
            case Reduction::Min: out[i] = total_order_min(initial[i], by_destination[i]); break;
            case Reduction::Max: out[i] = total_order_max(initial[i], by_destination[i]); break;
        }
    }
    return out;
}

// A random finite value: random sign, random full significand, binary exponent uniform in
// [min_exp, max_exp]; exponents below the normal range give subnormals.
template <class T, class Rng>
T random_value(Rng& rng, int min_exp, int max_exp) {
    using Bits = BitsOf<T>;
    constexpr int kMantissa = std::numeric_limits<T>::digits - 1;
    constexpr int kBias = std::numeric_limits<T>::max_exponent - 1;
    const int e = min_exp + static_cast<int>(rng() % static_cast<uint64_t>(max_exp - min_exp + 1));
    const Bits mantissa = static_cast<Bits>(rng()) & ((Bits(1) << kMantissa) - 1);
    const Bits sign = static_cast<Bits>(rng() & 1) << (sizeof(T) * 8 - 1);
    const int biased = std::max(0, e + kBias);  // 0: a subnormal
    return std::bit_cast<T>(static_cast<Bits>(sign | (static_cast<Bits>(biased) << kMantissa) | mantissa));
}

// "" when `got` equals `want` element by element (bit for bit; with `any_nan`, any NaN matches
// a NaN), else the first differences and their count.
template <class T>
std::string mismatches(const std::vector<T>& got, const std::vector<T>& want, bool any_nan) {
    if (got.size() != want.size())
        return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    std::string out;
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (any_nan ? same_value(got[i], want[i]) : same_bits(got[i], want[i])) continue;
        if (++bad <= 5)
            out += "\n  [" + std::to_string(i) + "] got " + describe(got[i]) + ", want " + describe(want[i]);
    }
    if (bad == 0) return "";
    return out + "\n  " + std::to_string(bad) + " of " + std::to_string(got.size()) + " elements differ";
}

}  // namespace weft::test
