// The fused slot entry's steps: a kernel's counting and execution passes in one cooperative
// kernel, on one counter element, one tile of blockDim threads per block (docs/design/0021).
#pragma once

namespace wf {

#if defined(__CUDACC__)
// A block's total word (FusedSlots::totals), and a group's (FusedSlots::groups): a ready bit on
// top, then an overflow bit, then the total as a 61-bit two's complement number (a block has at
// most 1,024 threads of one reservation each, of at most 2^31 - 1 slots or as many negative; a
// group 32 blocks). 0 until published; the launch's last block sets every word back to 0.
constexpr int kJoinedTotalBits = 61;
constexpr u64 kJoinedReady = 1ull << 63;
constexpr u64 kJoinedOverflow = 1ull << kJoinedTotalBits;
constexpr u64 kJoinedTotalMask = kJoinedOverflow - 1;
// Up to this many blocks every block reads every block's word; past it, each block reads the
// words of the blocks before it in its group of kJoinedGroup, and every group's word, which the
// group's last block publishes (16 times fewer reads and polls at 1,024 blocks, one more round
// trip on the way).
constexpr unsigned kJoinedFlat = 256;
constexpr unsigned kJoinedGroup = 32;

// What a thread of the fused entry carries from step to step (registers: one tile per block).
struct SlotJoin {
    u32 slot;    // the counter's value before the launch, then plus the slots before the thread
    i32 asked;   // the slots the counting phase's reservation asked for (0: none)
    i32 made;    // the reservations the counting phase made (0 or 1)
    u32 total;   // after the wait: the launch's slots, modulo 2^32
    u32 failed;  // after the wait: kSlotsOverflow or kSlotsTooMany (no thread executes)
};

__device__ __forceinline__ u32 load_relaxed(const u32* p) {
    u32 v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ u64 load_relaxed(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_relaxed(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

WEFT_FUNC i64 joined_total(u64 w) {
    return static_cast<i64>(w << (64 - kJoinedTotalBits)) >> (64 - kJoinedTotalBits);
}

WEFT_FUNC u64 joined_word(i64 total, bool overflow) {
    return kJoinedReady | (overflow ? kJoinedOverflow : 0) | (static_cast<u64>(total) & kJoinedTotalMask);
}

// At the start, every thread: the counter's value (nothing writes it before the last block's
// end), read while the counting phase runs.
WEFT_FUNC SlotJoin slot_join_begin(const FusedSlots& s) {
    SlotJoin j{};
    j.slot = load_relaxed(reinterpret_cast<const u32*>(s.single));
    return j;
}

// After the counting phase (every thread of the block, `ctx` its context, with no reservation
// past the launch's end): the thread's reservation, its slots' place in the block (a block
// scan, one barrier), and the block's total and overflow published by its first thread.
WEFT_FUNC void slot_join_counted(const FusedSlots& s, SlotJoin& j, const Ctx& ctx) {
    __shared__ i64 warp_sums[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    j.made = ctx.reservations > 0 ? 1 : 0;
    j.asked = j.made ? ctx.slot : 0;
    i64 inclusive = j.asked;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const i64 x = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= static_cast<unsigned>(offset)) inclusive += x;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    const bool overflow = __syncthreads_or(ctx.reservations > 1) != 0;
    i64 before = 0;
    for (unsigned w = 0; w < warp; ++w) before += warp_sums[w];
    j.slot += static_cast<u32>(before + inclusive - j.asked);
    if (threadIdx.x == 0) {
        i64 total = 0;
        for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_sums[w];
        store_relaxed(&s.totals[blockIdx.x], joined_word(total, overflow));
    }
}

// The words [0, count) of `words` once ready, read by the block's threads four at a time: this
// thread's share of their totals (those before `mine` in `before`, all in `all`) and overflow.
WEFT_FUNC void joined_read(const u64* words, unsigned count, unsigned mine, i64& before, i64& all,
                           bool& overflow) {
    constexpr unsigned kLoads = 4;
    for (unsigned first = threadIdx.x; first < count; first += kLoads * blockDim.x) {
        u64 w[kLoads];
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) {
            const unsigned b = first + k * blockDim.x;
            w[k] = b < count ? load_relaxed(&words[b]) : 0;
        }
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) {
            const unsigned b = first + k * blockDim.x;
            if (b >= count) continue;
            while ((w[k] & kJoinedReady) == 0) {
                __nanosleep(32);
                w[k] = load_relaxed(&words[b]);
            }
            const i64 v = joined_total(w[k]);
            if (b < mine) before += v;
            all += v;
            overflow = overflow || (w[k] & kJoinedOverflow) != 0;
        }
    }
}

// Every thread: waits for every block's total (all blocks are resident), and adds those before
// its block and all of them (one barrier). Every block finds the same `failed`.
WEFT_FUNC void slot_join_wait(const FusedSlots& s, SlotJoin& j) {
    __shared__ i64 warp_before[32], warp_all[32];
    const unsigned blocks = gridDim.x;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    i64 before = 0, all = 0;
    bool overflow = false;
    if (blocks <= kJoinedFlat) {
        joined_read(s.totals, blocks, blockIdx.x, before, all, overflow);
    } else {
        // The first warp: the words of the group's blocks before this one (all of the group's,
        // in its last block, which publishes their sum); then every thread: the groups' words.
        const unsigned group = blockIdx.x / kJoinedGroup, first = group * kJoinedGroup;
        const unsigned end = first + kJoinedGroup < blocks ? first + kJoinedGroup : blocks;
        if (warp == 0) {
            const unsigned b = first + lane;
            const bool closes = blockIdx.x == end - 1;
            const bool read = b < end && (closes || b < blockIdx.x);
            u64 w = read ? load_relaxed(&s.totals[b]) : kJoinedReady;
            while ((w & kJoinedReady) == 0) {
                __nanosleep(32);
                w = load_relaxed(&s.totals[b]);
            }
            i64 in_group = read ? joined_total(w) : 0;
            i64 earlier = b < blockIdx.x ? in_group : 0;
            for (int offset = 16; offset > 0; offset >>= 1) {
                in_group += __shfl_xor_sync(0xffffffffu, in_group, offset);
                earlier += __shfl_xor_sync(0xffffffffu, earlier, offset);
            }
            const bool group_overflow = __any_sync(0xffffffffu, read && (w & kJoinedOverflow) != 0);
            if (closes && lane == 0) store_relaxed(&s.groups[group], joined_word(in_group, group_overflow));
            if (lane == 0) before = earlier;
        }
        joined_read(s.groups, (blocks + kJoinedGroup - 1) / kJoinedGroup, group, before, all, overflow);
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        before += __shfl_xor_sync(0xffffffffu, before, offset);
        all += __shfl_xor_sync(0xffffffffu, all, offset);
    }
    if (lane == 0) {
        warp_before[warp] = before;
        warp_all[warp] = all;
    }
    const bool overflowed = __syncthreads_or(overflow) != 0;
    before = all = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) {
        before += warp_before[w];
        all += warp_all[w];
    }
    j.slot += static_cast<u32>(before);
    j.total = static_cast<u32>(all);
    j.failed = overflowed ? kSlotsOverflow : all > 2147483647ll ? kSlotsTooMany : 0u;
}

// After a thread's execution phase: whether it reserved differently from its counting phase.
WEFT_FUNC bool slot_join_diverged(const Ctx& ctx, const SlotJoin& j) {
    return ctx.diverged || ctx.reservations != j.made;
}

// At the end, every thread of the block: the block counts itself finished (after a barrier, with
// release and acquire order, so that every read of the counter and of the block totals in the
// launch comes first); the last block reports a failure or advances the counter, and sets the
// count and the block totals back to 0 for the next launch.
WEFT_FUNC void slot_join_end(const FusedSlots& s, const SlotJoin& j, bool diverged) {
    __shared__ bool last;
    const bool block_diverged = __syncthreads_or(diverged) != 0;
    if (threadIdx.x == 0) {
        const u64 mine = 1ull | (block_diverged ? 1ull << 32 : 0ull);
        u64 earlier;
        asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;"
                     : "=l"(earlier)
                     : "l"(s.finished), "l"(mine)
                     : "memory");
        last = static_cast<u32>(earlier) == gridDim.x - 1;
        if (last) {
            *s.finished = 0;
            const u32 failed = j.failed                                 ? j.failed
                               : (earlier >> 32) != 0 || block_diverged ? kSlotsDiverged
                                                                        : 0u;
            if (failed)
                atomicOr(s.report, static_cast<u64>(failed));
            else
                atomicAdd(reinterpret_cast<u32*>(s.single), j.total);
        }
    }
    __syncthreads();
    if (!last) return;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s.totals[b] = 0;
    if (gridDim.x > kJoinedFlat)
        for (unsigned g = threadIdx.x; g < (gridDim.x + kJoinedGroup - 1) / kJoinedGroup; g += blockDim.x)
            s.groups[g] = 0;
}
#endif

}  // namespace wf
