// Deterministic slot allocation (the spec's Pattern 2), shared by generated kernels and the
// runtime. The counting pass records each thread's reservations in program order at fixed
// positions (thread * per_thread + n-th reservation); the runtime turns them into slots (prefix
// sums per counter element, in thread order); the execution pass checks that it makes the same
// reservations and returns the slots.
#pragma once

namespace wf {

WEFT_FUNC void set_status(u32* status, u32 bit) {
#if defined(__CUDACC__)
    atomicOr(status, bit);
#else
    __atomic_fetch_or(status, bit, __ATOMIC_RELAXED);
#endif
}

WEFT_FUNC u64 slot_key(const SlotCounter* c, const i32* p) {
    return (c->id << 40) | static_cast<u64>((reinterpret_cast<const char*>(p) - c->base) / 4);
}

// Counting pass: records the reservation; the slot it returns is a placeholder.
WEFT_FUNC i32 reserve_count(Ctx& ctx, void* det, i32* p, i32 n) {
    const SlotCounter* c = static_cast<const SlotCounter*>(det);
    SlotLaunch* launch = c->launch;
    const i64 at = ctx.reservations++;
    if (at >= launch->per_thread) {
        set_status(launch->status, kSlotsOverflow);
        return 0;
    }
    const i64 r = ctx.thread * launch->per_thread + at;
    launch->keys[r] = slot_key(c, p);
    launch->counts[r] = n;
    return 0;
}

// Execution pass: the slot, after checking the reservation matches the counting pass's. The
// counter still holds its value from before the launch (it is updated after this pass).
WEFT_FUNC i32 reserve(Ctx& ctx, void* det, i32* p, i32 n) {
    const SlotCounter* c = static_cast<const SlotCounter*>(det);
    SlotLaunch* launch = c->launch;
    const i64 at = ctx.reservations++;
    const i64 r = ctx.thread * launch->per_thread + at;
    if (at >= launch->per_thread || launch->keys[r] != slot_key(c, p) || launch->counts[r] != n) {
        set_status(launch->status, kSlotsDiverged);
        return 0;
    }
    return *p + launch->offsets[r];
}

// The execution pass does nothing when the counting pass overflowed, or a counter element would
// pass 2^31 - 1 slots, so nothing is written.
WEFT_FUNC bool slots_overflowed(void* det) {
    return (*static_cast<const SlotCounter*>(det)->launch->status & (kSlotsOverflow | kSlotsTooMany)) != 0;
}

// At the end of each thread: the counting pass stores how many reservations it made; the
// execution pass checks it made as many.
WEFT_FUNC void reservations_end(Ctx& ctx, void* det, bool counting) {
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (counting) {
        launch->reserved[ctx.thread] =
            static_cast<i32>(ctx.reservations < launch->per_thread ? ctx.reservations : launch->per_thread);
    } else if (ctx.reservations != launch->reserved[ctx.thread]) {
        set_status(launch->status, kSlotsDiverged);
    }
}

#if defined(__CUDACC__)
// One-pass slot allocation (docs/design/0021): where each thread reserves at most once on one
// counter element, one kernel counts, assigns and executes. Blocks take tiles of blockDim
// threads in order; each tile runs its threads' counting function, scans their counts, chains
// its prefix to the tiles before it by decoupled look-back (a tile's state is its aggregate, then
// its inclusive prefix, each published in one 64-bit word), and runs the execution function with
// the slots. A block waits only for tiles taken before its own, so it cannot wait forever.
struct OnePassTile {
    i64 tile;
    u32 prefix;
    u32 warp_sums[32];
};

enum : u64 { kTileAggregate = u64(1) << 32, kTileInclusive = u64(2) << 32 };

WEFT_FUNC i64 one_pass_next_tile(OnePassTile& s, void* det) {
    __syncthreads();  // the tile before is done with `s`
    if (threadIdx.x == 0)
        s.tile = static_cast<i64>(atomicAdd(static_cast<const SlotCounter*>(det)->launch->next_tile, 1ull));
    __syncthreads();
    return s.tile;
}

// After the counting function of the tile's threads (`live`: a thread of the launch): writes
// each live thread's offset. Every thread of the block calls it.
WEFT_FUNC void one_pass_assign(OnePassTile& s, const Ctx& ctx, void* det, i64 tile, bool live) {
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    const i64 r = ctx.thread * launch->per_thread;
    const u32 n = live && ctx.reservations > 0 ? static_cast<u32>(launch->counts[r]) : 0u;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    u32 inclusive = n;
    for (unsigned o = 1; o < 32; o <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, inclusive, o);
        if (lane >= o) inclusive += y;
    }
    if (lane == 31) s.warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < warps ? s.warp_sums[lane] : 0u;
        for (unsigned o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        if (lane < warps) s.warp_sums[lane] = w;
    }
    __syncthreads();
    if (warp > 0) inclusive += s.warp_sums[warp - 1];
    if (threadIdx.x == 0) {
        const u32 aggregate = s.warp_sums[warps - 1];
        volatile u64* states = launch->tile_states;
        u32 prefix = 0;
        if (tile > 0) {
            states[tile] = kTileAggregate | aggregate;
            for (i64 j = tile - 1;; --j) {
                u64 word = states[j];
                while ((word >> 32) == 0) word = states[j];
                prefix += static_cast<u32>(word);
                if ((word & kTileInclusive) != 0) break;
            }
        }
        __threadfence();
        states[tile] = kTileInclusive | (prefix + aggregate);
        s.prefix = prefix;
    }
    __syncthreads();
    if (live) launch->offsets[r] = static_cast<i32>(s.prefix + inclusive - n);
}
#endif

}  // namespace wf
