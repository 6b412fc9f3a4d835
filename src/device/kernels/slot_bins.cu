// Slot allocation into at most 65,536 counter elements: the partition into 256 buckets by a
// compact key's high byte, the ranking of each bucket by its low byte, and the totals (the host
// side and the launch order: src/runtime/det/cuda_slot_bins.cpp).
#include "device/kernels/library.cuh"

using wf::kernels::GroupSpan;
using wf::kernels::kSpansPerPublish;
using wf::kernels::SpanChunk;
using namespace wf::kernels::slot_bins;

namespace {
constexpr int kWarps = kThreads / 32;
constexpr int kWarpItems = kTile / kWarps;
constexpr int kWindow = 8;  // predecessors one look-back step reads
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned long long kElementMask = (1ull << 40) - 1;
// An item word: the compact key in the low 16 bits, the count above it (kBigCount: read the
// launch's count at the reservation's position); kNone: a position that reaches no element.
constexpr unsigned kNone = 0xffffffffu;
constexpr unsigned kBigCount = 0xfffeu;
constexpr unsigned kNoPeer = 0x100u;  // what lanes without an item match on (no byte equals it)
// Look-back words: the state in the top two bits, a signed 62-bit sum below (sums of at most
// 2^31 - 1 counts of 32 bits fit).
constexpr unsigned long long kAggregate = 1ull << 62;
constexpr unsigned long long kPrefix = 2ull << 62;
constexpr unsigned long long kValueMask = (1ull << 62) - 1;

// A launch whose counting pass overflowed writes nothing: every step leaves its work undone.
// Read at a kernel's start, tested after its first loads are on their way.
__device__ bool overflowed(wf::u32 status) {
    return (status & wf::kSlotsOverflow) != 0;
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
__device__ Recorded load_recorded(const wf::SlotLaunch& launch, unsigned per_thread, unsigned i) {
    return {launch.keys[i], launch.reserved[i / per_thread], launch.counts[i]};
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

__device__ unsigned item_word(unsigned key, int count) {
    if (key == kNone) return kNone;
    const unsigned field =
        count >= 0 && count < static_cast<int>(kBigCount) ? static_cast<unsigned>(count) : kBigCount;
    return field << 16 | key;
}

// The span table in shared memory when it fits (every block reads it per reservation).
__device__ const GroupSpan* stage_spans(const GroupSpan* spans, long long span_count, GroupSpan* shared) {
    if (threadIdx.x < span_count && threadIdx.x < kSpansPerPublish) shared[threadIdx.x] = spans[threadIdx.x];
    __syncthreads();
    return span_count <= kSpansPerPublish ? shared : spans;
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
    *static_cast<volatile unsigned long long*>(word) =
        state | (static_cast<unsigned long long>(value) & kValueMask);
}
__device__ long long word_value(unsigned long long w) {
    return static_cast<long long>(w << 2) >> 2;
}

// The sum for digit l over the tiles before `tile` back to the nearest prefix, kWindow words per
// step; a word not yet published is polled again. The first tile of a chain publishes a prefix.
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

// Publishes this tile's sum for digit l (a prefix where the tile starts its chain), then returns
// the sum of the tiles before it in the chain and publishes its inclusive prefix.
__device__ long long chain(unsigned long long* words, long long tile, unsigned l, long long sum,
                           bool starts) {
    unsigned long long* const word = words + tile * kBins + l;
    store_word(word, starts ? kPrefix : kAggregate, sum);
    if (starts) return 0;
    const long long before = look_back(words, tile, l);
    store_word(word, kPrefix, before + sum);
    return before;
}

// The counts of this lane's peers before it, and of all of them (any counts; out of line: the
// common case, counts of 0 to 3, needs only population counts).
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

// Ranks one round of a warp (32 consecutive items) by `digit` against the warp's running sums
// (`sums`, per digit, advanced by the round): the sum of the counts (`weighted`) or the number
// of the earlier items with this lane's digit. Every lane calls it; `mine`: this lane has an item.
__device__ long long rank_round(long long* sums, unsigned digit, bool mine, int count, bool weighted) {
    const unsigned lane = threadIdx.x % 32, below = (1u << lane) - 1u;
    const unsigned peers = __match_any_sync(kFull, mine ? digit : kNoPeer);
    long long before, total;
    if (!weighted) {
        before = __popc(peers & below);
        total = __popc(peers);
    } else if (__ballot_sync(kFull, mine && (count < 0 || count > 3)) == 0) {
        const unsigned ones = __ballot_sync(kFull, count & 1), twos = __ballot_sync(kFull, count & 2);
        before = __popc(peers & below & ones) + 2 * __popc(peers & below & twos);
        total = __popc(peers & ones) + 2 * __popc(peers & twos);
    } else {
        sum_peers(peers, mine ? count : 0, before, total);
    }
    const long long base = mine ? sums[digit] : 0;
    __syncwarp();
    if (mine && (peers >> lane) == 1u) sums[digit] = base + total;
    __syncwarp();
    return base + before;
}

// Per digit, each warp's running sums become the sums of the warps before it; returns the
// block's sum for digit threadIdx.x (kBins threads).
__device__ long long warps_exclusive(long long (*sums)[kBins]) {
    long long running = 0;
    for (int w = 0; w < kWarps; ++w) {
        const long long a = sums[w][threadIdx.x];
        sums[w][threadIdx.x] = running;
        running += a;
    }
    return running;
}
}  // namespace

// Publishes spans, and zeroes `zeroed_words` words (the control words and the look-back words).
extern "C" __global__ void slot_bins_publish(GroupSpan* table, int first, int count, SpanChunk chunk,
                                             unsigned long long* zeroed, long long zeroed_words) {
    wf::kernels::zero_words(zeroed, zeroed_words);
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < count; ++i) table[first + i] = chunk.spans[i];
}

// Partition, step 1, per tile of 2,048 positions: each position's item word (its offset 0 where
// it reaches no element), and the tile's reservations per bucket (bucket-major, for the scan).
extern "C" __global__ void __launch_bounds__(kThreads)
    slot_bins_count(wf::SlotLaunch launch, const GroupSpan* spans, long long span_count, long long n,
                    long long tiles, unsigned* items, int* tile_counts) {
    __shared__ int counts[kBins];
    __shared__ GroupSpan shared_spans[kSpansPerPublish];
    const wf::u32 status = *launch.status;
    const unsigned per_thread = static_cast<unsigned>(launch.per_thread);
    const long long first = static_cast<long long>(blockIdx.x) * kTile + threadIdx.x;
    Recorded recorded[kRounds];
#pragma unroll
    for (int r = 0; r < kRounds; ++r)
        recorded[r] =
            load_recorded(launch, per_thread, static_cast<unsigned>(min(first + r * kThreads, n - 1)));
    counts[threadIdx.x] = 0;
    const GroupSpan* const table = stage_spans(spans, span_count, shared_spans);
    if (overflowed(status)) return;
    const unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
        const long long i = first + r * kThreads;
        const unsigned key =
            i < n ? key_of(recorded[r], static_cast<unsigned>(i), per_thread, table, span_count) : kNone;
        if (i < n) {
            items[i] = item_word(key, recorded[r].count);
            if (key == kNone) launch.offsets[i] = 0;
        }
        const bool mine = key != kNone;
        const unsigned peers = __match_any_sync(kFull, mine ? key >> 8 : kNoPeer);
        if (mine && (peers >> lane) == 1u) atomicAdd(&counts[key >> 8], __popc(peers));
    }
    __syncthreads();
    tile_counts[threadIdx.x * tiles + blockIdx.x] = counts[threadIdx.x];
}

// Partition, step 2 (after the scan of the tile counts): each tile's reservations move to their
// bucket, in position order within it (stable). Ranked per warp in rounds of 32 consecutive
// positions, staged by bucket in shared memory, then written out in runs.
extern "C" __global__ void __launch_bounds__(kThreads)
    slot_bins_partition(wf::SlotLaunch launch, const unsigned* items, long long n, Partition partition,
                        unsigned* records, unsigned* positions) {
    __shared__ long long warp_counts[kWarps][kBins];
    __shared__ int run_start[kBins];
    __shared__ long long destination[kBins];
    __shared__ int scratch[32];
    __shared__ int tile_items;
    __shared__ unsigned staged_word[kTile];
    __shared__ unsigned short staged_at[kTile];  // the position within the tile
    const wf::u32 status = *launch.status;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long tile = blockIdx.x;
    const long long first = tile * kTile + warp * kWarpItems;
    unsigned word[kRounds];
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
        const long long i = first + r * 32 + lane;
        const unsigned w = items[min(i, n - 1)];
        word[r] = i < n ? w : kNone;
    }
    const unsigned d = threadIdx.x;
    const int base = partition.bases[d * partition.tiles + tile];
    for (int w = 0; w < kWarps; ++w) warp_counts[w][threadIdx.x] = 0;
    __syncthreads();
    if (overflowed(status)) return;
    int rank[kRounds];
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
        const bool mine = word[r] != kNone;
        rank[r] = static_cast<int>(rank_round(warp_counts[warp], (word[r] >> 8) & 0xffu, mine, 0, false));
    }
    __syncthreads();
    const int in_tile = static_cast<int>(warps_exclusive(warp_counts));
    const int start = block_exclusive(in_tile, scratch);
    run_start[d] = start;
    destination[d] = static_cast<long long>(base) - start;
    if (d == kBins - 1) tile_items = start + in_tile;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
        if (word[r] == kNone) continue;
        const unsigned digit = (word[r] >> 8) & 0xffu;
        const int at = run_start[digit] + static_cast<int>(warp_counts[warp][digit]) + rank[r];
        staged_word[at] = word[r];
        staged_at[at] = static_cast<unsigned short>(warp * kWarpItems + r * 32 + lane);
    }
    __syncthreads();
    for (int s = threadIdx.x; s < tile_items; s += kThreads) {
        const unsigned w = staged_word[s];
        const long long at = destination[(w >> 8) & 0xffu] + s;
        records[at] = w;
        positions[at] = static_cast<unsigned>(tile * kTile) + staged_at[s];
    }
}

// The offsets kernel's items per warp (kChunkRounds per lane: library_abi.h).
constexpr int kChunkWarpItems = kChunk / kWarps;

// The offsets, per chunk of up to 2,304 reservations of one bucket (partitioned), or of 2,304
// positions (in position order: one bucket), chunks taken in order by a ticket. Each warp ranks
// its 288 by the key's low byte in rounds of 32, keeping per-byte running sums of the counts; the
// chunks of a bucket are chained per byte by decoupled look-back. A reservation's offset is the
// counts before it on its element, in position order; a bucket's last chunk writes its 256
// totals. An element passing 2^31 - 1 slots stops the launch (the execution pass then does
// nothing).
// At most 64 registers (four blocks an SM: a usual launch's chunks in one wave); NVRTC takes 80
// without the bound, and spills nothing with it.
extern "C" __global__ void __launch_bounds__(kThreads, 4)
    slot_bins_offsets(wf::SlotLaunch launch, BinInput in, long long n, Control* control,
                      unsigned long long* words, unsigned* totals) {
    __shared__ long long sums[kWarps][kBins];
    __shared__ long long carry[kBins];
    __shared__ int scratch[32];
    __shared__ unsigned chunk_taken;
    __shared__ long long chunk_begin, chunk_end;
    __shared__ int chunk_bucket;
    __shared__ bool chunk_first, chunk_last;
    __shared__ int bucket_start[kBins + 1];
    __shared__ GroupSpan shared_spans[kSpansPerPublish];
    const wf::u32 status = *launch.status;
    const unsigned d = threadIdx.x;
    if (in.partition.bases) {
        bucket_start[d] = in.partition.bases[d * in.partition.tiles];
        if (d == 0) bucket_start[kBins] = *in.partition.items;
    }
    if (threadIdx.x == 0) chunk_taken = overflowed(status) ? 0u : atomicAdd(&control->chunk_ticket, 1u);
    for (int w = 0; w < kWarps; ++w) sums[w][threadIdx.x] = 0;
    const GroupSpan* const table = stage_spans(in.spans, in.span_count, shared_spans);
    if (overflowed(status)) return;
    const long long chunk = chunk_taken;
    if (in.partition.bases) {
        // Bucket d's chunks follow those of the buckets before it.
        const int items = bucket_start[d + 1] - bucket_start[d];
        const int chunks = static_cast<int>((items + kChunk - 1) / kChunk);
        const int item_start = bucket_start[d];
        const int chunk_start = block_exclusive(chunks, scratch);
        if (chunk >= chunk_start && chunk < chunk_start + chunks) {
            const long long j = chunk - chunk_start;
            chunk_begin = item_start + j * kChunk;
            chunk_end = min(chunk_begin + kChunk, static_cast<long long>(item_start) + items);
            chunk_bucket = static_cast<int>(d);
            chunk_first = j == 0;
            chunk_last = j == chunks - 1;
        }
        if (d == kBins - 1 && chunk >= chunk_start + chunks) chunk_begin = chunk_end = 0;  // no such chunk
    } else if (d == 0) {
        chunk_begin = chunk * kChunk;
        chunk_end = min(chunk_begin + kChunk, n);
        chunk_bucket = 0;
        chunk_first = chunk == 0;
        chunk_last = chunk_end == n;
    }
    __syncthreads();
    const long long begin = chunk_begin, end = chunk_end;
    if (begin >= end) return;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long first = begin + warp * kChunkWarpItems + lane;
    const unsigned per_thread = static_cast<unsigned>(launch.per_thread);
    unsigned key[kChunkRounds], position[kChunkRounds];
    int count[kChunkRounds];
    if (in.partition.bases) {
#pragma unroll
        for (int r = 0; r < kChunkRounds; ++r) {
            const long long u = min(first + r * 32, end - 1);
            const unsigned w = in.items[u];
            position[r] = in.positions[u];
            key[r] = first + r * 32 < end ? w & 0xffffu : kNone;
            count[r] = static_cast<int>(w >> 16);
        }
#pragma unroll
        for (int r = 0; r < kChunkRounds; ++r)
            if (key[r] != kNone && count[r] == static_cast<int>(kBigCount))
                count[r] = launch.counts[position[r]];
    } else {
        Recorded recorded[kChunkRounds];
#pragma unroll
        for (int r = 0; r < kChunkRounds; ++r)
            recorded[r] =
                load_recorded(launch, per_thread, static_cast<unsigned>(min(first + r * 32, end - 1)));
#pragma unroll
        for (int r = 0; r < kChunkRounds; ++r) {
            position[r] = static_cast<unsigned>(first + r * 32);
            key[r] = first + r * 32 < end ? key_of(recorded[r], position[r], per_thread, table, in.span_count)
                                          : kNone;
            count[r] = recorded[r].count;
        }
    }
    // Per item, the counts before it in its warp: in shared memory, not registers (64 registers
    // a thread, four blocks an SM).
    __shared__ long long excl[kChunk];
#pragma unroll
    for (int r = 0; r < kChunkRounds; ++r)
        excl[r * kThreads + threadIdx.x] =
            rank_round(sums[warp], key[r] & 0xffu, key[r] != kNone, count[r], true);
    __syncthreads();
    const long long chunk_sum = warps_exclusive(sums);
    const long long before = chain(words, chunk, d, chunk_sum, chunk_first);
    carry[d] = before;
    if (chunk_last)
        totals[static_cast<long long>(chunk_bucket) * kBins + d] = static_cast<unsigned>(before + chunk_sum);
    __syncthreads();
    bool too_many = false;
#pragma unroll
    for (int r = 0; r < kChunkRounds; ++r) {
        if (first + r * 32 >= end) continue;
        if (key[r] == kNone) {
            launch.offsets[position[r]] = 0;
            continue;
        }
        const unsigned low = key[r] & 0xffu;
        const long long offset = carry[low] + sums[warp][low] + excl[r * kThreads + threadIdx.x];
        too_many = too_many || offset + count[r] > 2147483647ll;
        launch.offsets[position[r]] = static_cast<wf::i32>(offset);
    }
    if (__any_sync(kFull, too_many) && lane == 0) wf::set_status(launch.status, wf::kSlotsTooMany);
}

// After the execution pass: each reached element advances by its total, unless a pass failed;
// the failure bits go to the stream's status word. Buckets no reservation reached (partitioned)
// were never written. Then the launch's words are reset for the next launch (or replay): the
// look-back words the ticket says were used and the scan's words, by every block, the rest by the
// last block.
extern "C" __global__ void slot_bins_totals(wf::SlotLaunch launch, const GroupSpan* spans,
                                            long long span_count, Partition partition, long long n,
                                            long long elements, const unsigned* totals, Control* control,
                                            unsigned long long* chunk_words, unsigned long long* scan_words,
                                            long long scan_word_count, wf::u64* report) {
    __shared__ bool last;
    __shared__ GroupSpan shared_spans[kSpansPerPublish];
    // Every load at once (indices kept in range), then the tests.
    const wf::u32 status = *launch.status;
    const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long key = min(k, max(elements - 1, 0ll));
    const unsigned total = totals[key];
    const long long b = key >> 8;
    const bool partitioned = partition.bases != nullptr;
    const int start = partitioned ? partition.bases[b * partition.tiles] : 0;
    const int end =
        partitioned ? (b + 1 < kBins ? partition.bases[(b + 1) * partition.tiles] : *partition.items) : 1;
    const GroupSpan* const table = stage_spans(spans, span_count, shared_spans);
    if (status != 0 && blockIdx.x == 0 && threadIdx.x == 0) atomicOr(report, static_cast<wf::u64>(status));
    // Buckets no reservation reached were never written.
    if (status == 0 && n > 0 && k < elements && start != end && total != 0) {
        for (long long s = 0; s < span_count; ++s) {
            const unsigned long long first = table[s].first;
            const unsigned long long at_key = static_cast<unsigned long long>(k);
            if (at_key < first || at_key - first >= static_cast<unsigned long long>(table[s].count)) continue;
            wf::i32* at = reinterpret_cast<wf::i32*>(table[s].base) + (at_key - first);
            *at = static_cast<wf::i32>(static_cast<wf::u32>(*at) + total);
            break;
        }
    }
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long used_chunks = static_cast<long long>(control->chunk_ticket) * kBins;
    for (long long i = k; i < used_chunks; i += stride) chunk_words[i] = 0;
    for (long long i = k; i < scan_word_count; i += stride) scan_words[i] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(&control->totals_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    control->chunk_ticket = 0;
    control->totals_done = 0;
    *launch.status = 0;
}
