// A kernel resolving its own deterministic sums: a grid barrier, then each slot resolved and cleaned.
#pragma once

#include "device/abi.h"
#include "device/deterministic.h"

namespace wf {

#if defined(__CUDACC__)
// Every thread of every block of the grid waits here until all blocks have arrived. Only for a
// cooperative launch (all blocks resident at once), reached by every thread of every block. One
// word: each block adds 1 to it except block 0, which adds 2^31 - (blocks - 1), so the last arrival
// flips bit 31 and leaves the low bits as they were (0): the word serves the next launch unreset.
// The fences make every block's writes before the barrier visible to every block after it.
__device__ __forceinline__ void grid_barrier(u32* word) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const u32 add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
        __threadfence();
        const u32 before = atomicAdd(word, add);
        while (((before ^ *static_cast<volatile u32*>(word)) & 0x80000000u) == 0) __nanosleep(32);
        __threadfence();
    }
    __syncthreads();
}

// Slot `slot` of sum target `t` (float32 state; the compact or the exact strategy, neither
// carrying) resolved into its element as the runtime's resolve kernels do, and left zeroed, so
// that the state serves the next launch (or replay) without zeroing. Inline: out of line, the
// call took more registers from the kernel (46 against 40 in a scatter whose loop takes 32).
template <class T>
__device__ __forceinline__ void resolve_slot_in_kernel(DetTarget* t, i64 slot) {
    T* element = reinterpret_cast<T*>(slot_address(*t, slot, static_cast<i64>(sizeof(T))));
    if (t->cells) {
        const CompactCell cell = t->cells[slot];
        if (cell.meta == 0) return;
        *element = resolve_compact<T>(cell, t->spill + slot * kSpillWords, *element);
        t->cells[slot] = CompactCell{0, 0, 0};
        return;
    }
    i64* words = t->words + slot * Exact<T>::kWords;
    const u32 flags = t->flags[slot];
    bool touched = flags != 0;
    for (int k = 0; k < Exact<T>::kWords && !touched; ++k) touched = words[k] != 0;
    if (!touched) return;
    *element = resolve_sum<T>(words, flags, *element);
    for (int k = 0; k < Exact<T>::kWords; ++k) words[k] = 0;
    t->flags[slot] = 0;
}

// The slots of target `t` (null: none) that this thread's stride over the grid reaches.
template <class T>
__device__ __forceinline__ void resolve_in_kernel(DetTarget* t) {
    if (!t) return;
    const i64 count = t->count;
    const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
    for (i64 slot = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; slot < count; slot += stride)
        resolve_slot_in_kernel<T>(t, slot);
}
#endif

}  // namespace wf
