// Half-precision types, shared by generated code (CPU and GPU) and the library's host types:
// float16 and bfloat16 stored as 16 bits, computed in float32 and rounded once, with conversions
// written in portable integer code so that every compiler gives the same bits.
#pragma once

#if defined(__CUDACC__)
#define WEFT_METHOD __device__ __forceinline__
#else
#define WEFT_METHOD inline
#endif

namespace wf {

using u16 = unsigned short;

// An IEEE binary format by its field widths. kUnit is log2 of its smallest subnormal.
template <class B, int Mantissa, int ExponentBits>
struct BinaryFormat {
    using Bits = B;
    static constexpr int kMantissaBits = Mantissa;
    static constexpr int kExponentBits = ExponentBits;
    static constexpr int kExponentMask = (1 << ExponentBits) - 1;
    static constexpr int kBias = (1 << (ExponentBits - 1)) - 1;
    static constexpr int kUnit = 1 - kBias - Mantissa;
};

struct f16;
struct bf16;

template <class T>
struct Format;
template <>
struct Format<float> : BinaryFormat<u32, 23, 8> {};
template <>
struct Format<double> : BinaryFormat<u64, 52, 11> {};
template <>
struct Format<f16> : BinaryFormat<u16, 10, 5> {};
template <>
struct Format<bf16> : BinaryFormat<u16, 7, 8> {};

WEFT_FUNC int leading_zeros64(u64 x) {
#if defined(__CUDACC__)
    return __clzll(static_cast<long long>(x));
#else
    return __builtin_clzll(x);
#endif
}

// The bits of format F nearest to (-1)^negative * (sig + tail) * 2^exponent, ties to even, where
// `sticky` says a tail in (0, 1) lies below sig's lowest bit. A magnitude that rounds past the
// largest finite value is infinity; one below half the smallest subnormal is a signed zero.
template <class F>
WEFT_FUNC u64 round_to_format(bool negative, u64 sig, int exponent, bool sticky) {
    constexpr int kM = F::kMantissaBits;
    const u64 sign = static_cast<u64>(negative) << (kM + F::kExponentBits);
    if (sig == 0) return sign;
    const int at = exponent - F::kUnit;              // sig's lowest bit, in units of the smallest subnormal
    const int top = at + 63 - leading_zeros64(sig);  // its highest bit
    const int lsb = top - kM > 0 ? top - kM : 0;     // the lowest bit the result keeps
    const int shift = lsb - at;
    u64 r = 0;
    if (shift <= 0) {
        r = sig << -shift;  // exact: sig has at most kM + 1 bits from lsb up
    } else if (shift <= 64) {
        const u64 kept = shift == 64 ? 0 : sig >> shift;
        const u64 rest = shift == 64 ? sig : sig & ((u64(1) << shift) - 1);
        const u64 half = u64(1) << (shift - 1);
        r = kept;
        if (rest > half || (rest == half && (sticky || (kept & 1)))) ++r;
    }  // else the value is below half a unit of lsb: zero
    // The exponent field is lsb (plus the significand's leading bit, which carries into it).
    constexpr u64 kInf = static_cast<u64>(F::kExponentMask) << kM;
    const u64 bits = (static_cast<u64>(lsb) << kM) + r;
    return sign | (bits >= kInf ? kInf : bits);
}

// Narrows a float or double (format S, bits b) to format F: a NaN stays a NaN, made quiet, with
// the top of its payload; infinities stay infinities.
template <class F, class S>
WEFT_FUNC typename F::Bits narrow_bits(typename S::Bits b) {
    constexpr int kSM = S::kMantissaBits;
    const bool negative = (b >> (kSM + S::kExponentBits)) != 0;
    const int e = static_cast<int>((b >> kSM) & static_cast<typename S::Bits>(S::kExponentMask));
    const u64 m = static_cast<u64>(b & ((static_cast<typename S::Bits>(1) << kSM) - 1));
    using B = typename F::Bits;
    if (e == S::kExponentMask) {
        const u64 sign = static_cast<u64>(negative) << (F::kMantissaBits + F::kExponentBits);
        const u64 inf = static_cast<u64>(F::kExponentMask) << F::kMantissaBits;
        if (m == 0) return static_cast<B>(sign | inf);
        const u64 quiet = u64(1) << (F::kMantissaBits - 1);
        return static_cast<B>(sign | inf | quiet | (m >> (kSM - F::kMantissaBits)));
    }
    const u64 sig = e ? m | (u64(1) << kSM) : m;
    return static_cast<B>(round_to_format<F>(negative, sig, (e ? e : 1) - S::kBias - kSM, false));
}

// Widens format F's bits (fewer exponent bits than float32's, or the same) to float32's bits:
// exact, NaN payloads kept.
template <class F>
WEFT_FUNC u32 widen_bits(u16 h) {
    constexpr int kM = F::kMantissaBits;
    if (F::kExponentBits == 8) return static_cast<u32>(h) << 16;  // bfloat16 is float32's top half
    const u32 sign = static_cast<u32>(h >> 15) << 31;
    const int e = (h >> kM) & F::kExponentMask;
    u32 m = h & ((1u << kM) - 1);
    if (e == F::kExponentMask) return sign | 0x7f800000u | (m << (23 - kM));
    if (e == 0) {
        if (m == 0) return sign;
        const int top = 63 - leading_zeros64(m);  // a subnormal: normal in float32
        return sign | (static_cast<u32>(top + F::kUnit + 127) << 23) | ((m << (23 - top)) & 0x7fffffu);
    }
    return sign | (static_cast<u32>(e - F::kBias + 127) << 23) | (m << (23 - kM));
}

// The two half types. Each constructor rounds once to nearest even; to_float is exact.
#define WEFT_HALF_TYPE(H)                                                                                    \
    struct H {                                                                                               \
        u16 bits;                                                                                            \
        H() = default;                                                                                       \
        explicit WEFT_METHOD H(float x) : bits(narrow_bits<Format<H>, Format<float>>(bit_cast<u32>(x))) {}   \
        explicit WEFT_METHOD H(double x) : bits(narrow_bits<Format<H>, Format<double>>(bit_cast<u64>(x))) {} \
        explicit WEFT_METHOD H(u64 x)                                                                        \
            : bits(static_cast<u16>(round_to_format<Format<H>>(false, x, 0, false))) {}                      \
        explicit WEFT_METHOD H(i64 x)                                                                        \
            : bits(static_cast<u16>(round_to_format<Format<H>>(                                              \
                  x < 0, x < 0 ? u64(0) - static_cast<u64>(x) : static_cast<u64>(x), 0, false))) {}          \
        explicit WEFT_METHOD H(i32 x) : H(static_cast<i64>(x)) {}                                            \
        explicit WEFT_METHOD H(u32 x) : H(static_cast<u64>(x)) {}                                            \
        explicit WEFT_METHOD H(bool x) : H(static_cast<u64>(x ? 1 : 0)) {}                                   \
        static WEFT_METHOD H from_bits(u16 b) {                                                              \
            H h;                                                                                             \
            h.bits = b;                                                                                      \
            return h;                                                                                        \
        }                                                                                                    \
    };
WEFT_HALF_TYPE(f16)
WEFT_HALF_TYPE(bf16)
#undef WEFT_HALF_TYPE

template <>
struct IsHalf<f16> {
    static constexpr bool value = true;
};
template <>
struct IsHalf<bf16> {
    static constexpr bool value = true;
};

template <>
struct BitsOf<f16> {
    using type = u16;
};
template <>
struct BitsOf<bf16> {
    using type = u16;
};

// Arithmetic as a GPU does it: in float32, rounded once (exact for + - * /, whose float32 results
// are never double-rounded to 11 or 8 bits). Negation and abs only change the sign bit.
#define WEFT_HALF_OPS(H)                                                                 \
    WEFT_FUNC float to_float(H h) {                                                      \
        return bit_cast<float>(widen_bits<Format<H>>(h.bits));                           \
    }                                                                                    \
    WEFT_FUNC H operator+(H a, H b) {                                                    \
        return H(to_float(a) + to_float(b));                                             \
    }                                                                                    \
    WEFT_FUNC H operator-(H a, H b) {                                                    \
        return H(to_float(a) - to_float(b));                                             \
    }                                                                                    \
    WEFT_FUNC H operator*(H a, H b) {                                                    \
        return H(to_float(a) * to_float(b));                                             \
    }                                                                                    \
    WEFT_FUNC H operator/(H a, H b) {                                                    \
        return H(to_float(a) / to_float(b));                                             \
    }                                                                                    \
    WEFT_FUNC H operator-(H a) {                                                         \
        return H::from_bits(static_cast<u16>(a.bits ^ 0x8000u));                         \
    }                                                                                    \
    WEFT_FUNC bool operator==(H a, H b) {                                                \
        return to_float(a) == to_float(b);                                               \
    }                                                                                    \
    WEFT_FUNC bool operator!=(H a, H b) {                                                \
        return to_float(a) != to_float(b);                                               \
    }                                                                                    \
    WEFT_FUNC bool operator<(H a, H b) {                                                 \
        return to_float(a) < to_float(b);                                                \
    }                                                                                    \
    WEFT_FUNC bool operator<=(H a, H b) {                                                \
        return to_float(a) <= to_float(b);                                               \
    }                                                                                    \
    WEFT_FUNC bool operator>(H a, H b) {                                                 \
        return to_float(a) > to_float(b);                                                \
    }                                                                                    \
    WEFT_FUNC bool operator>=(H a, H b) {                                                \
        return to_float(a) >= to_float(b);                                               \
    }                                                                                    \
    WEFT_FUNC H abs(H a) {                                                               \
        return H::from_bits(static_cast<u16>(a.bits & 0x7fffu));                         \
    }                                                                                    \
    WEFT_FUNC H sqrt(H a) {                                                              \
        return H(sqrt(to_float(a)));                                                     \
    }                                                                                    \
    WEFT_FUNC H floor(H a) {                                                             \
        return H(floor(to_float(a)));                                                    \
    }                                                                                    \
    WEFT_FUNC H ceil(H a) {                                                              \
        return H(ceil(to_float(a)));                                                     \
    }                                                                                    \
    WEFT_FUNC H sin(H a) {                                                               \
        return H(sin(to_float(a)));                                                      \
    }                                                                                    \
    WEFT_FUNC H cos(H a) {                                                               \
        return H(cos(to_float(a)));                                                      \
    }                                                                                    \
    WEFT_FUNC H exp(H a) {                                                               \
        return H(exp(to_float(a)));                                                      \
    }                                                                                    \
    WEFT_FUNC H log(H a) {                                                               \
        return H(log(to_float(a)));                                                      \
    }                                                                                    \
    WEFT_FUNC H min(H a, H b) {                                                          \
        return H(min(to_float(a), to_float(b)));                                         \
    }                                                                                    \
    WEFT_FUNC H max(H a, H b) {                                                          \
        return H(max(to_float(a), to_float(b)));                                         \
    }                                                                                    \
    WEFT_FUNC H pow(H a, H b) {                                                          \
        return H(pow(to_float(a), to_float(b)));                                         \
    }                                                                                    \
    WEFT_FUNC H fmod(H a, H b) {                                                         \
        return H(fmod(to_float(a), to_float(b)));                                        \
    }                                                                                    \
    WEFT_FUNC H atomic_cas(H* p, H compare, H value) {                                   \
        return H::from_bits(cas16(reinterpret_cast<u16*>(p), compare.bits, value.bits)); \
    }

#if defined(__CUDACC__)
// The aligned 32-bit word that holds the 16 bits at p, and the bit where they start in it. The
// word's other half lies in the same allocation (device allocations are aligned to far more
// than 4 bytes): an element of the same array, or padding.
struct HalfWord {
    u32* word;
    int shift;  // 0 or 16
};
WEFT_FUNC HalfWord half_word(u16* p) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(p);
    return {reinterpret_cast<u32*>(address & ~3ull), static_cast<int>(address & 2) * 8};
}
#endif

// Compare-and-swap of 16 bits. A GPU has no portable 16-bit CAS: swap the enclosing aligned
// 32-bit word, whose other half is written back unchanged.
WEFT_FUNC u16 cas16(u16* p, u16 compare, u16 value) {
#if defined(__CUDACC__)
    const HalfWord w = half_word(p);
    u32 old = *static_cast<volatile u32*>(w.word);
    for (;;) {
        const u16 seen = static_cast<u16>(old >> w.shift);
        if (seen != compare) return seen;
        const u32 next = (old & ~(0xffffu << w.shift)) | (static_cast<u32>(value) << w.shift);
        const u32 now = atomicCAS(w.word, old, next);
        if (now == old) return compare;
        old = now;
    }
#else
    u16 expected = compare;
    __atomic_compare_exchange_n(p, &expected, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#endif
}

WEFT_HALF_OPS(f16)
WEFT_HALF_OPS(bf16)
#undef WEFT_HALF_OPS

#if defined(__CUDACC__)
// Atomic add on a GPU, returning the old value. A GPU has no single-half add instruction: PTX's
// atom.add.noftz.f16 and .bf16 assemble to a compare-and-swap loop on the enclosing word (seen
// in the SASS of sm_75 to sm_90). Its packed form on that word is one instruction (f16x2 from
// sm_60, bf16x2 from sm_90): it adds v to this half and -0 to the other, which leaves the other
// as it was (x + -0 is x, signed zeros and subnormals included; a NaN stays a NaN, though which
// NaN is the device's). The instruction rounds the exact sum once to nearest even and keeps
// subnormals (.noftz), as the loop's float32 sum rounded once does: the same bits. Kernel
// arrays are device allocations, so the address is global: with .global, ptxas makes an atom
// whose old value goes unused a RED (no return trip), and needs no shared-memory fallback.
// Without the instruction (bfloat16 before sm_90), the loop.
//
// The one exception is a NaN in the other half: the instruction would make it the device's
// canonical NaN, changing an element nobody wrote. So the word is read first and such an add
// takes the loop (a neighbour that becomes NaN during the add, by a store of the same launch,
// may still come out as the canonical NaN).
WEFT_FUNC u32 half_pair_operand(HalfWord w, u16 v) {
    return (static_cast<u32>(v) << w.shift) | (0x8000u << (16 - w.shift));
}
// Whether the half beside p's in its word holds a NaN (exponent bits all set in `exponent`,
// some bit of `mantissa`).
WEFT_FUNC bool neighbour_is_nan(HalfWord w, u32 exponent, u32 mantissa) {
    const u32 other = (*reinterpret_cast<volatile u32*>(w.word) >> (16 - w.shift)) & 0xffffu;
    return (other & exponent) == exponent && (other & mantissa) != 0;
}

WEFT_FUNC f16 atomic_add16(f16* p, f16 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
    const HalfWord w = half_word(&p->bits);
    if (neighbour_is_nan(w, 0x7c00u, 0x03ffu)) return atomic_update(p, [v](f16 old) { return old + v; });
    u32 old;
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1; atom.global.add.noftz.f16x2 %0, [g], %2; }"
                 : "=r"(old)
                 : "l"(w.word), "r"(half_pair_operand(w, v.bits))
                 : "memory");
    return f16::from_bits(static_cast<u16>(old >> w.shift));
#else
    return atomic_update(p, [v](f16 old) { return old + v; });
#endif
}

WEFT_FUNC bf16 atomic_add16(bf16* p, bf16 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const HalfWord w = half_word(&p->bits);
    if (neighbour_is_nan(w, 0x7f80u, 0x007fu)) return atomic_update(p, [v](bf16 old) { return old + v; });
    u32 old;
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1; atom.global.add.noftz.bf16x2 %0, [g], %2; }"
                 : "=r"(old)
                 : "l"(w.word), "r"(half_pair_operand(w, v.bits))
                 : "memory");
    return bf16::from_bits(static_cast<u16>(old >> w.shift));
#else
    return atomic_update(p, [v](bf16 old) { return old + v; });
#endif
}
#endif

}  // namespace wf
