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
// element's total, so that no kernel follows the pass. Every block's reads of the counter, and
// its failure bits, come before its count of `done`.
WEFT_FUNC void slots_executed(void* det) {
#if defined(__CUDACC__)
    SlotLaunch* launch = static_cast<const SlotCounter*>(det)->launch;
    if (!launch->single) return;
    __threadfence();
    __syncthreads();
    if (threadIdx.x != 0 || atomicAdd(launch->done, 1u) != gridDim.x - 1) return;
    __threadfence();
    const u32 status = *static_cast<volatile u32*>(launch->status);
    if (status != 0) {
        atomicOr(launch->report, static_cast<u64>(status));
        return;
    }
    *launch->single = static_cast<i32>(static_cast<u32>(*launch->single) + static_cast<u32>(*launch->total));
#else
    (void)det;
#endif
}

}  // namespace wf
