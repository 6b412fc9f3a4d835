// Slot allocation into more than 65,536 counter elements: a stable LSD radix sort of compact
// element keys, a segmented scan of the counts in sorted order, offsets scattered back to the
// reservations, totals added to the elements (the host side: src/runtime/det/cuda_slot_groups.cpp).
#include "device/kernels/library.cuh"

using wf::kernels::GroupSpan;
using wf::kernels::SpanChunk;
using namespace wf::kernels::slot_groups;

namespace {
constexpr int kWarps = kThreads / 32;
constexpr int kWarpItems = kTile / kWarps;
constexpr unsigned long long kElementMask = (1ull << 40) - 1;
// In the order word: a reservation that reaches no counter element (n < 2^31, so bit 31 is free).
constexpr unsigned kNoElement = 0x80000000u;

// A launch whose counting pass overflowed writes nothing: every step leaves its work undone.
__device__ bool overflowed(const wf::SlotLaunch* launch) {
    return (*launch->status & wf::kSlotsOverflow) != 0;
}

__device__ long long global_index() {
    return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// The segmented sum operator: a head flag starts a new segment.
struct Pair {
    unsigned head;
    long long sum;
};
__device__ Pair combine(Pair a, Pair b) {
    return {a.head | b.head, b.head ? b.sum : a.sum + b.sum};
}
}  // namespace

// Publishes spans, and zeroes `zeroed_words` words (the chained scans' tickets and tile words).
extern "C" __global__ void slot_group_publish(GroupSpan* table, int first, int count, SpanChunk chunk,
                                              unsigned long long* zeroed, long long zeroed_words) {
    wf::kernels::zero_words(zeroed, zeroed_words);
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < count; ++i) table[first + i] = chunk.spans[i];
}

// Reservation position i's key word and its order word (its own index). The key word is the
// compact key (its element's rank across the counters' spans), shifted up by 32 bits with the
// reservation's count below when `packed` (every compact key below 2^32: the count then travels
// through the sort, and no later step gathers it). Positions a thread did not use, and elements
// outside every span (an index out of range without bounds_check), are marked kNoElement: they
// add nothing to any element.
__device__ void compact_key(const wf::SlotLaunch* launch, const GroupSpan* spans, long long span_count,
                            int packed, long long i, unsigned long long& key, unsigned& order) {
    key = 0;
    order = static_cast<unsigned>(i) | kNoElement;
    if (i % launch->per_thread >= launch->reserved[i / launch->per_thread]) return;
    const unsigned long long raw = launch->keys[i];
    const unsigned long long id = raw >> 40;
    const unsigned long long element = raw & kElementMask;
    if (id < static_cast<unsigned long long>(span_count) &&
        element < static_cast<unsigned long long>(spans[id].count)) {
        key = spans[id].first + element;
        if (packed) key = key << 32 | static_cast<unsigned>(launch->counts[i]);
        order = static_cast<unsigned>(i);
    }
}

// The compact key of a key word.
__device__ unsigned long long element_of(unsigned long long key, int packed) {
    return packed ? key >> 32 : key;
}

// The count of sorted position i (order word `order`, key word `key`).
__device__ long long count_of(const wf::SlotLaunch* launch, unsigned long long key, unsigned order,
                              int packed) {
    if (order & kNoElement) return 0;
    return packed ? static_cast<int>(static_cast<unsigned>(key)) : launch->counts[order];
}

// Radix pass, step 1: how many keys of each tile of 1024 have each digit, digit-major.
// The first pass (keys null) builds each key from the counting pass's records.
extern "C" __global__ void slot_group_histogram(const wf::SlotLaunch* launch, const GroupSpan* spans,
                                                long long span_count, int packed,
                                                const unsigned long long* keys, long long n, int shift,
                                                int bits, long long tiles, int* histogram) {
    if (overflowed(launch)) return;
    __shared__ int counts[kBins];
    const unsigned mask = (1u << bits) - 1u;
    counts[threadIdx.x] = 0;
    __syncthreads();
    const long long base = static_cast<long long>(blockIdx.x) * kTile;
    for (int k = 0; k < kItems; ++k) {
        const long long i = base + k * kThreads + threadIdx.x;
        if (i >= n) continue;
        unsigned long long key;
        unsigned order;
        if (keys) {
            key = keys[i];
        } else {
            compact_key(launch, spans, span_count, packed, i, key, order);
        }
        atomicAdd(&counts[static_cast<unsigned>(key >> shift) & mask], 1);
    }
    __syncthreads();
    if (threadIdx.x <= mask) histogram[threadIdx.x * tiles + blockIdx.x] = counts[threadIdx.x];
}

// Radix pass, step 3 (after an exclusive scan of the histogram): each key moves to its digit's
// offset for its tile, plus the keys of that digit before it in the tile. Warp w ranks items
// [w * 128, w * 128 + 128) of the tile in rounds of 32 consecutive items, so ranks follow item
// order: the sort is stable.
extern "C" __global__ void slot_group_scatter(const wf::SlotLaunch* launch, const GroupSpan* spans,
                                              long long span_count, int packed,
                                              const unsigned long long* keys_in, const unsigned* order_in,
                                              unsigned long long* keys_out, unsigned* order_out, long long n,
                                              int shift, int bits, long long tiles, const int* offsets) {
    if (overflowed(launch)) return;
    __shared__ int warp_counts[kWarps][kBins];
    __shared__ int tile_offsets[kBins];
    const unsigned mask = (1u << bits) - 1u;
    const int warp = threadIdx.x / 32;
    const unsigned lane = threadIdx.x % 32;
    for (int w = 0; w < kWarps; ++w) warp_counts[w][threadIdx.x] = 0;
    __syncthreads();
    const long long base = static_cast<long long>(blockIdx.x) * kTile + warp * kWarpItems;
    unsigned long long key[kItems];
    unsigned order[kItems];
    unsigned digit[kItems];
    int rank[kItems];
    for (int k = 0; k < kItems; ++k) {
        const long long i = base + k * 32 + lane;
        const bool valid = i < n;
        key[k] = 0;
        order[k] = 0;
        if (valid && keys_in) {
            key[k] = keys_in[i];
            order[k] = order_in[i];
        } else if (valid) {
            compact_key(launch, spans, span_count, packed, i, key[k], order[k]);
        }
        digit[k] = valid ? (static_cast<unsigned>(key[k] >> shift) & mask) : kBins;
        const unsigned peers = __match_any_sync(0xffffffffu, digit[k]);
        rank[k] = valid ? warp_counts[warp][digit[k]] + __popc(peers & ((1u << lane) - 1u)) : 0;
        __syncwarp();
        if (valid && (peers >> lane) == 1u) warp_counts[warp][digit[k]] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    int running = 0;
    for (int w = 0; w < kWarps; ++w) {
        const int c = warp_counts[w][threadIdx.x];
        warp_counts[w][threadIdx.x] = running;
        running += c;
    }
    tile_offsets[threadIdx.x] = threadIdx.x <= mask ? offsets[threadIdx.x * tiles + blockIdx.x] : 0;
    __syncthreads();
    for (int k = 0; k < kItems; ++k) {
        if (digit[k] == kBins) continue;
        const int at = tile_offsets[digit[k]] + warp_counts[warp][digit[k]] + rank[k];
        keys_out[at] = key[k];
        order_out[at] = order[k];
    }
}

// Segmented inclusive scan, one tile of 1024: from the sorted key words (a segment per compact
// key; the counts from the key words, or gathered through the order) when `keys` is set, else of
// (head, sum) pairs in place.
// Writes each item's inclusive pair and the tile's total pair.
extern "C" __global__ void slot_group_segments(const wf::SlotLaunch* launch, int packed,
                                               const unsigned long long* keys, const unsigned* order,
                                               unsigned* heads, long long* sums, long long n,
                                               unsigned* tile_heads, long long* tile_sums) {
    if (overflowed(launch)) return;
    __shared__ unsigned thread_heads[kThreads];
    __shared__ long long thread_sums[kThreads];
    const long long base = static_cast<long long>(blockIdx.x) * kTile + threadIdx.x * kItems;
    Pair item[kItems];
    Pair running = {0u, 0ll};
    for (int k = 0; k < kItems; ++k) {
        const long long i = base + k;
        Pair p = {0u, 0ll};
        if (i < n && keys) {
            const unsigned long long element = element_of(keys[i], packed);
            p.head = i == 0 || element != element_of(keys[i - 1], packed) ? 1u : 0u;
            p.sum = count_of(launch, keys[i], order[i], packed);
        } else if (i < n) {
            p = {heads[i], sums[i]};
        }
        running = combine(running, p);
        item[k] = running;
    }
    thread_heads[threadIdx.x] = running.head;
    thread_sums[threadIdx.x] = running.sum;
    __syncthreads();
    for (int offset = 1; offset < kThreads; offset <<= 1) {
        const bool has = threadIdx.x >= offset;
        Pair earlier = {0u, 0ll};
        if (has) earlier = {thread_heads[threadIdx.x - offset], thread_sums[threadIdx.x - offset]};
        __syncthreads();
        if (has) {
            const Pair c = combine(earlier, {thread_heads[threadIdx.x], thread_sums[threadIdx.x]});
            thread_heads[threadIdx.x] = c.head;
            thread_sums[threadIdx.x] = c.sum;
        }
        __syncthreads();
    }
    const Pair before =
        threadIdx.x > 0 ? Pair{thread_heads[threadIdx.x - 1], thread_sums[threadIdx.x - 1]} : Pair{0u, 0ll};
    for (int k = 0; k < kItems; ++k) {
        const long long i = base + k;
        if (i >= n) break;
        const Pair p = combine(before, item[k]);
        heads[i] = p.head;
        sums[i] = p.sum;
    }
    if (threadIdx.x == kThreads - 1) {
        tile_heads[blockIdx.x] = thread_heads[kThreads - 1];
        tile_sums[blockIdx.x] = thread_sums[kThreads - 1];
    }
}

// Tile t + 1 continues the segment open at the end of tile t (inclusive pairs of the tiles).
extern "C" __global__ void slot_group_carry(const wf::SlotLaunch* launch, unsigned* heads, long long* sums,
                                            long long n, const unsigned* tile_heads,
                                            const long long* tile_sums) {
    if (overflowed(launch)) return;
    const long long tile = static_cast<long long>(blockIdx.x) + 1;
    const unsigned carry_head = tile_heads[tile - 1];
    const long long carry = tile_sums[tile - 1];
    for (int k = 0; k < kItems; ++k) {
        const long long i = tile * kTile + k * kThreads + threadIdx.x;
        if (i >= n) break;
        if (!heads[i]) sums[i] += carry;
        heads[i] |= carry_head;
    }
}

// Each reservation's offset: the counts before it on its element, in thread order; first, as the
// carry above, the segment open at the end of the tile before its own (when there are several
// tiles). An element passing 2^31 - 1 slots in the launch stops it (the execution pass then does
// nothing).
extern "C" __global__ void slot_group_offsets(wf::SlotLaunch* launch, int packed,
                                              const unsigned long long* keys, const unsigned* order,
                                              const unsigned* heads, long long* sums, long long n,
                                              const long long* tile_sums) {
    if (overflowed(launch)) return;
    const long long i = global_index();
    if (i >= n) return;
    const long long tile = i / kTile;
    long long sum = sums[i];
    if (tile > 0 && !heads[i]) {
        sum += tile_sums[tile - 1];
        sums[i] = sum;
    }
    const unsigned r = order[i] & ~kNoElement;
    if (order[i] & kNoElement) {
        launch->offsets[r] = 0;
        return;
    }
    if (sum > 2147483647ll) wf::set_status(launch->status, wf::kSlotsTooMany);
    launch->offsets[r] = static_cast<wf::i32>(sum - count_of(launch, keys[i], order[i], packed));
}

// After the execution pass: the last reservation of each key adds the element's total (a key
// reached only by kNoElement positions totals 0), unless a pass failed; the failure bits go to
// the stream's status word.
extern "C" __global__ void slot_group_totals(const wf::SlotLaunch* launch, const GroupSpan* spans,
                                             long long span_count, int packed, const unsigned long long* keys,
                                             const long long* sums, long long n, wf::u64* report) {
    const wf::u32 status = *launch->status;
    if (status != 0) {
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicOr(report, static_cast<wf::u64>(status));
        return;
    }
    const long long i = global_index();
    if (i >= n || sums[i] == 0) return;
    const unsigned long long key = element_of(keys[i], packed);
    if (i + 1 < n && element_of(keys[i + 1], packed) == key) return;
    for (long long s = 0; s < span_count; ++s) {
        const unsigned long long element = key - spans[s].first;
        if (key < spans[s].first || element >= static_cast<unsigned long long>(spans[s].count)) continue;
        wf::i32* at = reinterpret_cast<wf::i32*>(spans[s].base) + element;
        *at = static_cast<wf::i32>(static_cast<wf::u32>(*at) + static_cast<wf::u32>(sums[i]));
        return;
    }
}
