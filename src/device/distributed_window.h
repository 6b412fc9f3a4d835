// The exact all-reduce's per-element arithmetic (docs/design/0028), compiled into the host library
// (weft_distributed) and into the NCCL engine's kernels (src/device/kernels/distributed_window.cu): a value's
// window fields, its two words inside an agreed window, and the rounding of the words' sums into a zero
// target. 64-bit words only (no 128-bit integers), so that host and GPU share one definition.
#pragma once

#include "device/resolve.h"

namespace wf {
namespace dist {

// Window fields: the highest set bit of a partial sum, or kSpecialTop where it holds an infinity or
// a NaN, or -1 where it is zero; then minus its lowest set bit, or kNoLow where it is zero or
// special. In units of the smallest subnormal of the state type.
constexpr i32 kSpecialTop = 0x7fffffff;
constexpr i32 kNoLow = -0x7fffffff - 1;

WEFT_FUNC int trailing_zeros64(u64 x) {
#if defined(__CUDACC__)
    return __ffsll(static_cast<long long>(x)) - 1;
#else
    return __builtin_ctzll(x);
#endif
}

template <class T>
WEFT_FUNC void window_fields(T v, i32& top, i32& neg_low) {
    using S = typename StateOf<T>::type;
    const S s = StateOf<T>::of(v);
    const Split<S> sp = split(s);
    if (special_flag(s) & (kFlagPosInf | kFlagNegInf | kFlagNan)) {
        top = kSpecialTop;
        neg_low = kNoLow;
    } else if (sp.significand == 0) {
        top = -1;
        neg_low = kNoLow;
    } else {
        top = sp.position + 63 - leading_zeros64(sp.significand);
        neg_low = -(sp.position + trailing_zeros64(sp.significand));
    }
}

// Whether an element's agreed fields fit the two words (`width` bits: 125 - 2 ceil(log2 ranks)).
WEFT_FUNC bool in_window(i32 top, i32 neg_low, int width) {
    return top != kSpecialTop && (top < 0 || static_cast<i64>(top) + neg_low + 1 <= width);
}

// The two words of (-1)^negative * (m_hi * 2^64 + m_lo): high * 2^k + low with low in [0, 2^k),
// k in [48, 63], the magnitude below 2^(k + 62).
WEFT_FUNC void two_words(bool negative, u64 m_hi, u64 m_lo, int k, i64& high, i64& low) {
    const u64 mask = (u64(1) << k) - 1;
    const u64 lo = m_lo & mask;
    const u64 hi = (m_hi << (64 - k)) | (m_lo >> k);
    if (!negative) {
        high = static_cast<i64>(hi);
        low = static_cast<i64>(lo);
    } else if (lo == 0) {
        high = -static_cast<i64>(hi);
        low = 0;
    } else {
        high = -static_cast<i64>(hi) - 1;
        low = static_cast<i64>((u64(1) << k) - lo);
    }
}

// A finite value's two words in units of 2^window_low (at or below its lowest set bit).
template <class T>
WEFT_FUNC void value_words(T v, int window_low, int k, i64& high, i64& low) {
    using S = typename StateOf<T>::type;
    const Split<S> sp = split(StateOf<T>::of(v));
    if (sp.significand == 0) {
        high = 0;
        low = 0;
        return;
    }
    const int zeros = trailing_zeros64(sp.significand);  // the position may lie below the window
    const u64 sig = sp.significand >> zeros;
    const int shift = sp.position + zeros - window_low;  // 0 <= shift < 125
    const u64 m_lo = shift < 64 ? sig << shift : 0;
    const u64 m_hi = shift == 0 ? 0 : shift < 64 ? sig >> (64 - shift) : sig << (shift - 64);
    two_words(sp.negative, m_hi, m_lo, k, high, low);
}

// The sum high * 2^k + low (ranks' words added) at `window_low`, into a target holding +0.0 or
// -0.0, correctly rounded to T: the sum is below 2^125 in magnitude, so two 64-bit halves hold it.
template <class T>
WEFT_FUNC T round_words(i64 high, i64 low, int window_low, int k) {
    using S = typename StateOf<T>::type;
    using F = Format<T>;
    u64 t_lo = (static_cast<u64>(high) << k) + static_cast<u64>(low);
    u64 t_hi = static_cast<u64>(high >> (64 - k)) + (t_lo < static_cast<u64>(low) ? 1 : 0);
    const bool negative = static_cast<i64>(t_hi) < 0;
    if (negative) {
        t_lo = ~t_lo + 1;
        t_hi = ~t_hi + (t_lo == 0 ? 1 : 0);
    }
    using Bits = typename F::Bits;
    if (t_hi == 0 && t_lo == 0) return bit_cast<T>(Bits(0));
    u64 sig = t_lo;
    int at = window_low;
    bool sticky = false;
    if (t_hi != 0) {  // the top 64 bits, the rest as the sticky bit
        const int r = 64 - leading_zeros64(t_hi);
        sig = (t_hi << (64 - r)) | (t_lo >> r);
        sticky = (t_lo & ((u64(1) << r) - 1)) != 0;
        at += r;
    }
    return bit_cast<T>(static_cast<Bits>(round_to_format<F>(negative, sig, at + Format<S>::kUnit, sticky)));
}

#if defined(__CUDACC__)
// The NCCL engine's kernels, grid-stride loops over n elements: window fields; the two words
// (elements outside the window counted in *outside, their words 0); the rounding of the summed
// words into the array.
template <class T>
__device__ void agree_kernel(const T* v, i32* fields, i64 n) {
    for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
         i += gridDim.x * static_cast<i64>(blockDim.x))
        window_fields<T>(v[i], fields[2 * i], fields[2 * i + 1]);
}

template <class T>
__device__ void pack_kernel(const T* v, const i32* fields, i64* words, unsigned long long* outside, i64 n,
                            int k, int width) {
    for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
         i += gridDim.x * static_cast<i64>(blockDim.x)) {
        const i32 top = fields[2 * i], neg_low = fields[2 * i + 1];
        i64 high = 0, low = 0;
        if (!in_window(top, neg_low, width))
            atomicAdd(outside, 1ull);
        else if (top >= 0)
            value_words<T>(v[i], -neg_low, k, high, low);
        words[2 * i] = high;
        words[2 * i + 1] = low;
    }
}

template <class T>
__device__ void round_kernel(T* out, const i32* fields, const i64* words, i64 n, int k) {
    for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
         i += gridDim.x * static_cast<i64>(blockDim.x))
        out[i] = fields[2 * i] < 0 ? bit_cast<T>(typename Format<T>::Bits(0))
                                   : round_words<T>(words[2 * i], words[2 * i + 1], -fields[2 * i + 1], k);
}
#endif

}  // namespace dist
}  // namespace wf
