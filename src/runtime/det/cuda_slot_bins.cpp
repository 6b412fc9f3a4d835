// Slot allocation into at most 65,536 counter elements on a GPU. Above 256 elements the
// reservations are first partitioned, stably, into 256 buckets by the high byte of their compact
// key (a histogram kernel whose last block scans the tile counts, then a scatter); then one kernel
// walks the reservations (partitioned, or in position order) keeping per-warp running sums for
// the 256 low bytes of the open bucket, chains tiles by decoupled look-back, and writes each
// reservation's offset and each element's total. Weft's own kernels, compiled by NVRTC.
#include "runtime/det/cuda_slot_bins.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/generated.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/det/cuda_slot_spans.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

constexpr long long kTile = 2048;
constexpr int kThreads = 256;
constexpr int kHistThreads = 1024;
constexpr long long kBins = 256;
constexpr long long kMaxGroups = 128;  // blocks of the histogram kernel: its last block scans their counts
constexpr int kSpansPerPublish = 32;

struct SpanChunk {
    GroupSpan spans[kSpansPerPublish];
};

// Where the partition puts each bucket: written by the histogram kernel's last block.
struct Partition {
    int digit_start[kBins];
    int digit_total[kBins];
    long long items;  // reservations that reach an element
};

const char* const kKernels = R"(
namespace {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRounds = 8;  // items per lane
constexpr long long kTile = kThreads * kRounds;
constexpr int kWarpItems = kTile / kWarps;
constexpr int kHistThreads = 1024;
constexpr int kBins = 256;
constexpr int kGroupsPerThread = 32;  // the host's kMaxGroups (128) over four threads per bucket
constexpr int kSpansPerPublish = 32;
constexpr int kWindow = 8;  // predecessors one look-back step reads
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned long long kElementMask = (1ull << 40) - 1;
constexpr unsigned kNone = 0xffffffffu;  // the compact key of a position that reaches no element
// Look-back words: the state in the top two bits, a signed 62-bit sum below (sums of at most
// 2^31 - 1 counts of 32 bits fit).
constexpr unsigned long long kAggregate = 1ull << 62;
constexpr unsigned long long kPrefix = 2ull << 62;
constexpr unsigned long long kValueMask = (1ull << 62) - 1;

struct GroupSpan {
    char* base;
    long long count;
    unsigned long long first;
};
struct SpanChunk {
    GroupSpan spans[kSpansPerPublish];
};
struct Partition {
    int digit_start[kBins];
    int digit_total[kBins];
    long long items;
};

// Where the offsets kernel reads reservations: partitioned records, or (null records) the
// counting pass's keys in position order.
struct BinInput {
    const unsigned long long* records;  // (count << 32) | compact key
    const unsigned* positions;
    const Partition* partition;
    const GroupSpan* spans;
    long long span_count;
    unsigned per_thread;
};

struct Item {
    unsigned key;  // compact key, or kNone
    int count;
    unsigned position;
};

// A launch whose counting pass overflowed writes nothing: every step leaves its work undone.
__device__ bool overflowed(const wf::SlotLaunch* launch) {
    return (*launch->status & wf::kSlotsOverflow) != 0;
}

// What the counting pass recorded at a reservation position: its key word, its thread's
// reservation count, its count (0 where the thread left the position unused, slots.h).
struct Recorded {
    unsigned long long raw;
    int made;
    int count;
};

// Loads position i (which the caller keeps in range) without a branch, so that a thread issues
// all its positions' loads before it waits for any.
__device__ Recorded load_recorded(const wf::SlotLaunch* launch, unsigned per_thread, unsigned i) {
    return {launch->keys[i], launch->reserved[i / per_thread], launch->counts[i]};
}

// The compact key of position i, or kNone: a position its thread left unused, or an element
// outside every span (an index out of range without bounds_check).
__device__ unsigned key_of(const Recorded& r, unsigned i, unsigned per_thread, const GroupSpan* spans,
                           long long span_count) {
    const unsigned long long id = r.raw >> 40, element = r.raw & kElementMask;
    const bool known = id < static_cast<unsigned long long>(span_count);
    const GroupSpan& span = spans[known ? id : 0];
    const bool used = static_cast<int>(i % per_thread) < r.made;
    return used && known && element < static_cast<unsigned long long>(span.count)
               ? static_cast<unsigned>(span.first + element)
               : kNone;
}

// The span table in shared memory when it fits (every block reads it per reservation).
__device__ const GroupSpan* stage_spans(const GroupSpan* spans, long long span_count, GroupSpan* shared) {
    if (threadIdx.x < span_count && threadIdx.x < kSpansPerPublish) shared[threadIdx.x] = spans[threadIdx.x];
    __syncthreads();
    return span_count <= kSpansPerPublish ? shared : spans;
}

// The lanes of `active` whose `byte` equals this lane's (eight ballots); `mine`: this lane is in
// `active`. Every lane of the warp calls it.
__device__ unsigned match_byte(unsigned active, unsigned byte, bool mine) {
    unsigned peers = active;
    for (int b = 0; b < 8; ++b) {
        const unsigned set = __ballot_sync(kFull, mine && ((byte >> b) & 1u));
        peers &= ((byte >> b) & 1u) ? set : ~set;
    }
    return peers;
}

// Exclusive prefix sum of v over the block's threads in order; every thread calls it.
__device__ int block_exclusive(int v, int* scratch) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(kFull, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) scratch[warp] = x;
    __syncthreads();
    if (warp == 0) {
        int t = lane < blockDim.x / 32 ? scratch[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(kFull, t, o);
            if (lane >= o) t += y;
        }
        scratch[lane] = t;
    }
    __syncthreads();
    const int result = x - v + (warp > 0 ? scratch[warp - 1] : 0);
    __syncthreads();
    return result;
}

__device__ unsigned long long load_word(const unsigned long long* word) {
    return *static_cast<const volatile unsigned long long*>(word);
}
__device__ void store_word(unsigned long long* word, unsigned long long state, long long value) {
    *static_cast<volatile unsigned long long*>(word) = state | (static_cast<unsigned long long>(value) & kValueMask);
}
__device__ long long word_value(unsigned long long w) {
    return static_cast<long long>(w << 2) >> 2;
}

// The sum for low byte l over the tiles before `tile` back to the nearest prefix, kWindow
// words per step; a word not yet published is polled again. Tile 0 always publishes a prefix.
__device__ long long look_back(const unsigned long long* words, long long tile, unsigned l) {
    long long sum = 0;
    for (long long newest = tile - 1;;) {
        unsigned long long w[kWindow];
        for (int j = 0; j < kWindow; ++j)
            w[j] = newest - j >= 0 ? load_word(&words[(newest - j) * kBins + l]) : kPrefix;
        int j = 0;
        for (; j < kWindow; ++j) {
            const unsigned long long state = w[j] >> 62;
            if (state == 0) break;
            sum += word_value(w[j]);
            if (state == 2) return sum;
        }
        newest -= j;
    }
}

// The counts of this lane's peers before it, and of all of them (any counts; out of line: the
// common case, every count 1, needs only population counts).
__device__ __noinline__ void sum_peers(unsigned peers, int count, long long& before, long long& total) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    before = 0;
    total = 0;
    for (int j = 0; j < 32; ++j) {
        const int c = __shfl_sync(kFull, count, j);
        if ((peers >> j) & 1u) {
            total += c;
            if (j < lane) before += c;
        }
    }
}

// One segment of a round (lanes of one bucket): each lane in it gets the sum of the counts of
// the earlier reservations of its key in this warp's part of the bucket; `sums` (per low byte)
// advances by the segment's counts.
__device__ long long scan_segment(long long* sums, unsigned active, const Item& item, bool mine) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned low = item.key & 0xffu;
    const unsigned peers = match_byte(active, low, mine);
    const long long base = mine ? sums[low] : 0;
    long long before, total;
    if (__ballot_sync(kFull, mine && item.count != 1) == 0) {
        before = __popc(peers & ((1u << lane) - 1u));
        total = __popc(peers);
    } else {
        sum_peers(peers, item.count, before, total);
    }
    __syncwarp();
    if (mine && (peers >> lane) == 1u) sums[low] = base + total;
    __syncwarp();
    return base + before;
}

// The bucket open in this warp ends: its sums (for the part this warp saw) become its totals.
__device__ __noinline__ void close_bucket(const long long* sums, unsigned bucket, unsigned* totals) {
    for (int l = threadIdx.x % 32; l < kBins; l += 32)
        totals[static_cast<long long>(bucket) * kBins + l] = static_cast<unsigned>(sums[l]);
}

// A round in which buckets start (at the lanes of `starts`; at most 255 such rounds in a launch):
// its segments one after another, each start closing the open bucket and clearing the sums.
__device__ __noinline__ long long split_round(long long* sums, unsigned live, unsigned starts, const Item& item,
                                              bool mine, unsigned first, bool cont, unsigned& open, bool& deferred,
                                              unsigned* totals) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned bucket = item.key >> 8;
    long long excl = 0;
    for (unsigned low = 0;;) {
        const unsigned high = starts ? static_cast<unsigned>(__ffs(starts) - 1) : 32u;
        const unsigned segment = (high == 32u ? kFull : (1u << high) - 1u) & ~((1u << low) - 1u);
        if (high > low) {
            const bool in_segment = mine && ((segment >> lane) & 1u);
            const long long e = scan_segment(sums, live & segment, item, in_segment);
            if (in_segment) excl = e;
        }
        if (!starts) return excl;
        close_bucket(sums, open, totals);
        deferred = deferred || (open == first && cont);
        __syncwarp();
        for (int l = lane; l < kBins; l += 32) sums[l] = 0;
        __syncwarp();
        open = __shfl_sync(kFull, bucket, high);
        low = high;
        starts &= starts - 1u;
    }
}
}  // namespace

// Publishes spans, and zeroes `zeroed_words` words (a ticket, a block count, look-back words).
extern "C" __global__ void slot_bins_publish(GroupSpan* table, int first, int count, SpanChunk chunk,
                                             unsigned long long* zeroed, long long zeroed_words) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < zeroed_words; i += stride)
        zeroed[i] = 0;
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < count; ++i) table[first + i] = chunk.spans[i];
}

// Partition, step 1: per tile of 2,048 positions, how many reservations fall in each bucket (the
// key's high byte), as an exclusive prefix over the tiles of this block's group; positions that
// reach no element get offset 0. The last block to finish turns the groups' counts into
// exclusive prefixes and writes each bucket's start and total.
extern "C" __global__ void __launch_bounds__(kHistThreads)
    slot_bins_histogram(wf::SlotLaunch* launch, const GroupSpan* spans, long long span_count, unsigned per_thread,
                        long long n, long long tiles, long long group_tiles, int* tile_prefix, int* group_prefix,
                        Partition* partition, unsigned* done) {
    if (overflowed(launch)) return;
    __shared__ int counts[kBins];
    __shared__ int partial[kHistThreads / kBins][kBins];
    __shared__ int scratch[32];
    __shared__ bool last;
    __shared__ GroupSpan shared_spans[kSpansPerPublish];
    const GroupSpan* const table = stage_spans(spans, span_count, shared_spans);
    const unsigned lane = threadIdx.x % 32;
    int running = 0;  // thread d < kBins: bucket d's reservations in the group's earlier tiles
    const long long first_tile = static_cast<long long>(blockIdx.x) * group_tiles;
    const long long end_tile = min(first_tile + group_tiles, tiles);
    for (long long tile = first_tile; tile < end_tile; ++tile) {
        if (threadIdx.x < kBins) counts[threadIdx.x] = 0;
        __syncthreads();
        Recorded recorded[kTile / kHistThreads];
        for (int q = 0; q < kTile / kHistThreads; ++q) {
            const long long i = tile * kTile + q * kHistThreads + threadIdx.x;
            recorded[q] = load_recorded(launch, per_thread, static_cast<unsigned>(min(i, n - 1)));
        }
        unsigned key[kTile / kHistThreads];
        for (int q = 0; q < kTile / kHistThreads; ++q) {
            const long long i = tile * kTile + q * kHistThreads + threadIdx.x;
            key[q] = i < n ? key_of(recorded[q], static_cast<unsigned>(i), per_thread, table, span_count) : kNone;
            if (i < n && key[q] == kNone) launch->offsets[i] = 0;
        }
        for (int q = 0; q < kTile / kHistThreads; ++q) {
            const bool mine = key[q] != kNone;
            const unsigned digit = (key[q] >> 8) & 0xffu;
            const unsigned peers = match_byte(__ballot_sync(kFull, mine), digit, mine);
            if (mine && (peers >> lane) == 1u) atomicAdd(&counts[digit], __popc(peers));
        }
        __syncthreads();
        if (threadIdx.x < kBins) {
            tile_prefix[tile * kBins + threadIdx.x] = running;
            running += counts[threadIdx.x];
        }
        __syncthreads();
    }
    if (threadIdx.x < kBins) group_prefix[static_cast<long long>(blockIdx.x) * kBins + threadIdx.x] = running;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    // Four threads per bucket, each a quarter of the groups (at most kGroupsPerThread, loaded at
    // once): their counts become exclusive prefixes in place.
    const unsigned d = threadIdx.x % kBins, quarter = threadIdx.x / kBins;
    const int from = static_cast<int>(quarter) * kGroupsPerThread;
    int c[kGroupsPerThread];
    int sum = 0;
    for (int g = 0; g < kGroupsPerThread; ++g) {
        c[g] = from + g < static_cast<int>(gridDim.x) ? __ldcg(&group_prefix[(from + g) * kBins + d]) : 0;
        sum += c[g];
    }
    partial[quarter][d] = sum;
    __syncthreads();
    int before = 0;
    for (unsigned q = 0; q < quarter; ++q) before += partial[q][d];
    for (int g = 0; g < kGroupsPerThread && from + g < static_cast<int>(gridDim.x); ++g) {
        group_prefix[(from + g) * kBins + d] = before;
        before += c[g];
    }
    int total = 0;
    if (threadIdx.x < kBins)
        for (int q = 0; q < kHistThreads / kBins; ++q) total += partial[q][d];
    const int start = block_exclusive(total, scratch);
    if (threadIdx.x < kBins) {
        partition->digit_start[d] = start;
        partition->digit_total[d] = total;
        if (d == kBins - 1) partition->items = static_cast<long long>(start) + total;
    }
}

// Partition, step 2: each tile's reservations move to their bucket, in position order within it
// (stable): ranked per warp in rounds of 32 consecutive positions, sorted by bucket in shared
// memory, then written out in runs.
extern "C" __global__ void __launch_bounds__(kThreads)
    slot_bins_partition(const wf::SlotLaunch* launch, const GroupSpan* spans, long long span_count,
                        unsigned per_thread, long long n, long long group_tiles, const int* tile_prefix,
                        const int* group_prefix, const Partition* partition, unsigned long long* records,
                        unsigned* positions) {
    if (overflowed(launch)) return;
    __shared__ int warp_counts[kWarps][kBins];
    __shared__ int run_start[kBins];
    __shared__ int destination[kBins];
    __shared__ int scratch[32];
    __shared__ int tile_items;
    __shared__ unsigned staged_key[kTile];  // (position in the tile << 16) | compact key
    __shared__ int staged_count[kTile];
    __shared__ GroupSpan shared_spans[kSpansPerPublish];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int w = 0; w < kWarps; ++w) warp_counts[w][threadIdx.x] = 0;
    const GroupSpan* const table = stage_spans(spans, span_count, shared_spans);
    const long long tile = blockIdx.x;
    const long long first = tile * kTile + warp * kWarpItems;
    unsigned key[kRounds];
    int count[kRounds];
    int rank[kRounds];
    {
        Recorded recorded[kRounds];
        for (int r = 0; r < kRounds; ++r)
            recorded[r] = load_recorded(launch, per_thread, static_cast<unsigned>(min(first + r * 32 + lane, n - 1)));
        for (int r = 0; r < kRounds; ++r) {
            const long long i = first + r * 32 + lane;
            key[r] = i < n ? key_of(recorded[r], static_cast<unsigned>(i), per_thread, table, span_count) : kNone;
            count[r] = recorded[r].count;
        }
    }
    for (int r = 0; r < kRounds; ++r) {
        const bool mine = key[r] != kNone;
        const unsigned digit = (key[r] >> 8) & 0xffu;
        const unsigned peers = match_byte(__ballot_sync(kFull, mine), digit, mine);
        rank[r] = mine ? warp_counts[warp][digit] + __popc(peers & ((1u << lane) - 1u)) : 0;
        __syncwarp();
        if (mine && (peers >> lane) == 1u) warp_counts[warp][digit] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    const unsigned d = threadIdx.x;
    int in_tile = 0;
    for (int w = 0; w < kWarps; ++w) {
        const int c = warp_counts[w][d];
        warp_counts[w][d] = in_tile;
        in_tile += c;
    }
    const int start = block_exclusive(in_tile, scratch);
    run_start[d] = start;
    destination[d] = partition->digit_start[d] + group_prefix[(tile / group_tiles) * kBins + d] +
                     tile_prefix[tile * kBins + d] - start;
    if (d == kBins - 1) tile_items = start + in_tile;
    __syncthreads();
    for (int r = 0; r < kRounds; ++r) {
        if (key[r] == kNone) continue;
        const unsigned digit = (key[r] >> 8) & 0xffu;
        const int at = run_start[digit] + warp_counts[warp][digit] + rank[r];
        staged_key[at] = static_cast<unsigned>(warp * kWarpItems + r * 32 + lane) << 16 | key[r];
        staged_count[at] = count[r];
    }
    __syncthreads();
    for (int s = threadIdx.x; s < tile_items; s += kThreads) {
        const unsigned v = staged_key[s];
        const unsigned k = v & 0xffffu;
        const int at = destination[k >> 8] + s;
        records[at] = static_cast<unsigned long long>(static_cast<unsigned>(staged_count[s])) << 32 | k;
        positions[at] = static_cast<unsigned>(tile * kTile) + (v >> 16);
    }
}

// The offsets: tiles of 2,048 reservations (partitioned, or in position order: one bucket), taken
// in order by a ticket. Warp w walks its 256 in rounds of 32, keeping the running sum of each low
// byte of the open bucket; a tile's per-byte sums for its last bucket are chained by decoupled
// look-back (a segmented scan: a tile where a bucket starts publishes its prefix at once). Each
// reservation's offset is the counts before it on its element, in position order, and a bucket
// ends in exactly one warp, which writes its 256 totals. An element passing 2^31 - 1 slots stops
// the launch (the execution pass then does nothing).
extern "C" __global__ void __launch_bounds__(kThreads)
    slot_bins_offsets(wf::SlotLaunch* launch, BinInput in, long long n, unsigned* ticket, unsigned long long* words,
                      unsigned* totals) {
    if (overflowed(launch)) return;
    __shared__ long long sums[kWarps][kBins];  // per warp; after the walk, each warp's carry in
    __shared__ bool any[kWarps], cont[kWarps], head[kWarps];
    __shared__ unsigned tile_taken;
    __shared__ GroupSpan shared_spans[kSpansPerPublish];
    if (threadIdx.x == 0) tile_taken = atomicAdd(ticket, 1u);
    for (int w = 0; w < kWarps; ++w) sums[w][threadIdx.x] = 0;
    const GroupSpan* const table = stage_spans(in.spans, in.span_count, shared_spans);
    const long long tile = tile_taken;
    const long long count = in.records ? in.partition->items : n;  // reservations to walk
    if (tile * kTile >= count) return;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long u0 = tile * kTile + warp * kWarpItems;
    const long long u1 = min(u0 + kWarpItems, count);
    // This lane's reservation of each round, all loaded at once; the rounds themselves run rolled
    // (these arrays in local memory): unrolled, NVRTC takes seconds over this kernel.
    Item item_of[kRounds];
    long long excl[kRounds];
    // In range, so that the loads need no branch; lanes past u1 get no key.
    const auto at = [&](int r) { return static_cast<unsigned>(min(u0 + r * 32 + lane, max(u1 - 1, u0))); };
    if (in.records) {
#pragma unroll
        for (int r = 0; r < kRounds; ++r) {
            const unsigned long long record = in.records[at(r)];
            item_of[r] = {static_cast<unsigned>(record), static_cast<int>(record >> 32), in.positions[at(r)]};
        }
    } else {
        Recorded recorded[kRounds];
#pragma unroll
        for (int r = 0; r < kRounds; ++r) recorded[r] = load_recorded(launch, in.per_thread, at(r));
#pragma unroll
        for (int r = 0; r < kRounds; ++r) {
            const unsigned key = key_of(recorded[r], at(r), in.per_thread, table, in.span_count);
            item_of[r] = {key, key != kNone ? recorded[r].count : 0, at(r)};
        }
    }
#pragma unroll
    for (int r = 0; r < kRounds; ++r)
        if (u0 + r * 32 + lane >= u1) item_of[r] = {kNone, 0, 0};
    bool warp_cont = false, warp_head = false, deferred = false;
    unsigned first = 0;
    if (u0 < u1) {
        // Partitioned, the bucket is the key's high byte; in position order there is one (0).
        first = in.records ? static_cast<unsigned>(in.records[u0]) >> 8 : 0u;
        warp_cont = u0 > 0 && (!in.records || static_cast<unsigned>(in.records[u0 - 1]) >> 8 == first);
        warp_head = !warp_cont;
        unsigned open = first;
#pragma unroll 1
        for (int r = 0; r < kRounds; ++r) {
            const Item item = item_of[r];
            const bool mine = item.key != kNone;
            const unsigned bucket = item.key >> 8;
            unsigned starts = 0;  // lanes where a bucket starts
            if (in.records) {
                const unsigned before = __shfl_up_sync(kFull, bucket, 1);
                starts = __ballot_sync(kFull, mine && bucket != (lane == 0 ? open : before));
            }
            const unsigned live = __ballot_sync(kFull, mine);
            if (starts == 0) {
                const long long e = scan_segment(sums[warp], live, item, mine);
                excl[r] = mine ? e : 0;
            } else {
                excl[r] = split_round(sums[warp], live, starts, item, mine, first, warp_cont, open, deferred, totals);
                warp_head = true;
            }
        }
        // The open bucket ends here when it is the last one, or the next reservation's differs.
        if (u1 == count || (in.records && static_cast<unsigned>(in.records[u1]) >> 8 != open)) {
            close_bucket(sums[warp], open, totals);
            deferred |= open == first && warp_cont;
        }
    }
    if (lane == 0) {
        any[warp] = u0 < u1;
        cont[warp] = warp_cont;
        head[warp] = warp_head;
    }
    __syncthreads();
    // Thread l: the tile's sums for low byte l of its last bucket, published, then the carry into
    // the tile from the look-back, then each warp's carry in.
    const unsigned l = threadIdx.x;
    long long tile_sum = 0;
    bool tile_head = false;
    for (int w = 0; w < kWarps; ++w) {
        if (!any[w]) continue;
        tile_sum = head[w] ? sums[w][l] : tile_sum + sums[w][l];
        tile_head = tile_head || head[w];
    }
    unsigned long long* const word = words + tile * kBins + l;
    store_word(word, tile_head ? kPrefix : kAggregate, tile_sum);
    const long long carry = cont[0] ? look_back(words, tile, l) : 0;
    if (!tile_head) store_word(word, kPrefix, carry + tile_sum);
    long long running = carry;
    for (int w = 0; w < kWarps; ++w) {
        if (!any[w]) continue;
        const long long a = sums[w][l];
        sums[w][l] = cont[w] ? running : 0;
        running = head[w] ? a : running + a;
    }
    __syncthreads();
    bool too_many = false;
    if (u0 < u1) {
#pragma unroll 1
        for (int r = 0; r < kRounds; ++r) {
            if (u0 + r * 32 + lane >= u1) break;
            const Item item = item_of[r];
            if (item.key == kNone) {
                launch->offsets[item.position] = 0;
                continue;
            }
            long long offset = excl[r];
            if (warp_cont && item.key >> 8 == first) offset += sums[warp][item.key & 0xffu];
            too_many = too_many || offset + item.count > 2147483647ll;
            launch->offsets[item.position] = static_cast<wf::i32>(offset);
        }
        if (deferred)
            for (int b = lane; b < kBins; b += 32)
                totals[static_cast<long long>(first) * kBins + b] += static_cast<unsigned>(sums[warp][b]);
    }
    if (__any_sync(kFull, too_many) && lane == 0) wf::set_status(launch->status, wf::kSlotsTooMany);
}

// After the execution pass: each reached element advances by its total, unless a pass failed;
// the failure bits go to the stream's status word. Buckets no reservation reached (partitioned)
// were never written.
extern "C" __global__ void slot_bins_totals(const wf::SlotLaunch* launch, const GroupSpan* spans, long long span_count,
                                            const Partition* partition, long long n, long long elements,
                                            const unsigned* totals, wf::u64* report) {
    const wf::u32 status = *launch->status;
    if (status != 0) {
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicOr(report, static_cast<wf::u64>(status));
        return;
    }
    const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (n == 0 || k >= elements) return;
    if (partition && partition->digit_total[k >> 8] == 0) return;
    const unsigned total = totals[k];
    if (total == 0) return;
    for (long long s = 0; s < span_count; ++s) {
        const unsigned long long first = spans[s].first;
        const unsigned long long key = static_cast<unsigned long long>(k);
        if (key < first || key - first >= static_cast<unsigned long long>(spans[s].count)) continue;
        wf::i32* at = reinterpret_cast<wf::i32*>(spans[s].base) + (key - first);
        *at = static_cast<wf::i32>(static_cast<wf::u32>(*at) + total);
        return;
    }
}
)";

// Built once: a launch looks its kernels up several times, and the prelude is some 60 KB.
const std::string& library_source() {
    static const std::string source = codegen::prelude() + kKernels;
    return source;
}

// Mirrors the kernels' BinInput.
struct BinInput {
    const void* records;
    const void* positions;
    const void* partition;
    const void* spans;
    long long span_count;
    unsigned per_thread;
};

size_t rounded(size_t bytes) {
    return (bytes + 15) / 16 * 16;
}

}  // namespace

CudaSlotBins::CudaSlotBins(int ordinal, const SlotPlan& plan, void* launch)
    : ordinal_(ordinal),
      launch_(launch),
      n_(plan.threads * plan.per_thread),
      per_thread_(static_cast<unsigned>(plan.per_thread)) {
    unsigned long long elements = 0;
    const std::vector<GroupSpan> table = group_spans(plan, elements);
    elements_ = static_cast<long long>(elements);
    span_count_ = static_cast<long long>(table.size());
    partitioned_ = elements_ > kBins;
    tiles_ = (n_ + kTile - 1) / kTile;
    if (partitioned_ && tiles_ > 0) {
        group_tiles_ = (tiles_ + kMaxGroups - 1) / kMaxGroups;
        groups_ = (tiles_ + group_tiles_ - 1) / group_tiles_;
    }
    const auto tiles = static_cast<size_t>(tiles_);
    const auto n = static_cast<size_t>(n_);
    const size_t buckets = partitioned_ ? static_cast<size_t>((elements_ + kBins - 1) / kBins) : 1;
    // One allocation: the span table, the zeroed words (block count, ticket, look-back words),
    // then the partition's state and the per-key totals.
    size_t bytes = 0;
    const auto take = [&bytes](size_t size) {
        const size_t at = bytes;
        bytes += rounded(size);
        return at;
    };
    const size_t spans_at = take(table.size() * sizeof(GroupSpan));
    const size_t zeroed_at = take(16 + tiles * kBins * 8);
    const size_t partition_at = take(partitioned_ ? sizeof(Partition) : 0);
    const size_t tile_prefix_at = take(partitioned_ ? tiles * kBins * 4 : 0);
    const size_t group_prefix_at = take(static_cast<size_t>(groups_) * kBins * 4);
    const size_t records_at = take(partitioned_ ? n * 8 : 0);
    const size_t positions_at = take(partitioned_ ? n * 4 : 0);
    const size_t totals_at = take(buckets * kBins * 4);
    state_ = detail::allocate(Device::cuda(ordinal_), bytes);
    char* const base = static_cast<char*>(state_->ptr);
    spans_ = base + spans_at;
    done_ = base + zeroed_at;
    ticket_ = base + zeroed_at + 8;
    words_ = base + zeroed_at + 16;
    partition_ = partitioned_ ? base + partition_at : nullptr;
    tile_prefix_ = base + tile_prefix_at;
    group_prefix_ = base + group_prefix_at;
    records_ = base + records_at;
    positions_ = base + positions_at;
    totals_ = base + totals_at;
    // Published by a kernel, not a copy from the host, so that the launch can be captured.
    void* zeroed = done_;
    auto zeroed_words = static_cast<long long>(2 + tiles * kBins);
    for (size_t at = 0; at < table.size(); at += kSpansPerPublish) {
        SpanChunk chunk{};
        int count = static_cast<int>(std::min<size_t>(kSpansPerPublish, table.size() - at));
        std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(at), count, chunk.spans);
        void* table_ptr = spans_;
        int first_index = static_cast<int>(at);
        void* params[] = {&table_ptr, &first_index, &count, &chunk, &zeroed, &zeroed_words};
        run("slot_bins_publish", std::min<long long>(zeroed_words / kThreads + 1, 1024), kThreads, params);
        zeroed_words = 0;  // the first chunk's kernel did it
    }
}

void CudaSlotBins::assign() {
    if (n_ == 0) return;
    void* launch = launch_;
    void* spans = spans_;
    unsigned per_thread = per_thread_;
    long long n = n_;
    if (partitioned_) {
        long long tiles = tiles_, group_tiles = group_tiles_;
        void* histogram_params[] = {&launch,      &spans,        &span_count_,   &per_thread, &n,    &tiles,
                                    &group_tiles, &tile_prefix_, &group_prefix_, &partition_, &done_};
        run("slot_bins_histogram", groups_, kHistThreads, histogram_params);
        void* partition_params[] = {&launch,     &spans,       &span_count_,  &per_thread,
                                    &n,          &group_tiles, &tile_prefix_, &group_prefix_,
                                    &partition_, &records_,    &positions_};
        run("slot_bins_partition", tiles_, kThreads, partition_params);
    }
    BinInput input{
        partitioned_ ? records_ : nullptr, positions_, partition_, spans_, span_count_, per_thread_};
    void* offsets_params[] = {&launch, &input, &n, &ticket_, &words_, &totals_};
    run("slot_bins_offsets", tiles_, kThreads, offsets_params);
}

void CudaSlotBins::add_totals(wf::u64* report) {
    void* launch = launch_;
    void* spans = spans_;
    void* partition = partition_;
    long long n = n_, elements = elements_;
    void* params[] = {&launch, &spans, &span_count_, &partition, &n, &elements, &totals_, &report};
    run("slot_bins_totals", std::max<long long>(1, (elements_ + kThreads - 1) / kThreads), kThreads, params);
}

void CudaSlotBins::run(const char* name, long long blocks, int threads, void** params) const {
    cu::launch_library_kernel(ordinal_, "slot_bins", library_source(), name, static_cast<unsigned>(blocks),
                              static_cast<unsigned>(threads), params,
                              std::string("slot allocation (") + name + ")");
}

}  // namespace weft::runtime::det
