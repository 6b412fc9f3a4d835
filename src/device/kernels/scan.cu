// GPU prefix sums: a three-phase scan (scan tiles, scan the tile totals recursively, add the
// offsets), and a one-kernel int32 scan whose tiles chain their prefixes by decoupled look-back
// (the host side: src/runtime/cuda/scan.cpp). Compiled without the prelude: only the ABI.
#include "device/library_abi.h"

using namespace wf::kernels::scan;

namespace {

// Scans one tile: each thread its 4 items in order, then a fixed tree over the thread totals.
template <class T>
__device__ void scan_tile(const T* in, T* out, T* tile_totals, long long n, int inclusive) {
    __shared__ T totals[kThreads];
    const long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    T v[kItems];
    T sum = T(0);
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : T(0);
        sum = sum + v[k];
    }
    totals[threadIdx.x] = sum;
    __syncthreads();
    for (int offset = 1; offset < kThreads; offset <<= 1) {
        const T add = threadIdx.x >= offset ? totals[threadIdx.x - offset] : T(0);
        __syncthreads();
        totals[threadIdx.x] = totals[threadIdx.x] + add;
        __syncthreads();
    }
    T running = threadIdx.x > 0 ? totals[threadIdx.x - 1] : T(0);
    for (int k = 0; k < kItems; ++k) {
        const T before = running;
        running = running + v[k];
        if (base + k < n) out[base + k] = inclusive ? running : before;
    }
    if (threadIdx.x == kThreads - 1) tile_totals[blockIdx.x] = totals[kThreads - 1];
}

template <class T>
__device__ void add_offsets(T* out, const T* offsets, long long n) {
    const long long i = (blockIdx.x + 1) * kTile + threadIdx.x * kItems;
    for (int k = 0; k < kItems; ++k)
        if (i + k < n) out[i + k] = offsets[blockIdx.x] + out[i + k];
}
}  // namespace

extern "C" __global__ void scan_tile_i32(const int* in, int* out, int* totals, long long n, int inclusive) {
    scan_tile(in, out, totals, n, inclusive);
}
extern "C" __global__ void scan_tile_f32(const float* in, float* out, float* totals, long long n,
                                         int inclusive) {
    scan_tile(in, out, totals, n, inclusive);
}
// The chained scan: tiles of kChainTile in the order blocks take them (a ticket, so a tile only
// waits on tiles that running blocks hold: no deadlock), each publishing its aggregate, then its
// inclusive prefix, in one 64-bit word per tile (flag above bit 32, value below). Warp 0 looks
// back 32 predecessors per step and stops at the nearest one with a prefix. Sums are taken
// modulo 2^32, which gives the same bits as the three-phase int32 scan.
constexpr unsigned long long kAggregate = 1ull << 32;
constexpr unsigned long long kPrefix = 2ull << 32;
constexpr unsigned kFull = 0xffffffffu;

__device__ unsigned long long load_tile_word(const unsigned long long* word) {
    return *static_cast<const volatile unsigned long long*>(word);
}

// How much the tiles before `tile` sum to; its own aggregate was published already.
__device__ unsigned look_back(const unsigned long long* words, long long tile) {
    const unsigned lane = threadIdx.x % 32;
    unsigned before = 0;
    for (long long newest = tile - 1;; newest -= 32) {
        const long long j = newest - static_cast<long long>(lane);
        // Before tile 0 there is nothing: a prefix of 0 (tile 0 always publishes its prefix).
        unsigned long long w = j >= 0 ? load_tile_word(&words[j]) : kPrefix;
        while (__any_sync(kFull, (w >> 32) == 0))
            if ((w >> 32) == 0) w = load_tile_word(&words[j]);
        const unsigned prefixes = __ballot_sync(kFull, (w >> 32) == 2);
        const unsigned stop = prefixes ? static_cast<unsigned>(__ffs(prefixes) - 1) : 31u;
        unsigned part = lane <= stop ? static_cast<unsigned>(w) : 0u;
        for (int offset = 16; offset > 0; offset >>= 1) part += __shfl_down_sync(kFull, part, offset);
        before += __shfl_sync(kFull, part, 0);
        if (prefixes) return before;
    }
}

// Exclusive scan of `n` int32 from `in` to `out` (which may be equal); `total` (when set) gets
// the sum of all. `words`: 1 + ceil(n / kChainTile) words, zero before the launch (the ticket,
// then one per tile).
extern "C" __global__ void scan_chained_i32(const int* in, int* out, long long n, unsigned long long* words,
                                            int* total) {
    __shared__ long long tile_taken;
    __shared__ unsigned warp_sums[kChainThreads / 32];
    __shared__ unsigned tile_before;
    if (threadIdx.x == 0) tile_taken = static_cast<long long>(atomicAdd(words, 1ull));
    __syncthreads();
    const long long tile = tile_taken;
    unsigned long long* const tile_words = words + 1;
    const long long base = tile * kChainTile + threadIdx.x * kChainItems;
    unsigned v[kChainItems];
    unsigned sum = 0;
    for (int k = 0; k < kChainItems; ++k) {
        v[k] = base + k < n ? static_cast<unsigned>(in[base + k]) : 0u;
        sum += v[k];
    }
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned inclusive = sum;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const unsigned x = __shfl_up_sync(kFull, inclusive, offset);
        if (lane >= static_cast<unsigned>(offset)) inclusive += x;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    unsigned warp_before = 0, tile_sum = 0;
    for (unsigned w = 0; w < kChainThreads / 32; ++w) {
        if (w < warp) warp_before += warp_sums[w];
        tile_sum += warp_sums[w];
    }
    if (warp == 0) {
        unsigned before = 0;
        if (tile == 0) {
            if (lane == 0) atomicExch(&tile_words[0], kPrefix | tile_sum);
        } else {
            if (lane == 0) atomicExch(&tile_words[tile], kAggregate | tile_sum);
            before = look_back(tile_words, tile);
            if (lane == 0) atomicExch(&tile_words[tile], kPrefix | (before + tile_sum));
        }
        if (lane == 0) tile_before = before;
    }
    __syncthreads();
    unsigned running = tile_before + warp_before + inclusive - sum;
    for (int k = 0; k < kChainItems; ++k) {
        if (base + k < n) out[base + k] = static_cast<int>(running);
        running += v[k];
    }
    if (total && threadIdx.x == 0 && tile == (n - 1) / kChainTile)
        *total = static_cast<int>(tile_before + tile_sum);
}

// After the three-phase exclusive scan: the sum of all, from the last item (`in` and `out` distinct).
extern "C" __global__ void scan_total_i32(const int* in, const int* out, long long n, int* total) {
    if (threadIdx.x == 0)
        *total = static_cast<int>(static_cast<unsigned>(out[n - 1]) + static_cast<unsigned>(in[n - 1]));
}

extern "C" __global__ void add_offsets_i32(int* out, const int* offsets, long long n) {
    add_offsets(out, offsets, n);
}
extern "C" __global__ void add_offsets_f32(float* out, const float* offsets, long long n) {
    add_offsets(out, offsets, n);
}
