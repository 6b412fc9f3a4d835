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
    if (ctx.joined) {  // the fused entry: one position, in the context (a second one overflows)
        if (ctx.reservations++ == 0) ctx.slot = n;
        return 0;
    }
    const SlotCounter* c = static_cast<const SlotCounter*>(det);
    SlotLaunch* launch = c->launch;
    const i64 at = ctx.reservations++;
    if (at >= launch->per_thread) {
        set_status(launch->status, kSlotsOverflow);
        return 0;
    }
    const i64 r = ctx.thread * launch->per_thread + at;
    if (launch->keys) launch->keys[r] = slot_key(c, p);  // (no keys on the tiled one-element path)
    launch->counts[r] = n;
    if (launch->blocks) ctx.slot = n;  // (one position per thread: this is its only count)
    return 0;
}

// Execution pass: the slot, after checking the reservation matches the counting pass's. The
// counter still holds its value from before the launch (it is updated after this pass).
WEFT_FUNC i32 reserve(Ctx& ctx, void* det, i32* p, i32 n) {
    if (ctx.joined) {
        if (ctx.reservations++ == 0 && n == ctx.asked) return ctx.slot;
        ctx.diverged = true;
        return 0;
    }
    const SlotCounter* c = static_cast<const SlotCounter*>(det);
    SlotLaunch* launch = c->launch;
    const i64 at = ctx.reservations++;
    const i64 r = ctx.thread * launch->per_thread + at;
    if (at >= launch->per_thread || (launch->keys && launch->keys[r] != slot_key(c, p)) ||
        launch->counts[r] != n) {
        set_status(launch->status, kSlotsDiverged);
        return 0;
    }
    return launch->blocks ? ctx.slot : *p + launch->offsets[r];
}

// The execution pass does nothing when the counting pass overflowed, or a counter element would
// pass 2^31 - 1 slots, so nothing is written.
WEFT_FUNC bool slots_overflowed(void* det) {
    return (*static_cast<const SlotCounter*>(det)->launch->status & (kSlotsOverflow | kSlotsTooMany)) != 0;
}

// At the end of each thread: the counting pass stores how many reservations it made, and a count
// of 0 at the positions it left unused (so the counts need no zeroing before the launch and a
// plain scan of them is the slots of one element); the execution pass checks it made as many.
WEFT_FUNC void reservations_end(Ctx& ctx, void* det, bool counting) {
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (counting) {
        const i64 made = ctx.reservations < launch->per_thread ? ctx.reservations : launch->per_thread;
        launch->reserved[ctx.thread] = static_cast<i32>(made);
        for (i64 k = made; k < launch->per_thread; ++k)
            launch->counts[ctx.thread * launch->per_thread + k] = 0;
    } else if (ctx.reservations != launch->reserved[ctx.thread]) {
        set_status(launch->status, kSlotsDiverged);
    }
}

// At the end of the execution pass's every block (a GPU): the last block to finish adds the
// element's total, so that no kernel follows the pass, and resets the words it was the last to
// use (the status and the count of finished blocks), so that state kept for the next launch is
// clean even after a failure. Every block's reads of the counter and of the status, and its
// failure bits, come before its count of `done`: the block's barrier, then its first thread's
// fence (the order a grid barrier uses; the threads' own writes of the kernel's outputs need
// not be waited for).
WEFT_FUNC void slots_executed(void* det) {
#if defined(__CUDACC__)
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (!launch->single) return;
    __syncthreads();
    if (threadIdx.x != 0) return;
    __threadfence();
    if (atomicAdd(launch->done, 1u) != gridDim.x - 1) return;
    __threadfence();
    const u32 status = *static_cast<volatile u32*>(launch->status);
    *launch->done = 0;
    *launch->status = 0;
    if (status != 0) {
        atomicOr(launch->report, static_cast<u64>(status));
        return;
    }
    *launch->single = static_cast<i32>(static_cast<u32>(*launch->single) + static_cast<u32>(*launch->total));
#else
    (void)det;
#endif
}

#if defined(__CUDACC__)
// One counter element and one reservation position per thread (launch->blocks set): the counting
// pass totals each block's threads, its last block scans the block totals, and the execution pass
// turns each tile of blockDim threads into offsets with a block scan of the tile's counts. Each
// block runs a contiguous range of tiles, so one total per block suffices and the execution pass
// carries the prefix from tile to tile. The code generator's entry (codegen/emit.cpp) loops over
// the tiles with every thread of the block, so that the barriers here are reached by all.
struct SlotTiles {
    i64 first = 0, last = 0;  // the block's tiles, [first, last)
    u32 before = 0;           // execution pass: the counter's value plus every earlier tile's slots
    u32 round = 0;            // execution pass: tiles scanned so far (the scan's buffer parity)
    i32 made = 0;             // execution pass: the reservations the thread's counting pass made
    i64 counted = 0;          // counting pass: this thread's slots so far
};

// The execution pass reads the counter here, before its last block adds the total.
WEFT_FUNC SlotTiles slot_tiles(void* det, i64 total, bool counting) {
    const SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    const i64 tiles = (total + blockDim.x - 1) / blockDim.x;
    SlotTiles t;
    t.first = tiles * blockIdx.x / gridDim.x;
    t.last = tiles * (blockIdx.x + 1) / gridDim.x;
    if (!counting && launch->blocks)
        t.before = static_cast<u32>(launch->blocks[blockIdx.x]) + static_cast<u32>(*launch->single);
    return t;
}

// Counting pass, after a thread's reservation: its count (in its context) joins the thread's sum.
WEFT_FUNC void slot_tile_count(void* det, SlotTiles& t, const Ctx& ctx) {
    const SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (launch->blocks) t.counted += ctx.slot;
}

// The sum of `v` over the block, in every thread (every thread of the block calls it).
WEFT_FUNC i64 slot_block_sum(i64 v) {
    __shared__ i64 warp_sums[32];
    __shared__ i64 sum;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        i64 all = 0;
        for (unsigned w = 0; w < blockDim.x / 32; ++w) all += warp_sums[w];
        sum = all;
    }
    __syncthreads();
    return sum;
}

// The exclusive prefix of `v` over the block's threads, and the block's sum in `all` (every thread
// of the block calls it).
WEFT_FUNC i64 slot_block_scan(i64 v, i64& all) {
    __shared__ i64 warp_sums[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    i64 inclusive = v;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const i64 x = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= static_cast<unsigned>(offset)) inclusive += x;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    i64 before = 0;
    all = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) {
        if (w < warp) before += warp_sums[w];
        all += warp_sums[w];
    }
    __syncthreads();  // (the next call writes warp_sums again)
    return before + inclusive - v;
}

// Counting pass, at the end of every block (all its threads): the block's total; the last block
// to finish scans the totals into each block's exclusive prefix, writes the element's total (or
// kSlotsTooMany past 2^31 - 1 slots) and resets the count of finished blocks for the next launch.
WEFT_FUNC void slot_tiles_counted(void* det, const SlotTiles& t) {
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (!launch->blocks) return;
    __shared__ bool last;
    const i64 block_total = slot_block_sum(t.counted);
    if (threadIdx.x == 0) {
        launch->blocks[blockIdx.x] = block_total;
        __threadfence();
        last = atomicAdd(launch->counted, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    // Each thread scans a contiguous run of the block totals (read from L2: other blocks wrote
    // them). The run's first total stays in a register: with at most blockDim blocks (65,536
    // threads of 256), it is the whole run, read once.
    const i64 blocks = gridDim.x;
    const i64 per_thread = (blocks + blockDim.x - 1) / blockDim.x;
    const i64 from = threadIdx.x * per_thread < blocks ? threadIdx.x * per_thread : blocks;
    const i64 to = from + per_thread < blocks ? from + per_thread : blocks;
    const i64 head = from < to ? __ldcg(&launch->blocks[from]) : 0;
    i64 mine = head;
    for (i64 b = from + 1; b < to; ++b) mine += __ldcg(&launch->blocks[b]);
    i64 all = 0;
    i64 running = slot_block_scan(mine, all);
    if (from < to) {
        launch->blocks[from] = running;
        running += head;
    }
    for (i64 b = from + 1; b < to; ++b) {
        const i64 v = __ldcg(&launch->blocks[b]);
        launch->blocks[b] = running;
        running += v;
    }
    if (threadIdx.x == 0) {
        *launch->total = static_cast<i32>(static_cast<u32>(all));
        if (all > 2147483647ll) set_status(launch->status, kSlotsTooMany);
        *launch->counted = 0;
    }
}

// Execution pass, at each of the block's tiles (all its threads, before the kernel's code): the
// slot of thread i's reservation (for its context), from the counter's value, the slots of the
// earlier tiles and a block scan of this tile's counts; and how many reservations its counting
// pass made. Sums are modulo 2^32, the same bits as the scan kernels.
WEFT_FUNC i32 slot_tile_begin(void* det, SlotTiles& t, i64 i, i64 total) {
    const SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (!launch->blocks) return 0;
    __shared__ u32 warp_sums[2][32];
    const u32 count = i < total ? static_cast<u32>(launch->counts[i]) : 0u;
    t.made = i < total ? launch->reserved[i] : 0;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    u32 inclusive = count;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const u32 x = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= static_cast<unsigned>(offset)) inclusive += x;
    }
    // Two buffers: a tile's writes and the previous tile's reads are apart by this barrier.
    u32* const sums = warp_sums[t.round++ & 1];
    if (lane == 31) sums[warp] = inclusive;
    __syncthreads();
    u32 before = 0, tile = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) {
        if (w < warp) before += sums[w];
        tile += sums[w];
    }
    const u32 slot = t.before + before + inclusive - count;
    t.before += tile;
    return static_cast<i32>(slot);
}

// Execution pass, at the end of a thread: it must have made as many reservations as its counting
// pass (read by slot_tile_begin, with the counts).
WEFT_FUNC void slot_tile_end(Ctx& ctx, void* det, const SlotTiles& t) {
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (!launch->blocks) return reservations_end(ctx, det, false);
    if (ctx.reservations != t.made) set_status(launch->status, kSlotsDiverged);
}
#endif

}  // namespace wf
