// Resolving deterministic state, one slot at a time, by the runtime (host code, or a GPU library
// kernel) or by a kernel resolving its own sums: records reduced into digits, digits carried into
// limbs and rounded once to nearest even, compact windows and spills, min/max keys.
#pragma once

#include "device/deterministic.h"

namespace wf {

// Adds one recorded contribution to a slot's digits and flags (the records strategy's reduce).
// `atomic` selects atomic updates, for digits shared by several threads.
template <class Target>
WEFT_FUNC void add_record(i64* words, u32* flags, u64 record, bool atomic) {
    using T = typename StateOf<Target>::type;  // what det_add_to_slot recorded
    const T v = bit_cast<T>(static_cast<typename Format<T>::Bits>(record));
    const u32 flag = special_flag(v);
    const Split<T> s = split(v);
    if (flag != 0 || s.significand == 0) {
        if (flag && atomic)
            or_flag(flags, flag);
        else
            *flags |= flag;
        return;
    }
    const Digits d = digits<T>(s);
    for (int k = 0; k < 3; ++k) {
        if (d.d[k] == 0) continue;
        if (atomic)
            add_word(words + d.first + k, d.d[k]);
        else
            words[d.first + k] += d.d[k];
    }
}

WEFT_FUNC int count_leading_zeros(u32 x) {
#if defined(__CUDACC__)
    return __clz(static_cast<int>(x));
#else
    return __builtin_clz(x);
#endif
}

// Carry-propagates `acc` (32-bit digits in 64-bit words) into 32-bit limbs of a two's
// complement integer; returns the final carry (its sign is the number's).
template <int kLimbs>
WEFT_FUNC i64 propagate(const i64* acc, u32* limb) {
    i64 carry = 0;
    for (int k = 0; k < kLimbs; ++k) {
        const i64 v = acc[k] + carry;
        limb[k] = static_cast<u32>(v & 0xffffffff);
        carry = v >> 32;  // arithmetic: floor division
    }
    return carry;
}

// Adds v * 2^position to `acc` (32-bit digits in 64-bit words, kLimbs of them): each digit gets
// less than 2^32 in magnitude.
template <int kLimbs>
WEFT_FUNC void add_at(i64* acc, i64 v, int position) {
    const int j = position >> 5;
    const int r = position & 31;
    const u64 low = static_cast<u64>(v) & 0xffffffffull;  // v = high * 2^32 + low
    const i64 high = v >> 32;                             // arithmetic
    const u64 low_shifted = low << r;                     // below 2^63
    const i64 high_shifted = high * (i64(1) << r);        // magnitude at most 2^62
    acc[j] += static_cast<i64>(low_shifted & 0xffffffffull);
    if (j + 1 < kLimbs) acc[j + 1] += static_cast<i64>(low_shifted >> 32) + (high_shifted & 0xffffffff);
    if (j + 2 < kLimbs) acc[j + 2] += high_shifted >> 32;  // arithmetic
}

// The exact sum in `acc` (32-bit digits in 64-bit words, units of S's smallest subnormal, kLimbs
// of them, wide enough for any sum that did not leave the range) plus `initial`, correctly
// rounded. The contributions' flags are `flags`. An element whose contributions sum to exactly
// zero with no special value among them keeps its bits (every strategy decides this from the
// value, not from how its state happens to hold it).
template <class T, int kLimbs>
WEFT_FUNC T round_limbs(i64* acc, u32 flags, T target_initial) {
    using S = typename StateOf<T>::type;  // the digits are in units of S's smallest subnormal
    using F = Format<T>;                  // the result's format
    u32 limb[kLimbs];
    {
        const i64 carry = propagate<kLimbs>(acc, limb);
        bool zero = carry == 0 && (flags & (kFlagPosInf | kFlagNegInf | kFlagNan | kFlagPosZero)) == 0;
        for (int k = 0; k < kLimbs && zero; ++k) zero = limb[k] == 0;
        if (zero) return target_initial;
    }
    const S initial = StateOf<T>::of(target_initial);
    flags |= special_flag(initial);
    const bool pos_inf = (flags & kFlagPosInf) != 0;
    const bool neg_inf = (flags & kFlagNegInf) != 0;
    using Bits = typename F::Bits;
    constexpr Bits kSign = static_cast<Bits>(Bits(1) << (sizeof(T) * 8 - 1));
    constexpr Bits kInf = static_cast<Bits>(static_cast<Bits>(F::kExponentMask) << F::kMantissaBits);
    if ((flags & kFlagNan) || (pos_inf && neg_inf)) return canonical_nan<T>();
    if (pos_inf) return bit_cast<T>(kInf);
    if (neg_inf) return bit_cast<T>(static_cast<Bits>(kInf | kSign));

    // Add the initial value's digits, then carry-propagate into limbs; the last limb keeps the
    // sign.
    const Split<S> s = split(initial);
    if (s.significand != 0) {
        const Digits d = digits<S>(s);
        for (int k = 0; k < 3 && d.first + k < kLimbs; ++k) acc[d.first + k] += d.d[k];
    }
    const bool negative = propagate<kLimbs>(acc, limb) < 0;
    if (negative) {  // magnitude = -value, limb by limb
        u64 borrow = 1;
        for (int k = 0; k < kLimbs; ++k) {
            const u64 v = static_cast<u64>(static_cast<u32>(~limb[k])) + borrow;
            limb[k] = static_cast<u32>(v);
            borrow = v >> 32;
        }
    }
    // The highest set bit, then a 64-bit window ending there; bits below it only matter as
    // the sticky bit. Every index is a compile-time constant once the loops unroll, so the
    // limbs stay in registers on a GPU.
    int top = -1;
    for (int k = 0; k < kLimbs; ++k)
        if (limb[k]) top = k * 32 + 31 - count_leading_zeros(limb[k]);
    if (top < 0) {
        // An exact zero: -0.0 only when the target held -0.0 and no +0.0 was added.
        const bool keep_negative = s.negative && s.significand == 0 && !(flags & kFlagPosZero);
        return bit_cast<T>(keep_negative ? kSign : Bits(0));
    }
    const int low = top >= 63 ? top - 63 : 0;
    u64 window = 0;
    bool sticky = false;
    for (int k = 0; k < kLimbs; ++k) {
        const int at = k * 32 - low;
        if (at >= 64) continue;
        if (at <= -32) {
            sticky = sticky || limb[k] != 0;
        } else if (at >= 0) {
            window |= static_cast<u64>(limb[k]) << at;
        } else {
            window |= static_cast<u64>(limb[k]) >> -at;
            sticky = sticky || (limb[k] & ((1u << -at) - 1)) != 0;
        }
    }
    // Rounded once, straight to T (a half type's sum is never rounded to float32 first).
    return bit_cast<T>(
        static_cast<Bits>(round_to_format<F>(negative, window, low + Format<S>::kUnit, sticky)));
}

// The most digit words a resolve holds in registers as limbs (round_limbs); more are streamed.
constexpr int kHeldWords = 16;

// round_limbs for many words without holding them: the same result, for sums whose words are
// too many to keep in registers (float64's 66, which as arrays went to local memory and held a
// resolve to one eighth of a GPU's threads). One pass carries the words into 32-bit limbs and
// keeps, of all the limbs, only two windows of four: the one ending one limb above the highest
// limb that is not 0 (where a positive sum's top lies) and the one ending one limb above the
// highest that is not all ones (a negative sum's), each with whether any limb below it is not
// 0. The magnitude of a negative sum is ~x + 1: its window is the complement, plus one where
// nothing below it is set, so both windows hold the top 96 bits or more of the magnitude, and
// whether any bit below is set: all that rounding needs. `words(k)` is word k (k < kWords).
template <class T, int kWords, class Words>
WEFT_FUNC T round_streamed(Words words, u32 flags, T target_initial) {
    using S = typename StateOf<T>::type;
    using F = Format<T>;
    using Bits = typename F::Bits;
    constexpr int kLimbs = kWords + 2;  // as resolve_sum: room for the carries and the sign
    constexpr u32 kSpecial = kFlagPosInf | kFlagNegInf | kFlagNan | kFlagPosZero;
    const S initial = StateOf<T>::of(target_initial);
    const Split<S> s = split(initial);
    const Digits d = digits<S>(s.significand != 0 ? s : Split<S>{false, 0, 0});
    // Two carry chains: the contributions alone (is their sum exactly zero?) and with the initial
    // value. window[0..3] = limbs k, k-1, k-2, k-3 (limbs below 0 are zero); `below`: any of
    // limbs 0..k-4 is not 0.
    i64 carry_sum = 0, carry = 0;
    u32 any_sum = 0;
    u32 window[4] = {0, 0, 0, 0};
    bool below = false;
    u32 pos[4] = {0, 0, 0, 0}, neg[4] = {0, 0, 0, 0};
    bool pos_below = false, neg_below = false, pos_found = false;
    int pos_at = 0, neg_at = 0;  // the limb index of window[0] when each was taken
#if defined(__CUDACC__)
#pragma unroll 4  // a few loads in flight, few registers
#endif
    for (int k = 0; k <= kLimbs; ++k) {
        const i64 w = k < kWords ? words(k) : 0;
        const i64 v_sum = w + carry_sum;
        any_sum |= static_cast<u32>(v_sum & 0xffffffff);
        carry_sum = v_sum >> 32;  // arithmetic
        const int j = k - d.first;
        // (Selected, not indexed: an indexed d.d would live in local memory on a GPU.)
        const i64 digit = k >= kLimbs ? 0 : j == 0 ? d.d[0] : j == 1 ? d.d[1] : j == 2 ? d.d[2] : 0;
        const i64 v = w + digit + carry;
        carry = v >> 32;
        below = below || window[3] != 0;
        window[3] = window[2];
        window[2] = window[1];
        window[1] = window[0];
        window[0] = static_cast<u32>(v & 0xffffffff);  // limb k (k == kLimbs: the sign's)
        if (window[1] != 0) {
            for (int i = 0; i < 4; ++i) pos[i] = window[i];
            pos_below = below;
            pos_at = k;
            pos_found = true;
        }
        if (window[1] != 0xffffffffu) {
            for (int i = 0; i < 4; ++i) neg[i] = window[i];
            neg_below = below;
            neg_at = k;
        }
    }
    if (carry_sum == 0 && any_sum == 0 && (flags & kSpecial) == 0) return target_initial;

    flags |= special_flag(initial);
    const bool pos_inf = (flags & kFlagPosInf) != 0;
    const bool neg_inf = (flags & kFlagNegInf) != 0;
    constexpr Bits kSign = static_cast<Bits>(Bits(1) << (sizeof(T) * 8 - 1));
    constexpr Bits kInf = static_cast<Bits>(static_cast<Bits>(F::kExponentMask) << F::kMantissaBits);
    if ((flags & kFlagNan) || (pos_inf && neg_inf)) return canonical_nan<T>();
    if (pos_inf) return bit_cast<T>(kInf);
    if (neg_inf) return bit_cast<T>(static_cast<Bits>(kInf | kSign));

    const bool negative = carry < 0;
    if (!negative && !pos_found) {
        // An exact zero: -0.0 only when the target held -0.0 and no +0.0 was added.
        const bool keep_negative = s.negative && s.significand == 0 && !(flags & kFlagPosZero);
        return bit_cast<T>(keep_negative ? kSign : Bits(0));
    }
    // The magnitude's top 128 bits from limb `at` down, as two 64-bit halves.
    u64 hi, lo;
    bool sticky;
    int at;
    if (negative) {
        hi = ~((static_cast<u64>(neg[0]) << 32) | neg[1]);
        lo = ~((static_cast<u64>(neg[2]) << 32) | neg[3]);
        if (!neg_below) {  // ~x + 1: the one reaches the window
            ++lo;
            if (lo == 0) ++hi;
        }
        sticky = neg_below;
        at = neg_at;
    } else {
        hi = (static_cast<u64>(pos[0]) << 32) | pos[1];
        lo = (static_cast<u64>(pos[2]) << 32) | pos[3];
        sticky = pos_below;
        at = pos_at;
    }
    // Bit b of the 128 is bit (at - 3) * 32 + b of the sum. The top lies in `hi` (a window ends
    // one limb above the limb that made it), as in round_limbs: a 64-bit window from the top.
    const int lead = 63 - (hi >> 32 ? 31 - count_leading_zeros(static_cast<u32>(hi >> 32)) + 32
                                    : 31 - count_leading_zeros(static_cast<u32>(hi)));
    const int base = (at - 3) * 32;
    const int top = base + 127 - lead;
    const int low = top >= 63 ? top - 63 : 0;
    const int shift = low - base;  // the window is bits [shift, shift + 64) of the 128, shift >= 1
    const u64 sig = shift >= 64 ? hi >> (shift - 64) : (hi << (64 - shift)) | (lo >> shift);
    sticky = sticky || (shift >= 64 ? (lo != 0 || (hi & ((u64(1) << (shift - 64)) - 1)) != 0)
                                    : (lo & ((u64(1) << shift) - 1)) != 0);
    return bit_cast<T>(static_cast<Bits>(round_to_format<F>(negative, sig, low + Format<S>::kUnit, sticky)));
}

// The slot's sum plus `initial`, correctly rounded. `words` are the slot's digits: float32's
// 9 held as limbs, float64's 66 streamed (round_streamed gives the same bits with few registers).
template <class T>
WEFT_FUNC T resolve_sum(const i64* words, u32 flags, T initial) {
    using S = typename StateOf<T>::type;
    constexpr int kWords = Exact<S>::kWords;
    if constexpr (kWords > kHeldWords) {
        return round_streamed<T, kWords>([words](int k) { return words[k]; }, flags, initial);
    } else {
        constexpr int kLimbs = kWords + 2;
        i64 acc[kLimbs];
        for (int k = 0; k < kLimbs; ++k) acc[k] = k < kWords ? words[k] : 0;
        return round_limbs<T, kLimbs>(acc, flags, initial);
    }
}

// The common case of a compact slot: only a window (no spill, no special value) and a finite
// initial value whose digits and the window's add up within 62 bits. Sets `out` to the sum,
// correctly rounded, and returns true; false when the general path must decide.
template <class T>
WEFT_FUNC bool resolve_window(const CompactCell& cell, T target_initial, T& out) {
    using S = typename StateOf<T>::type;
    using F = Format<T>;
    constexpr u32 kSpecial = kFlagPosInf | kFlagNegInf | kFlagNan | kFlagPosZero;
    if ((cell.meta & (kSpillReady | kSpecial)) != 0 || !(cell.meta & kAnchored)) return false;
    const i64 w = cell.window;
    if (w == 0) {  // the contributions cancel exactly: the element keeps its bits
        out = target_initial;
        return true;
    }
    constexpr i64 kLimit = i64(1) << 62;
    if (w >= kLimit || w <= -kLimit) return false;
    const S initial = StateOf<T>::of(target_initial);
    const u32 flag = special_flag(initial);
    if (flag & (kFlagPosInf | kFlagNegInf | kFlagNan)) return false;
    int base = static_cast<int>(cell.meta >> kAnchorShift);  // the sum's lowest bit
    i64 total = w;
    const Split<S> s = split(initial);
    if (s.significand != 0) {
        const i64 sig = static_cast<i64>(s.significand);
        if (s.position >= base) {
            const int shift = s.position - base;
            if (shift > 62 - (Format<S>::kMantissaBits + 1)) return false;  // sig << shift below 2^62
            total += s.negative ? -(sig << shift) : (sig << shift);
        } else {
            const int shift = base - s.position;
            const u64 magnitude = static_cast<u64>(w < 0 ? -w : w);
            if (shift > 62 || (magnitude >> (62 - shift)) != 0) return false;  // w << shift below 2^62
            total = static_cast<i64>(static_cast<u64>(w) << shift) + (s.negative ? -sig : sig);
            base = s.position;
        }
    }
    using Bits = typename F::Bits;
    if (total == 0) {  // the initial value cancelled by the contributions: +0.0
        out = bit_cast<T>(Bits(0));
        return true;
    }
    const bool negative = total < 0;
    const u64 magnitude = static_cast<u64>(negative ? -total : total);
    out = bit_cast<T>(
        static_cast<Bits>(round_to_format<F>(negative, magnitude, base + Format<S>::kUnit, false)));
    return true;
}

// A compact slot's sum plus `initial`, correctly rounded: its window and its spill block.
template <class T>
WEFT_FUNC T resolve_compact(const CompactCell& cell, const i64* block, T initial) {
    T fast;
    if (resolve_window<T>(cell, initial, fast)) return fast;
    // 384 bits: the spill's 336 and the sign, with room for the top word's pieces.
    constexpr int kLimbs = 12;
    i64 acc[kLimbs];
    for (int k = 0; k < kLimbs; ++k) acc[k] = 0;
    if (cell.meta & kSpillReady)
        for (int k = 0; k < kSpillWords; ++k) add_at<kLimbs>(acc, block[k], k * kSpillDigitBits);
    if (cell.meta & kAnchored) add_at<kLimbs>(acc, cell.window, static_cast<int>(cell.meta >> kAnchorShift));
    return round_limbs<T, kLimbs>(acc, cell.meta & (kFlagPosInf | kFlagNegInf | kFlagNan | kFlagPosZero),
                                  initial);
}

// Resolves slot `slot` of an exact sum target into its element; `clean` zeroes its words and
// flags once read (state kept for the next launch): for a GPU's resolve, a kernel of its own or
// the tail of the user's kernel. An untouched slot (every word and its flags zero) is left
// alone. float32's 9 words are read at once (rather than each after the previous one's test)
// and kept in registers, beside a dense target's element; float64's 66 are streamed, twice
// (round_streamed): held, they would take a thread's registers and local memory.
template <class T>
WEFT_FUNC void resolve_exact_slot(const DetTarget& t, i64 slot, bool clean) {
    using S = typename StateOf<T>::type;
    constexpr int kWords = Exact<S>::kWords;
    i64* words = t.words + slot * kWords;
    const u32 flags = t.flags[slot];
    T* element = reinterpret_cast<T*>(t.base + slot * static_cast<i64>(sizeof(T)));
    const T dense_initial = t.dims == 0 ? *element : T();
    if constexpr (kWords > kHeldWords) {
        i64 any = flags;
#if defined(__CUDACC__)
#pragma unroll 4
#endif
        for (int k = 0; k < kWords; ++k) any |= words[k];
        if (any == 0) return;
        if (t.dims != 0) element = reinterpret_cast<T*>(slot_address(t, slot, static_cast<i64>(sizeof(T))));
        *element = resolve_sum<T>(words, flags, t.dims == 0 ? dense_initial : *element);
    } else {
        constexpr int kLimbs = kWords + 2;
        i64 acc[kLimbs];
        i64 any = flags;
        for (int k = 0; k < kLimbs; ++k) {
            acc[k] = k < kWords ? words[k] : 0;
            any |= acc[k];
        }
        if (any == 0) return;
        if (t.dims != 0) element = reinterpret_cast<T*>(slot_address(t, slot, static_cast<i64>(sizeof(T))));
        *element = round_limbs<T, kLimbs>(acc, flags, t.dims == 0 ? dense_initial : *element);
    }
    if (clean) {
        for (int k = 0; k < kWords; ++k) words[k] = 0;
        t.flags[slot] = 0;
    }
}

// The anchor a compact slot keeps for the next launch, from its cell at the resolve: the anchor
// of a slot whose contributions all went to its window; none (kNoAnchor) for a slot that spilled
// (its contributions lay outside the window, perhaps because their magnitudes moved: it anchors
// afresh next launch) or that only special values reached. Special values say nothing about the
// magnitudes, so a flagged slot keeps its anchor.
WEFT_FUNC int next_anchor(u32 meta) {
    if (!(meta & kAnchored) || (meta & (kSpillClaimed | kSpillReady))) return kNoAnchor;
    return static_cast<int>(meta >> kAnchorShift);
}

// Resolves slot `slot` of a compact target into its element and leaves its cell ready for the
// next launch without zeroing: for a GPU's resolve, a kernel of its own or the tail of the user's
// kernel. The cell is one 16-byte load; the kept anchor and a dense target's element are loaded
// beside it (their addresses do not depend on the cell), so a touched slot costs one round trip
// to memory before its stores, and an untouched one loads 5 bytes it does not use.
//
// What the next launch finds, for every slot: either no kept anchor and the cell all zero, or
// kept anchor a, the cell's window 0 and its meta word kAnchored | a (no flags, spill unclaimed),
// so that a contribution in a's window can add to the window without reading the meta word.
// `write_anchors` (the resolve kernel, which runs between launches) keeps the anchor next_anchor
// gives, writing it where it changes (`anchors` null: none is kept). Without it (the user's kernel
// resolving itself: its contributions read the array through the read-only cache, so it must not
// change during the kernel) the array stays as it is and the cell follows it.
template <class T>
WEFT_FUNC void resolve_compact_slot(const DetTarget& t, i64 slot, bool write_anchors) {
#if defined(__CUDACC__)
    // One vector load: as a struct copy the window's load would wait for the meta word's test.
    const ulonglong2 raw = *reinterpret_cast<const ulonglong2*>(t.cells + slot);
    const CompactCell cell{static_cast<i64>(raw.x), static_cast<u32>(raw.y), static_cast<u32>(raw.y >> 32)};
#else
    const CompactCell cell = t.cells[slot];
#endif
    const int kept = t.anchors ? t.anchors[slot] : kNoAnchor;
    T* element = reinterpret_cast<T*>(t.base + slot * static_cast<i64>(sizeof(T)));
    T initial = t.dims == 0 ? *element : T();
    if (cell.meta == 0) return;  // no contribution reached it (so no anchor is kept)
    const u32 kept_meta = kAnchored | (static_cast<u32>(kept) << kAnchorShift);
    if (kept != kNoAnchor && cell.meta == kept_meta && cell.window == 0) return;  // nothing arrived
    // Only an anchor and a zero window: contributions that cancelled exactly, which leave the
    // element alone (as resolve_window does).
    if ((cell.meta & ~(~0u << kAnchorShift)) != kAnchored || cell.window != 0) {
        if (t.dims != 0) {
            element = reinterpret_cast<T*>(slot_address(t, slot, static_cast<i64>(sizeof(T))));
            initial = *element;
        }
        *element = resolve_compact<T>(cell, t.spill + slot * kSpillWords, initial);
    }
    const bool writes = write_anchors && t.anchors;
    const int next = writes ? next_anchor(cell.meta) : kept;
    if (writes && next != kept) t.anchors[slot] = static_cast<u8>(next);
    const u32 meta = next == kNoAnchor ? 0u : kAnchored | (static_cast<u32>(next) << kAnchorShift);
#if defined(__CUDACC__)
    *reinterpret_cast<ulonglong2*>(t.cells + slot) = ulonglong2{0, meta};
#else
    t.cells[slot] = CompactCell{0, meta, 0};
#endif
}

// The slot's winning key combined with `initial` under the total order.
template <class T>
WEFT_FUNC T resolve_minmax(typename KeyOf<T>::Key key, T initial, bool is_max) {
    // A key still at the family's identity (which no value maps to) got no contribution: the
    // element keeps its bits (a NaN its payload; a slot between a strided view's elements is
    // not the view's at all).
    if (key == (is_max ? KeyOf<T>::kMin : KeyOf<T>::kMax)) return initial;
    using S = typename StateOf<T>::type;
    const auto k0 = order_key(StateOf<T>::of(initial), is_max);
    // The winner is a T value (or the canonical NaN), so narrowing it back is exact.
    return static_cast<T>(from_order_key<S>(is_max ? (key > k0 ? key : k0) : (key < k0 ? key : k0)));
}

}  // namespace wf
