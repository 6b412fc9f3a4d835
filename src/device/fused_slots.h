// The fused slot entry's steps: a kernel's counting and execution passes in one cooperative
// kernel, on one counter element, one tile of blockDim threads per block (docs/design/0021).
#pragma once

namespace wf {

#if defined(__CUDACC__)
// A block's total word (FusedSlots::totals): a ready bit on top, then the block's overflow bit,
// then its total as a 43-bit two's complement number (at most 1,024 threads of one reservation
// each, of at most 2^31 - 1 slots or as many negative). 0 until the block publishes it; the
// launch's last block sets every word back to 0.
constexpr int kJoinedTotalBits = 43;
constexpr u64 kJoinedReady = 1ull << 63;
constexpr u64 kJoinedOverflow = 1ull << kJoinedTotalBits;
constexpr u64 kJoinedTotalMask = kJoinedOverflow - 1;

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
        store_relaxed(&s.totals[blockIdx.x], kJoinedReady | (overflow ? kJoinedOverflow : 0) |
                                                 (static_cast<u64>(total) & kJoinedTotalMask));
    }
}

// Every thread: waits for every block's total (all blocks are resident), and adds
// those before its block and all of them (one barrier). Every block finds the same `failed`.
WEFT_FUNC void slot_join_wait(const FusedSlots& s, SlotJoin& j) {
    __shared__ i64 warp_before[32], warp_all[32];
    constexpr unsigned kLoads = 4;  // words a thread reads at once
    const unsigned blocks = gridDim.x;
    i64 before = 0, all = 0;
    bool overflow = false;
    for (unsigned first = threadIdx.x; first < blocks; first += kLoads * blockDim.x) {
        u64 w[kLoads];
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) {
            const unsigned b = first + k * blockDim.x;
            w[k] = b < blocks ? load_relaxed(&s.totals[b]) : 0;
        }
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) {
            const unsigned b = first + k * blockDim.x;
            if (b >= blocks) continue;
            while ((w[k] & kJoinedReady) == 0) {
                __nanosleep(32);
                w[k] = load_relaxed(&s.totals[b]);
            }
            const i64 v = static_cast<i64>(w[k] << (64 - kJoinedTotalBits)) >> (64 - kJoinedTotalBits);
            if (b < blockIdx.x) before += v;
            all += v;
            overflow = overflow || (w[k] & kJoinedOverflow) != 0;
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        before += __shfl_xor_sync(0xffffffffu, before, offset);
        all += __shfl_xor_sync(0xffffffffu, all, offset);
    }
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
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
    if (last)
        for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s.totals[b] = 0;
}
#endif

}  // namespace wf
