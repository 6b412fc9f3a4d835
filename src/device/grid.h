// A kernel resolving its own deterministic sums: a grid barrier, then each slot resolved and cleaned.
#pragma once

#include "device/abi.h"
#include "device/resolve.h"

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

// The slots of sum target `t` (null: none; float32 state, the compact or the exact strategy,
// neither carrying) that this thread's stride over the grid reaches, resolved as the runtime's
// resolve kernels do and left zeroed, so that the state serves the next launch without zeroing.
template <class T>
__device__ __forceinline__ void resolve_in_kernel(DetTarget* t) {
    if (!t) return;
    const i64 count = t->count;
    const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
    for (i64 slot = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; slot < count; slot += stride) {
        if (t->cells)
            resolve_compact_slot<T>(*t, slot, false);  // (the kernel read the anchors: kept as they are)
        else
            resolve_exact_slot<T>(*t, slot, true);
    }
}
#endif

}  // namespace wf
