// Deterministic accumulation, shared by generated kernels (CPU and GPU) and the runtime: exact
// fixed-point digits for sums, order-preserving keys for min/max (the resolve: device/resolve.h).
//
// A sum's contributions are split into 32-bit digits of a fixed-point number whose unit is the
// smallest subnormal (2^-149 for float32, 2^-1074 for float64) and added with integer atomics
// into 64-bit words, one word per digit, so the accumulation is exact and its result does not
// depend on the order of the additions. A word gains less than 2^32 per contribution, so
// 2^31 - 1 contributions cannot overflow it; a launch that cannot be shown to stay below that
// (a data-dependent loop, or more contributions than that per target) carries: once a word's
// magnitude reaches 2^62 its multiple of 2^32 moves into the next word, so no word overflows
// however many contributions arrive. Infinities, NaNs and +0.0 are recorded as flags. The
// resolve pass adds the target's initial value, propagates carries and rounds once, to nearest
// even.
//
// Min and max map each value to an integer key whose order is a total order on floats
// (-inf < ... < -0.0 < +0.0 < ... < +inf; a NaN wins both min and max) and use integer atomics
// on a key per element; the resolve pass combines the winning key with the initial value.
//
// Each target element has a slot. A target whose elements lie densely (or nearly) has one slot
// per element address from its lowest element; a sparse view (a column, a strided slice) has
// one slot per element it can reach, found from the address by its strides.
#pragma once

namespace wf {

// A sparse view's slot. Each index is the offset times the rounded inverse of the stride, then
// corrected by one where the rounding crossed an integer: offsets are below 2^48, so the product
// is within 2^-4 of the quotient. (A 64-bit integer division would be a call on a GPU, and its
// registers would count against every kernel that accumulates.)
WEFT_ALWAYS_INLINE i64 slot_of(const DetTarget* t, const char* p, i64 element_size) {
    i64 offset = p - t->base;
    if (t->dims == 0) return offset / element_size;
    i64 slot = 0;
#if defined(__CUDACC__)
#pragma unroll 1  // unrolled, the loop would take registers from every kernel that accumulates
#endif
    for (int d = 0; d < t->dims; ++d) {
        i64 i = static_cast<i64>(static_cast<double>(offset) * t->inverse[d]);
        offset -= i * t->stride[d];
        if (offset < 0) {
            --i;
            offset += t->stride[d];
        } else if (offset >= t->stride[d]) {
            ++i;
            offset -= t->stride[d];
        }
        slot = slot * t->extent[d] + i;
    }
    return slot;
}

WEFT_FUNC char* slot_address(const DetTarget& t, i64 slot, i64 element_size) {
    if (t.dims == 0) return t.base + slot * element_size;
    i64 offset = 0;
    for (int d = t.dims - 1; d >= 0; --d) {
        offset += (slot % t.extent[d]) * t.stride[d];
        slot /= t.extent[d];
    }
    return t.base + offset;
}

// kFlagOverflow: a carrying slot's top word reached 2^62, a running sum far beyond the type's
// range (2^169 for float32, 2^1068 for float64) that the words cannot follow exactly.
enum : u32 { kFlagPosInf = 1, kFlagNegInf = 2, kFlagNan = 4, kFlagPosZero = 8, kFlagOverflow = 16 };

// The type whose digits and keys a target of T keeps. float16 and bfloat16 values convert to
// float32 exactly, so they use float32's state; only the resolve's rounding (to T) differs.
template <class T>
struct StateOf {
    using type = T;
    static WEFT_METHOD T of(T v) { return v; }
};
template <>
struct StateOf<f16> {
    using type = float;
    static WEFT_METHOD float of(f16 v) { return to_float(v); }
};
template <>
struct StateOf<bf16> {
    using type = float;
    static WEFT_METHOD float of(bf16 v) { return to_float(v); }
};

// A slot's number of digit words.
template <class T>
struct Exact {
    static constexpr int kWords = Exact<typename StateOf<T>::type>::kWords;
};
template <>
struct Exact<float> {
    static constexpr int kWords = 9;  // (254 + 24 bits) / 32, rounded up
};
template <>
struct Exact<double> {
    static constexpr int kWords = 66;  // (2046 + 53 bits) / 32, rounded up
};

// A finite, nonzero value as (negative, significand, bit position of its lowest bit in units of
// the smallest subnormal).
template <class T>
struct Split {
    bool negative;
    u64 significand;
    int position;
};

template <class T>
WEFT_FUNC Split<T> split(T v) {
    using E = Format<T>;
    const u64 bits = static_cast<u64>(bit_cast<typename E::Bits>(v));
    const int exponent = static_cast<int>((bits >> E::kMantissaBits) & E::kExponentMask);
    const u64 mantissa = bits & ((u64(1) << E::kMantissaBits) - 1);
    const bool negative = (bits >> (sizeof(T) * 8 - 1)) != 0;
    if (exponent == 0) return {negative, mantissa, 0};
    return {negative, mantissa | (u64(1) << E::kMantissaBits), exponent - 1};
}

// The special-value flag for `v`, or 0 when `v` is finite and nonzero (or -0.0, which changes
// nothing).
template <class T>
WEFT_FUNC u32 special_flag(T v) {
    using E = Format<T>;
    const u64 bits = static_cast<u64>(bit_cast<typename E::Bits>(v));
    const int exponent = static_cast<int>((bits >> E::kMantissaBits) & E::kExponentMask);
    const u64 mantissa = bits & ((u64(1) << E::kMantissaBits) - 1);
    const bool negative = (bits >> (sizeof(T) * 8 - 1)) != 0;
    if (exponent == E::kExponentMask) return mantissa ? kFlagNan : (negative ? kFlagNegInf : kFlagPosInf);
    if (exponent == 0 && mantissa == 0 && !negative) return kFlagPosZero;
    return 0;
}

// The digits of one contribution: up to three 32-bit digits starting at digit `first`.
struct Digits {
    int first;
    i64 d[3];
};

template <class T>
WEFT_FUNC Digits digits(const Split<T>& s) {
    const int shift = s.position & 31;
    const u64 low = (s.significand << shift) & 0xffffffffull;
    const u64 rest = shift ? s.significand >> (32 - shift) : s.significand >> 32;
    Digits out{s.position >> 5,
               {static_cast<i64>(low), static_cast<i64>(rest & 0xffffffffull), static_cast<i64>(rest >> 32)}};
    if (s.negative)
        for (int k = 0; k < 3; ++k) out.d[k] = -out.d[k];
    return out;
}

WEFT_FUNC void add_word(i64* w, i64 v) {
#if defined(__CUDACC__)
    atomicAdd(reinterpret_cast<u64*>(w), static_cast<u64>(v));
#else
    __atomic_fetch_add(w, v, __ATOMIC_RELAXED);
#endif
}

// add_word for a word known to be in global memory (a target's state). The state's pointers are
// read from memory, so the compiler cannot tell them from shared memory: atomicAdd becomes a
// generic atomic, which returns its result and falls back to a compare-and-swap loop for shared
// addresses. Naming the global space gives a non-returning reduction (RED), which the thread
// does not wait for. (This and the other global-space instructions below take the pointer as it
// is: a global address is its generic address. Converting it with __cvta_generic_to_global
// survived into the SASS and cost float64 kernels two registers, below full occupancy.)
WEFT_FUNC void add_global_word(i64* w, i64 v) {
#if defined(__CUDACC__)
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(w), "l"(v) : "memory");
#else
    __atomic_fetch_add(w, v, __ATOMIC_RELAXED);
#endif
}

// Adds `v` to `*w` and returns the new value (two's complement wrap-around, never reached).
WEFT_FUNC i64 add_word_fetch(i64* w, i64 v) {
#if defined(__CUDACC__)
    const u64 old = atomicAdd(reinterpret_cast<u64*>(w), static_cast<u64>(v));
#else
    const u64 old = static_cast<u64>(__atomic_fetch_add(w, v, __ATOMIC_RELAXED));
#endif
    return static_cast<i64>(old + static_cast<u64>(v));
}

// Replaces `*w` by `desired` if it holds `expected`; else sets `expected` to what it holds.
WEFT_FUNC bool swap_word(i64* w, i64& expected, i64 desired) {
#if defined(__CUDACC__)
    const u64 seen =
        atomicCAS(reinterpret_cast<u64*>(w), static_cast<u64>(expected), static_cast<u64>(desired));
    const bool swapped = seen == static_cast<u64>(expected);
    expected = static_cast<i64>(seen);
    return swapped;
#else
    return __atomic_compare_exchange_n(w, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

WEFT_FUNC void or_flag(u32* f, u32 v) {
#if defined(__CUDACC__)
    atomicOr(f, v);
#else
    __atomic_fetch_or(f, v, __ATOMIC_RELAXED);
#endif
}

WEFT_FUNC u32 load_meta(const u32* m) {
#if defined(__CUDACC__)
    return *static_cast<const volatile u32*>(m);
#else
    return __atomic_load_n(m, __ATOMIC_ACQUIRE);
#endif
}

// The meta word as the hot path reads it: a relaxed load from global memory (on a GPU from L2,
// without the volatile load's system scope). Nothing depends on its order with other accesses:
// a meta word's anchor never changes once set, and a stale 0 only sends the contribution to
// first_contribution, whose atomic sees the cell as it is.
WEFT_FUNC u32 peek_meta(const u32* m) {
#if defined(__CUDACC__) && __CUDA_ARCH__ >= 700
    u32 v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(m) : "memory");
    return v;
#elif defined(__CUDACC__)
    return *static_cast<const volatile u32*>(m);
#else
    return __atomic_load_n(m, __ATOMIC_RELAXED);
#endif
}

WEFT_FUNC u32 fetch_or_meta(u32* m, u32 v) {
#if defined(__CUDACC__)
    return atomicOr(m, v);
#else
    return __atomic_fetch_or(m, v, __ATOMIC_ACQ_REL);
#endif
}

// Replaces `*m` by `desired` if it holds `expected`; else sets `expected` to what it holds.
WEFT_FUNC bool swap_meta(u32* m, u32& expected, u32 desired) {
#if defined(__CUDACC__)
    const u32 seen = atomicCAS(m, expected, desired);
    const bool swapped = seen == expected;
    expected = seen;
    return swapped;
#else
    return __atomic_compare_exchange_n(m, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

// How a launch's threads update deterministic state. Shared: with atomic instructions (a GPU,
// or a CPU launch in several chunks). Serial: with plain loads and stores, for a CPU launch that
// runs as one chunk (wf::Ctx::serial): its state is its own, so nothing else touches it.
struct Shared {
    static WEFT_METHOD void add(i64* w, i64 v) { add_global_word(w, v); }
    static WEFT_METHOD i64 add_fetch(i64* w, i64 v) { return add_word_fetch(w, v); }
    static WEFT_METHOD bool swap(i64* w, i64& expected, i64 desired) {
        return swap_word(w, expected, desired);
    }
    static WEFT_METHOD void flag(u32* f, u32 v) { or_flag(f, v); }
    static WEFT_METHOD u32 load(const u32* m) { return load_meta(m); }
    static WEFT_METHOD u32 peek(const u32* m) { return peek_meta(m); }
    static WEFT_METHOD u32 fetch_or(u32* m, u32 v) { return fetch_or_meta(m, v); }
    static WEFT_METHOD bool swap(u32* m, u32& expected, u32 desired) {
        return swap_meta(m, expected, desired);
    }
    static WEFT_METHOD void store(i64* w, i64 v) {
#if defined(__CUDACC__)
        *w = v;
#else
        __atomic_store_n(w, v, __ATOMIC_RELAXED);
#endif
    }
};
struct Serial {
    static WEFT_METHOD void add(i64* w, i64 v) { *w += v; }
    static WEFT_METHOD i64 add_fetch(i64* w, i64 v) { return *w += v; }
    static WEFT_METHOD bool swap(i64* w, i64& expected, i64 desired) {
        if (*w != expected) {
            expected = *w;
            return false;
        }
        *w = desired;
        return true;
    }
    static WEFT_METHOD void flag(u32* f, u32 v) { *f |= v; }
    static WEFT_METHOD u32 load(const u32* m) { return *m; }
    static WEFT_METHOD u32 peek(const u32* m) { return *m; }
    static WEFT_METHOD u32 fetch_or(u32* m, u32 v) {
        const u32 old = *m;
        *m = old | v;
        return old;
    }
    static WEFT_METHOD bool swap(u32* m, u32& expected, u32 desired) {
        if (*m != expected) {
            expected = *m;
            return false;
        }
        *m = desired;
        return true;
    }
    static WEFT_METHOD void store(i64* w, i64 v) { *w = v; }
};

constexpr i64 kCarryAt = i64(1) << 62;

// Out of line on a GPU: the paths that spill or carry would otherwise take registers from every
// kernel that accumulates (the exact strategy's hot path included), and NVRTC would compile them
// again wherever they were inlined (carrying and spilling: 80 ms of a module's compile, issue 37).
#if defined(__CUDACC__)
#define WEFT_COLD static __device__ __noinline__
#else
#define WEFT_COLD static inline
#endif

// Adds `v` to word k of a slot's `limit` words, carrying: once the word's magnitude reaches
// 2^62, its multiple of 2^32 moves into word k + 1 (the swap makes one thread move it; the
// others see the small remainder and stop). Each single addition is below 2^40 (a warp's
// total of digits), so a word stays far below 2^63 while the carry is pending. The top word
// has nowhere to carry to and flags the slot instead.
template <class A = Shared>
WEFT_COLD void add_carrying(i64* words, int k, int limit, i64 v, u32* flags) {
    for (;;) {
        i64 now = A::add_fetch(words + k, v);
        if (now < kCarryAt && now > -kCarryAt) return;
        if (k + 1 == limit) {
            A::flag(flags, kFlagOverflow);
            return;
        }
        for (;;) {
            const i64 high = now >> 32;  // arithmetic: the remainder is in [0, 2^32)
            if (A::swap(words + k, now, now - high * 4294967296ll)) {
                v = high;
                break;
            }
            if (now < kCarryAt && now > -kCarryAt) return;
        }
        ++k;
    }
}

// ---- The compact strategy: one window per slot, spilling what it cannot hold ----
//
// A slot's cell holds a window of its exact sum: a 64-bit integer in units of 2^anchor (units of
// the smallest subnormal), where the first finite contribution sets the anchor kCompactBelow
// bits below its own lowest bit. A contribution whose lowest bit lies 0..kCompactSpan bits above
// the anchor is one integer atomic on the window (its significand shifted, below 2^40). Anything
// else, and a window's carry, goes to the slot's spill block: kSpillWords words of 48-bit digits
// (336 bits: 2^-149 .. 2^187) that carry like the exact strategy's words, zeroed by the first
// thread that spills into the slot (the others wait for it). The exact sum is the window plus
// the spill; the resolve adds both into limbs and rounds once, as for every strategy.
//
// Headroom: a window add is below 2^40, so 2^22 of them cannot reach 2^62. A target that may get
// more (TargetPlan::carrying) adds with the returned value and, at 2^62, moves the window's
// multiple of 2^32 to the spill (as add_carrying does; at most one add per resident thread,
// fewer than 2^20, can be pending, so the window stays below 2^63).
constexpr int kCompactSpan = 16;
constexpr int kCompactBelow = 8;
constexpr int kSpillDigitBits = 48;
// The top spill word flags the slot once it reaches 2^30: a running sum of 2^318 units of
// 2^-149, the bound the exact strategy's top word has.
constexpr i64 kSpillTopLimit = i64(1) << 30;

// Cell meta: the flags (kFlag*) in the low bits, then these, then the anchor from bit 8.
enum : u32 { kSpillClaimed = 32, kSpillReady = 64, kAnchored = 128 };
constexpr int kAnchorShift = 8;

// The slot's anchor, set from `position` (a contribution's lowest bit) if it has none. `meta` is
// the meta word as the caller last read it: an anchor, once set, stays for the launch, and a stale
// word only makes the compare-and-swap fail and return the word as it is.
template <class A = Shared>
WEFT_FUNC int anchor_of(CompactCell* cell, int position, u32 meta) {
    const int wanted = position > kCompactBelow ? position - kCompactBelow : 0;
    while (!(meta & kAnchored)) {
        if (A::swap(&cell->meta, meta, meta | kAnchored | (static_cast<u32>(wanted) << kAnchorShift)))
            return wanted;
    }
    return static_cast<int>(meta >> kAnchorShift);
}

// The slot's spill block, zeroed by the first thread that needs it; the others wait until it is.
template <class A = Shared>
WEFT_FUNC void spill_ready(CompactCell* cell, i64* block) {
    if (A::load(&cell->meta) & kSpillReady) return;
    if (!(A::fetch_or(&cell->meta, kSpillClaimed) & kSpillClaimed)) {
        for (int k = 0; k < kSpillWords; ++k) A::store(block + k, 0);
#if defined(__CUDACC__)
        __threadfence();  // the zeros before the flag, for every thread that sees the flag
#endif
        A::fetch_or(&cell->meta, kSpillReady);
        return;
    }
    while (!(A::load(&cell->meta) & kSpillReady)) {
#if defined(__CUDACC__)
        __nanosleep(32);
#endif
    }
#if defined(__CUDACC__)
    __threadfence();
#endif
}

// Adds `v` to spill word k, carrying: once a word's magnitude reaches 2^62 its multiple of 2^48
// moves into word k + 1 (one thread's swap moves it). The top word flags the slot instead, at
// kSpillTopLimit.
template <class A = Shared>
WEFT_FUNC void spill_add_word(CompactCell* cell, i64* block, int k, i64 v) {
    for (;;) {
        i64 now = A::add_fetch(block + k, v);
        if (k + 1 == kSpillWords) {
            if (now >= kSpillTopLimit || now <= -kSpillTopLimit) A::flag(&cell->meta, kFlagOverflow);
            return;
        }
        if (now < kCarryAt && now > -kCarryAt) return;
        for (;;) {
            const i64 high = now >> kSpillDigitBits;  // arithmetic: the remainder is in [0, 2^48)
            if (A::swap(block + k, now, now - high * (i64(1) << kSpillDigitBits))) {
                v = high;
                break;
            }
            if (now < kCarryAt && now > -kCarryAt) return;
        }
        ++k;
    }
}

// Adds v * 2^position (|v| < 2^32) to the slot's spill block.
template <class A = Shared>
WEFT_COLD void spill_add(CompactCell* cell, i64* block, i64 v, int position) {
    spill_ready<A>(cell, block);
    const bool negative = v < 0;
    const u64 m = static_cast<u64>(negative ? -v : v);
    const int k = position / kSpillDigitBits;
    const int r = position % kSpillDigitBits;
    constexpr u64 kDigit = (u64(1) << kSpillDigitBits) - 1;
    const i64 low = static_cast<i64>((m << r) & kDigit);
    const i64 high =
        r == 0 ? static_cast<i64>(m >> kSpillDigitBits) : static_cast<i64>(m >> (kSpillDigitBits - r));
    if (low) spill_add_word<A>(cell, block, k, negative ? -low : low);
    if (high) spill_add_word<A>(cell, block, k + 1, negative ? -high : high);
}

// A window that reached 2^62 (`now`): its multiple of 2^32 moves to the spill (one thread's
// swap moves it; the others see the small remainder and stop).
template <class A = Shared>
WEFT_COLD void compact_carry(CompactCell* cell, i64* block, i64 now, int anchor) {
    while (now >= kCarryAt || now <= -kCarryAt) {
        const i64 high = now >> 32;  // arithmetic: the remainder is in [0, 2^32)
        if (A::swap(&cell->window, now, now - high * 4294967296ll)) {
            spill_add<A>(cell, block, high, anchor + 32);
            return;
        }
    }
}

// A compact slot's contribution where the window cannot take it with one plain atomic: the slot
// has no anchor yet, the contribution lies outside the window, or the window may carry (kept out
// of the hot path: inline, it took two more registers in kernels with loops).
template <class A = Shared>
WEFT_COLD void compact_add_slow(CompactCell* cell, const DetTarget* t, i64 slot, bool negative,
                                u64 significand, int position, bool carrying, u32 meta) {
    i64* const block = t->spill + slot * kSpillWords;  // read here: the hot path does not need it
    const int anchor = anchor_of<A>(cell, position, meta);
    const int shift = position - anchor;
    if (shift < 0 || shift > kCompactSpan) {
        const i64 sig = static_cast<i64>(significand);
        spill_add<A>(cell, block, negative ? -sig : sig, position);
        return;
    }
    const i64 magnitude = static_cast<i64>(significand << shift);
    const i64 v = negative ? -magnitude : magnitude;
    if (!carrying) {
        A::add(&cell->window, v);
        return;
    }
    const i64 now = A::add_fetch(&cell->window, v);
    if (now >= kCarryAt || now <= -kCarryAt) compact_carry<A>(cell, block, now, anchor);
}

// A slot's first contribution, `v` in units of 2^anchor (`anchored` is the meta word that sets
// that anchor), on a cell that looked empty. On sm_90 one 128-bit compare-and-swap sets window
// and meta together while the cell is all zero, and the contribution is done (true). Elsewhere
// a compare-and-swap on the meta word sets the anchor and the caller adds the window (false).
// Either way `meta` becomes the cell's meta word, whoever anchored it: the anchor is the first
// contribution's, which only changes how the window and spill hold the exact sum.
template <class A = Shared>
WEFT_FUNC bool first_contribution(CompactCell* cell, u32 anchored, i64 v, u32& meta) {
#if defined(__CUDACC__) && __CUDA_ARCH__ >= 900
    u64 seen_window, seen_high;
    asm volatile(
        "{\n\t.reg .b128 expected, desired, seen;\n\t"
        "mov.b128 expected, {%2, %2};\n\t"
        "mov.b128 desired, {%3, %4};\n\t"
        "atom.relaxed.gpu.global.cas.b128 seen, [%5], expected, desired;\n\t"
        "mov.b128 {%0, %1}, seen;\n\t}"
        : "=l"(seen_window), "=l"(seen_high)
        : "l"(u64(0)), "l"(static_cast<u64>(v)), "l"(static_cast<u64>(anchored)), "l"(cell)
        : "memory");
    meta = static_cast<u32>(seen_high);  // the meta word is the low half of the cell's second word
    if (seen_window == 0 && seen_high == 0) {
        meta = anchored;
        return true;
    }
    return false;
#else
    (void)v;
    if (A::swap(&cell->meta, meta, anchored)) meta = anchored;
    return false;
#endif
}

// The anchor kept for `slot` from the launches before (kNoAnchor: none). The array is written
// only between launches (the publishing and resolving kernels), so on a GPU it is read through
// the read-only cache: one byte a slot, mostly an L1 hit where an SM sees many contributions per
// 128-byte line of it, instead of a request to L2 for the cell's meta word.
WEFT_FUNC int kept_anchor(const u8* anchors, i64 slot) {
#if defined(__CUDACC__)
    return __ldg(anchors + slot);
#else
    return anchors[slot];
#endif
}

// Adds a finite, nonzero float32 (the split of a state-type value) to a compact slot. Where the
// slot kept its anchor (`anchors`) and the contribution lies in its window: a read of the anchor
// and one non-returning atomic on the window (the cell's meta word holds that anchor: see
// resolve_compact_slot). Else one read of the meta word and one non-returning atomic; a slot's
// first contribution is one compare-and-swap on sm_90.
template <class A = Shared>
WEFT_FUNC void compact_add(CompactCell* cell, const DetTarget* t, const u8* anchors, i64 slot,
                           const Split<float>& s, bool carrying) {
    if (anchors && !carrying) {
        const int kept = kept_anchor(anchors, slot);
        const int shift = s.position - kept;  // negative for kNoAnchor
        if (shift >= 0 && shift <= kCompactSpan) {
            const i64 magnitude = static_cast<i64>(s.significand << shift);
            A::add(&cell->window, s.negative ? -magnitude : magnitude);
            return;
        }
        if (kept != kNoAnchor) {  // anchored since the launch began: no need to read the meta word
            compact_add_slow<A>(cell, t, slot, s.negative, s.significand, s.position, false,
                                kAnchored | (static_cast<u32>(kept) << kAnchorShift));
            return;
        }
    }
    u32 meta = A::peek(&cell->meta);
    if (meta == 0 && !carrying) {  // the slot's first contribution, probably: set the anchor
        const int anchor = s.position > kCompactBelow ? s.position - kCompactBelow : 0;
        const i64 magnitude = static_cast<i64>(s.significand << (s.position - anchor));  // below 2^32
        if (first_contribution<A>(cell, kAnchored | (static_cast<u32>(anchor) << kAnchorShift),
                                  s.negative ? -magnitude : magnitude, meta))
            return;
    }
    const int shift = s.position - static_cast<int>(meta >> kAnchorShift);
    if ((meta & kAnchored) && !carrying && shift >= 0 && shift <= kCompactSpan) {
        const i64 magnitude = static_cast<i64>(s.significand << shift);
        A::add(&cell->window, s.negative ? -magnitude : magnitude);
        return;
    }
    compact_add_slow<A>(cell, t, slot, s.negative, s.significand, s.position, carrying, meta);
}

#if defined(__CUDACC__)
// A block's private accumulator for one hot slot: the first slot a warp adds to claims it, and
// digits for that slot are added in shared memory and flushed once when the block ends, so a
// hot destination costs one global atomic per digit per block instead of one per contribution.
struct BlockPrivate {
    unsigned long long key;  // the claimed slot's words (0: unclaimed)
    i64 words[Exact<double>::kWords];
};

__device__ __forceinline__ void block_private_begin(BlockPrivate& bp) {
    for (int k = threadIdx.x; k < Exact<double>::kWords; k += blockDim.x) bp.words[k] = 0;
    if (threadIdx.x == 0) bp.key = 0;
    __syncthreads();
}

// Every thread of the block must reach this (kernel bodies return into the entry point).
__device__ __forceinline__ void block_private_end(BlockPrivate& bp) {
    __syncthreads();
    if (bp.key == 0) return;
    for (int k = threadIdx.x; k < Exact<double>::kWords; k += blockDim.x)
        if (bp.words[k] != 0) atomicAdd(reinterpret_cast<u64*>(bp.key) + k, static_cast<u64>(bp.words[k]));
}
#else
// On the CPU the same for one chunk of a launch's threads, which one worker runs: the first slot
// the chunk adds to is its hot slot, whose digits are added without atomics (no other worker
// sees them) and flushed once when the chunk ends. Integer addition is associative, so the
// words end with the same values whichever worker adds what.
struct BlockPrivate {
    unsigned long long key;  // the claimed slot's words (0: unclaimed)
    i64 words[Exact<double>::kWords];
};

WEFT_FUNC void block_private_begin(BlockPrivate& bp) {
    bp.key = 0;
    for (int k = 0; k < Exact<double>::kWords; ++k) bp.words[k] = 0;
}

WEFT_FUNC void block_private_end(BlockPrivate& bp) {
    if (bp.key == 0) return;
    for (int k = 0; k < Exact<double>::kWords; ++k)
        if (bp.words[k] != 0) add_word(reinterpret_cast<i64*>(bp.key) + k, bp.words[k]);
}
#endif

// Adds a digit total to word k of a slot: in the block's (CPU: the chunk's) private accumulator
// when the slot is (or can become) its hot slot, else with a global atomic. (Only for targets that do not
// carry: a block's words could not carry into each other without more state per block.)
template <class A = Shared>
WEFT_FUNC void add_digit(Ctx& ctx, i64* slot_words, int k, i64 total) {
#if !defined(__CUDACC__)
    if (Same<A, Serial>::value) {  // (the chunk is the launch: its own words are as private)
        slot_words[k] += total;
        return;
    }
#endif
#if defined(__CUDACC__)
    if (BlockPrivate* bp = static_cast<BlockPrivate*>(ctx.block_private)) {
        const unsigned long long key = reinterpret_cast<unsigned long long>(slot_words);
        unsigned long long seen = *static_cast<volatile unsigned long long*>(&bp->key);
        if (seen == 0) seen = atomicCAS(&bp->key, 0ull, key);
        if (seen == 0 || seen == key) {
            atomicAdd(reinterpret_cast<u64*>(&bp->words[k]), static_cast<u64>(total));
            return;
        }
    }
#else
    if (BlockPrivate* bp = static_cast<BlockPrivate*>(ctx.block_private)) {
        const unsigned long long key = reinterpret_cast<unsigned long long>(slot_words);
        if (bp->key == 0) bp->key = key;
        if (bp->key == key) {
            bp->words[k] += total;
            return;
        }
    }
#endif
    A::add(slot_words + k, total);
}

// The digits of one contribution to a slot, added to its words: lanes of a warp that add to
// the same slot first sum their digits exactly (as 16-bit halves, so the 32-bit warp
// reductions cannot overflow) and one lane then adds the totals; `add(k, total)` adds to word k.
template <class T, class Add>
WEFT_FUNC void add_digits(i64* slot_words, const Digits& d, Add add) {
#if defined(__CUDACC__) && __CUDA_ARCH__ >= 800
    const unsigned active = __activemask();
    const unsigned peers = __match_any_sync(active, reinterpret_cast<unsigned long long>(slot_words));
    if (__popc(peers) > 1) {
        const int lo = static_cast<int>(__reduce_min_sync(peers, static_cast<unsigned>(d.first)));
        const int hi = static_cast<int>(__reduce_max_sync(peers, static_cast<unsigned>(d.first))) +
                       (sizeof(T) == 4 ? 1 : 2);
        const bool leader = (threadIdx.x & 31) == static_cast<unsigned>(__ffs(peers) - 1);
        for (int k = lo; k <= hi && k < Exact<T>::kWords; ++k) {
            const int j = k - d.first;
            const i64 mine = (j >= 0 && j < 3) ? d.d[j] : 0;
            const unsigned low_sum = __reduce_add_sync(peers, static_cast<unsigned>(mine & 0xffff));
            const int high_sum =
                static_cast<int>(__reduce_add_sync(peers, static_cast<unsigned>(mine >> 16)));
            const i64 total = static_cast<i64>(high_sum) * 65536 + static_cast<i64>(low_sum);
            if (leader && total != 0) add(k, total);
        }
        return;
    }
#else
    (void)slot_words;
#endif
    for (int k = 0; k < 3; ++k)
        if (d.d[k] != 0) add(d.first + k, d.d[k]);
}

// A record's position: on a GPU the lanes of a warp appending to one target take their positions
// with one atomic (a hot target's cursor would otherwise take one per contribution).
template <class A = Shared>
WEFT_FUNC u64 take_record(u64* cursor) {
#if defined(__CUDACC__)
    const unsigned peers = __match_any_sync(__activemask(), reinterpret_cast<unsigned long long>(cursor));
    const int leader = __ffs(peers) - 1;
    const unsigned lane = threadIdx.x & 31;
    unsigned long long base = 0;
    if (lane == static_cast<unsigned>(leader))
        base = atomicAdd(reinterpret_cast<unsigned long long*>(cursor),
                         static_cast<unsigned long long>(__popc(peers)));
    base = __shfl_sync(peers, base, leader);
    return base + static_cast<u64>(__popc(peers & ((1u << lane) - 1)));
#else
    if (Same<A, Serial>::value) return (*cursor)++;
    return __atomic_fetch_add(cursor, u64(1), __ATOMIC_RELAXED);
#endif
}

#if !defined(__CUDACC__)
// compact_add in a serial CPU launch (wf::Ctx::serial). Without atomics a window can check its
// headroom after every add and carry when it runs out, so it takes contributions over a far
// wider range of magnitudes than a shared window (kSerialBelow below the first contribution's
// lowest bit, kSerialSpan above the anchor) and spills far less. The cell means what every
// strategy's cell means (its window in units of 2^anchor, the anchor in the meta word), so the
// resolve and a later shared launch into the same cached state read it alike.
constexpr int kSerialBelow = 24;
constexpr int kSerialSpan = 38;  // a contribution below 2^62, the window carrying at 2^62

WEFT_ALWAYS_INLINE void compact_add_serial(CompactCell* cell, const DetTarget* t, i64 slot,
                                           const Split<float>& s) {
    if (!(cell->meta & kAnchored)) {
        const int anchor = s.position > kSerialBelow ? s.position - kSerialBelow : 0;
        cell->meta |= kAnchored | (static_cast<u32>(anchor) << kAnchorShift);
    }
    const int anchor = static_cast<int>(cell->meta >> kAnchorShift);
    const int shift = s.position - anchor;
    if (shift < 0 || shift > kSerialSpan) {
        const i64 sig = static_cast<i64>(s.significand);
        spill_add<Serial>(cell, t->spill + slot * kSpillWords, s.negative ? -sig : sig, s.position);
        return;
    }
    const i64 magnitude = static_cast<i64>(s.significand << shift);
    const i64 now = cell->window += s.negative ? -magnitude : magnitude;
    if (now >= kCarryAt || now <= -kCarryAt)
        compact_carry<Serial>(cell, t->spill + slot * kSpillWords, now, anchor);
}
#endif

#if !defined(__CUDACC__)
// A serial CPU launch's add to a slot's float64 sum (DetTarget::sums, docs/design/0034): `v`, a
// normal float32, is added where the float64 sum stays exact; returns false, the sum unchanged,
// where it would not (the cell takes `v` then). The test: in round-to-nearest (which the runtime
// checks the launching thread is in), s = fl(a + b) is exact when fl(s - a) == b and
// fl(s - b) == a, since the difference with the operand of larger magnitude is exact
// (Fast2Sum's lemma), so whichever of the two it is proves s - a == b or s - b == a; two
// independent subtractions, where 2Sum's error takes a chain of five. Subnormal contributions
// take the cell: a thread's flush-to-zero or denormals-are-zero mode would change them. An
// infinity or a NaN fails the test (inf - inf and NaN compare unequal) and takes the cell, which
// flags it. (No multiplication: nothing to contract into an FMA.)
WEFT_ALWAYS_INLINE bool add_to_sum(double* sum, float v) {
    if ((bit_cast<u32>(v) & 0x7f800000u) == 0) return false;
    const double a = *sum, b = v;
    const double total = a + b;
    if (total - a != b || total - b != a) return false;
    *sum = total;
    return true;
}

// Adds the exact value of a float64 sum (a multiple of 2^-149: a sum of float32 values) to a
// compact cell, as float32-sized pieces of its significand, for the resolve (a slot whose sum and
// cell both hold contributions, or whose sum the fast resolve cannot round).
WEFT_FUNC void fold_sum(CompactCell* cell, const DetTarget* t, i64 slot, double sum) {
    const u64 bits = bit_cast<u64>(sum);
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
    u64 significand = (bits & ((u64(1) << 52) - 1)) | (exponent ? u64(1) << 52 : 0);
    if (significand == 0) return;
    int position = (exponent ? exponent - 1 : 0) - 1074 + 149;  // in units of 2^-149
    const int zeros = __builtin_ctzll(significand);
    significand >>= zeros;
    position += zeros;
    for (; significand != 0; significand >>= 24, position += 24) {
        const u64 piece = significand & 0xffffffu;
        if (piece) compact_add_serial(cell, t, slot, Split<float>{(bits >> 63) != 0, piece, position});
    }
}
#endif

// The compact strategy: adds `v` (a float32, the state type of every compact target) to a cell.
// On the CPU the worker's float64 sum of the slot (`sum`, or null) comes first, before the value
// is split: add_to_sum takes no special value, zero or subnormal.
template <class T, class A = Shared>
WEFT_ALWAYS_INLINE void compact_contribute(CompactCell* cell, const DetTarget* t, const u8* anchors, i64 slot,
                                           T v, bool carrying, double* sum = nullptr) {
#if !defined(__CUDACC__)
    if (sizeof(T) == 4 && sum && add_to_sum(sum, static_cast<float>(v))) return;
    // The cell is written (a flag, or the value): its block is marked for the resolve.
    const auto mark_cell = [&] {
        if (t->cells_used)
            __atomic_store_n(t->cells_used + (slot >> kTouchedShift), u32(1), __ATOMIC_RELAXED);
    };
#else
    (void)sum;
    const auto mark_cell = [] {};
#endif
    const u32 flag = special_flag(v);
    const Split<T> s = split(v);
    if (flag) {
        mark_cell();
        A::flag(&cell->meta, flag);
        return;
    }
    if (s.significand == 0) return;
    mark_cell();
    const Split<float> f{s.negative, s.significand, s.position};
#if !defined(__CUDACC__)
    if (Same<A, Serial>::value) return compact_add_serial(cell, t, slot, f);
#endif
    compact_add<A>(cell, t, anchors, slot, f, carrying);
}

// Appends (slot, value bits) to a records target: in the region of the thread where the target
// has regions (a thread past the last region's threads, which the runtime never launches, would
// count against the last region and be reported as an overflow). Out of line on a GPU: inline,
// the regions took two registers from every kernel that accumulates, whatever its strategy. Only
// the region's number is kept across the atomic, its bounds found after it: with them held, the
// function took the register that put every accumulating kernel at 33 (6 blocks of 256 per
// multiprocessor instead of 8).
template <class A = Shared>
WEFT_COLD void append_record(i64 thread, DetTarget* t, i64 slot, u64 bits) {
    int region = 0;
    if (t->regions > 1) {
        const i64 r = thread >> t->region_shift;
        region = r < t->regions ? static_cast<int>(r) : t->regions - 1;
    }
    const u64 at = take_record<A>(t->cursor + region * kCursorStride);
    const i64 first = region * t->region_records;  // 0 with one region
    const i64 left = t->capacity - first;
    const i64 room = t->regions > 1 && left > t->region_records ? t->region_records : left;
    if (at < static_cast<u64>(room)) {
        t->record_slots[first + static_cast<i64>(at)] = static_cast<u32>(slot);
        t->records[first + static_cast<i64>(at)] = bits;
    }
}

// The float64 sum of slot `slot` that worker `worker` adds to (DetTarget::sums), or null: on a
// GPU, for a target without sums, and for a worker beyond the copies the runtime made.
WEFT_ALWAYS_INLINE double* worker_sum(const DetTarget* t, i32 worker, i64 slot) {
#if !defined(__CUDACC__)
    if (t->sums && worker < t->sum_copies) return t->sums + worker * t->count + slot;
#else
    (void)t, (void)worker, (void)slot;
#endif
    return nullptr;
}

// Adds `v` (already negated for a subtraction, and in its state type) to slot `slot` of `t`.
template <class T, class A = Shared>
WEFT_ALWAYS_INLINE void det_add_to_slot(Ctx& ctx, DetTarget* t, i64 slot, T v) {
    // Compact: float32 state only (the runtime never gives float64 targets cells, and their
    // kernels need no compact code).
    if (sizeof(T) == 4 && t->cells) {
        compact_contribute<T, A>(t->cells + slot, t, t->anchors, slot, v, t->carrying != 0,
                                 worker_sum(t, ctx.worker, slot));
        return;
    }
    if (t->records) {
        append_record<A>(ctx.thread, t, slot, static_cast<u64>(bit_cast<typename Format<T>::Bits>(v)));
        return;
    }
    const u32 flag = special_flag(v);
    const Split<T> s = split(v);
    if (flag != 0 || s.significand == 0) {
        if (flag) A::flag(&t->flags[slot], flag);
        return;
    }
    const Digits d = digits<T>(s);
    i64* slot_words = t->words + slot * Exact<T>::kWords;
    if (t->carrying) {
        u32* slot_flags = t->flags + slot;
        add_digits<T>(slot_words, d, [&](int k, i64 total) {
            add_carrying<A>(slot_words, k, Exact<T>::kWords, total, slot_flags);
        });
    } else {
        add_digits<T>(slot_words, d, [&](int k, i64 total) { add_digit<A>(ctx, slot_words, k, total); });
    }
}

#if !defined(__CUDACC__)
// Marks the block of `slot` of a CPU sum as reached by the launch (DetTarget::touched): one
// word's load where it already is; the block's first contribution sets the word and appends the
// block. In a shared launch the exchange makes one thread append it, whichever comes first.
template <class A>
WEFT_ALWAYS_INLINE void touch(DetTarget* t, i64 slot) {
    const i64 block = slot >> kTouchedShift;
    u32* const mark = t->touched + block;
    if (Same<A, Serial>::value) {
        if (*mark) return;
        *mark = 1;
        t->touched_blocks[(*t->touched_count)++] = block;
        return;
    }
    if (__atomic_load_n(mark, __ATOMIC_RELAXED) || __atomic_exchange_n(mark, u32(1), __ATOMIC_RELAXED))
        return;
    t->touched_blocks[__atomic_fetch_add(t->touched_count, u64(1), __ATOMIC_RELAXED)] = block;
}
#endif

// det_add as the launch's threads update state (Shared or Serial).
template <class A, class T>
WEFT_ALWAYS_INLINE void det_add_as(Ctx& ctx, DetTarget* t, const T* p, T v) {
    // The cells' and anchors' addresses are read before the slot is found, so that their loads
    // overlap the loads the slot waits for instead of following them: the anchor's load waits
    // for both.
    CompactCell* const cells = t->cells;
    const u8* const anchors = t->anchors;
    const i64 slot = slot_of(t, reinterpret_cast<const char*>(p), static_cast<i64>(sizeof(T)));
#if !defined(__CUDACC__)
    if (t->touched) touch<A>(t, slot);
#endif
    if (sizeof(typename StateOf<T>::type) == 4 && cells)
        compact_contribute<typename StateOf<T>::type, A>(cells + slot, t, anchors, slot, StateOf<T>::of(v),
                                                         t->carrying != 0, worker_sum(t, ctx.worker, slot));
    else
        det_add_to_slot<typename StateOf<T>::type, A>(ctx, t, slot, StateOf<T>::of(v));
}

#if !defined(__CUDACC__)
// A CPU launch's float32 add or subtraction in its commonest case, alone: a dense target's slot
// whose block the launch already marked, and the worker's float64 sum of it staying exact
// (docs/design/0034). Needing no call, the out-of-line path then runs without a frame, and the
// inlined one in fewer instructions; every other case returns false and takes the whole path.
template <class Op, class T>
WEFT_ALWAYS_INLINE bool sum_first(DetTarget* t, const T* p, T v, i32 worker) {
    if constexpr (Same<T, float>::value && (Same<Op, OpAdd>::value || Same<Op, OpSub>::value)) {
        if (t->dims != 0) return false;
        const i64 slot = static_cast<i64>(static_cast<u64>(reinterpret_cast<const char*>(p) - t->base) / 4);
        double* const sum = worker_sum(t, worker, slot);
        if (!sum) return false;
        if (t->touched && !__atomic_load_n(t->touched + (slot >> kTouchedShift), __ATOMIC_RELAXED))
            return false;
        return add_to_sum(sum, Same<Op, OpSub>::value ? -v : v);
    }
    return false;
}
#endif

// Adds `v` (already negated for a subtraction) to the slot of element `p` of target `t`.
template <class T>
WEFT_ALWAYS_INLINE void det_add(Ctx& ctx, DetTarget* t, const T* p, T v) {
#if !defined(__CUDACC__)
    if (sum_first<OpAdd>(t, p, v, ctx.worker)) return;
    if (ctx.serial) return det_add_as<Serial>(ctx, t, p, v);
#endif
    det_add_as<Shared>(ctx, t, p, v);
}

// Order-preserving integer keys: a < b under the total order iff key(a) < key(b).
template <class T>
struct KeyOf;
template <>
struct KeyOf<float> {
    using Key = i32;
    static constexpr Key kMin = -2147483647 - 1;
    static constexpr Key kMax = 2147483647;
};
template <>
struct KeyOf<double> {
    using Key = i64;
    static constexpr Key kMin = -9223372036854775807ll - 1;
    static constexpr Key kMax = 9223372036854775807ll;
};
template <>
struct KeyOf<f16> : KeyOf<float> {};
template <>
struct KeyOf<bf16> : KeyOf<float> {};

// NaNs take the extreme key of the family, so that a NaN wins: kMax for max, kMin for min.
template <class T>
WEFT_FUNC typename KeyOf<T>::Key order_key(T v, bool for_max) {
    using K = typename KeyOf<T>::Key;
    if (v != v) return for_max ? KeyOf<T>::kMax : KeyOf<T>::kMin;
    const K bits = bit_cast<K>(v);
    return bits >= 0 ? bits : static_cast<K>(bits ^ KeyOf<T>::kMax);
}

// The NaN every deterministic result that is NaN has: the quiet NaN with no payload.
template <class T>
WEFT_FUNC T canonical_nan() {
    using Bits = typename Format<T>::Bits;
    constexpr int kMantissa = Format<T>::kMantissaBits;
    return bit_cast<T>(static_cast<Bits>((static_cast<Bits>(Format<T>::kExponentMask) << kMantissa) |
                                         (Bits(1) << (kMantissa - 1))));
}

template <class T>
WEFT_FUNC T from_order_key(typename KeyOf<T>::Key key) {
    using K = typename KeyOf<T>::Key;
    if (key == KeyOf<T>::kMax || key == KeyOf<T>::kMin) return canonical_nan<T>();
    return bit_cast<T>(key >= 0 ? key : static_cast<K>(key ^ KeyOf<T>::kMax));
}

template <class T>
WEFT_FUNC void det_minmax(const Ctx& ctx, DetTarget* t, const T* p, T v, bool is_max) {
    using K = typename KeyOf<T>::Key;
    const i64 slot = slot_of(t, reinterpret_cast<const char*>(p), static_cast<i64>(sizeof(T)));
    K* key = reinterpret_cast<K*>(t->words) + slot;
    const K k = order_key(StateOf<T>::of(v), is_max);
#if defined(__CUDACC__)
    (void)ctx;
    if (is_max)
        atomicMax(key, k);
    else
        atomicMin(key, k);
#else
    if (ctx.serial) {
        if (is_max ? k > *key : k < *key) *key = k;
        return;
    }
    K seen = __atomic_load_n(key, __ATOMIC_RELAXED);
    while ((is_max ? k > seen : k < seen) &&
           !__atomic_compare_exchange_n(key, &seen, k, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#endif
}

template <class Op>
struct DetFamily;
template <>
struct DetFamily<OpAdd> {
    template <class T>
    WEFT_ALWAYS_INLINE void apply(Ctx& ctx, DetTarget* t, T* p, T v) {
        det_add(ctx, t, p, v);
    }
};
template <>
struct DetFamily<OpSub> {
    template <class T>
    WEFT_ALWAYS_INLINE void apply(Ctx& ctx, DetTarget* t, T* p, T v) {
        det_add(ctx, t, p, static_cast<T>(-v));
    }
};
template <>
struct DetFamily<OpMin> {
    template <class T>
    WEFT_ALWAYS_INLINE void apply(Ctx& ctx, DetTarget* t, T* p, T v) {
        det_minmax(ctx, t, p, v, false);
    }
};
template <>
struct DetFamily<OpMax> {
    template <class T>
    WEFT_ALWAYS_INLINE void apply(Ctx& ctx, DetTarget* t, T* p, T v) {
        det_minmax(ctx, t, p, v, true);
    }
};

// The deterministic form of atomic_<op>(p, v) on an element of a target array.
template <class Op, class T>
WEFT_ALWAYS_INLINE void accumulate(Ctx& ctx, DetTarget* t, T* p, T v) {
    DetFamily<Op>::apply(ctx, t, p, v);
}

// The same, out of line: compiled once per operation and element type, however many sites call
// it. The emitter inlines accumulate at the sites of a kernel with few of them and calls this
// at each site of a kernel with more (codegen/emit.cpp, kInlinedAccumulations): inlined at a
// hundred sites, the whole path took the host compiler 39 s and NVRTC minutes (issue 37). It
// takes the context's fields by value: a reference would keep a GPU thread's context in local
// memory for the whole kernel.
// The CPU's out-of-line path tries the serial fast case, then calls the rest (WEFT_REST); on a
// GPU the rest is the path itself, one call per site.
#if defined(__CUDACC__)
#define WEFT_OUT_OF_LINE static __device__ __noinline__
#define WEFT_REST WEFT_ALWAYS_INLINE
#else
#define WEFT_OUT_OF_LINE static __attribute__((noinline))
#define WEFT_REST WEFT_OUT_OF_LINE
#endif
template <class Op, class T>
WEFT_REST void accumulate_rest(DetTarget* t, T* p, T v, i64 thread, void* block_private, bool serial,
                               i32 worker) {
    Ctx ctx{};
    ctx.thread = thread;
    ctx.block_private = block_private;
    ctx.serial = serial;
    ctx.worker = worker;
    accumulate<Op>(ctx, t, p, v);
}
#if defined(__CUDACC__)
template <class Op, class T>
WEFT_OUT_OF_LINE void accumulate_out_of_line(DetTarget* t, T* p, T v, i64 thread, void* block_private) {
    accumulate_rest<Op, T>(t, p, v, thread, block_private, false, 0);
}
template <class Op, class T>
WEFT_ALWAYS_INLINE void accumulate_call(const Ctx& ctx, DetTarget* t, T* p, T v) {
    accumulate_out_of_line<Op, T>(t, p, v, ctx.thread, ctx.block_private);
}
#else
template <class Op, class T>
WEFT_OUT_OF_LINE void accumulate_out_of_line(DetTarget* t, T* p, T v, i64 thread, void* block_private,
                                             bool serial, i32 worker) {
    if (sum_first<Op>(t, p, v, worker)) return;
    accumulate_rest<Op, T>(t, p, v, thread, block_private, serial, worker);
}
template <class Op, class T>
WEFT_ALWAYS_INLINE void accumulate_call(const Ctx& ctx, DetTarget* t, T* p, T v) {
    accumulate_out_of_line<Op, T>(t, p, v, ctx.thread, ctx.block_private, ctx.serial, ctx.worker);
}
#endif

}  // namespace wf
