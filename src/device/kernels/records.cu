// The records strategy's GPU kernels (part of the deterministic library module, after
// accumulation.cu; the host side: src/runtime/det/cuda_accumulation.cpp).
#include "device/kernels/library.cuh"

namespace wf_records {
constexpr int kWarps = wf::kernels::det::kThreads / 32;
constexpr unsigned kAll = 0xffffffffu;

template <class T>
__device__ T* record_element(const wf::DetTarget& t, long long slot) {
    return reinterpret_cast<T*>(wf::slot_address(t, slot, static_cast<wf::i64>(sizeof(T))));
}

__device__ int region_count(const wf::DetTarget& t) {
    return t.regions > 1 ? t.regions : 1;
}

// The state published for the user's kernel, and its cursors and summary words (`words` of them)
// zeroed.
__device__ void publish_records(wf::DetTarget* state, wf::DetTarget t, int words) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i == 0) *state = t;
    if (i < words) t.cursor[i] = 0;
}

// The records a region has room for (one region: the whole capacity; the last ends at it).
__device__ long long region_room(const wf::DetTarget& t, int k) {
    if (t.regions <= 1) return t.capacity;
    const long long first = k * t.region_records;
    return t.capacity - first < t.region_records ? t.capacity - first : t.region_records;
}

// The two words after the cursors, written by the counting kernel's first block for the kernels
// after it: the records emitted (within their regions' room), and whether a region overflowed.
__device__ wf::u64* summary_of(const wf::DetTarget& t) {
    return t.cursor + region_count(t) * wf::kCursorStride;
}
__device__ bool overflowed(const wf::DetTarget& t) {
    return summary_of(t)[1] != 0;
}
__device__ long long emitted(const wf::DetTarget& t) {
    return static_cast<long long>(summary_of(t)[0]);
}

// The regions as the counting and grouping kernels read them: records emitted in regions 0..k
// (running totals, each region's within its room), so that the e-th emitted record is found.
struct Regions {
    long long end[wf::kMaxRegions];
    int count;
    int overflowed;
    wf::u64 total;  // records emitted, those past a region's room included (for the report)
};

// Every thread of the block calls this (it synchronizes); the first warp reads the cursors,
// two regions per lane.
__device__ void load_regions(const wf::DetTarget& t, Regions& r) {
    const int n = region_count(t);
    if (threadIdx.x < 32) {
        const int lane = static_cast<int>(threadIdx.x);
        long long fill[2] = {0, 0};
        wf::u64 total = 0;
        bool over = false;
        for (int h = 0; h < 2; ++h) {
            const int k = 2 * lane + h;
            if (k >= n) continue;
            const wf::u64 c = t.cursor[k * wf::kCursorStride];
            const long long room = region_room(t, k);
            total += c;
            over = over || c > static_cast<wf::u64>(room);
            fill[h] = c < static_cast<wf::u64>(room) ? static_cast<long long>(c) : room;
        }
        long long sum = fill[0] + fill[1];
        for (int d = 1; d < 32; d *= 2) {
            const long long below = __shfl_up_sync(kAll, sum, d);
            if (lane >= d) sum += below;
        }
        for (int d = 16; d > 0; d /= 2) total += __shfl_down_sync(kAll, total, d);
        over = __any_sync(kAll, over);
        if (2 * lane < n) r.end[2 * lane] = sum - fill[1];
        if (2 * lane + 1 < n) r.end[2 * lane + 1] = sum;
        if (lane == 0) {
            r.count = n;
            r.overflowed = over ? 1 : 0;
            r.total = total;
        }
    }
    __syncthreads();
}

// Where the e-th emitted record lies (e below the records emitted).
__device__ long long record_index(const wf::DetTarget& t, const Regions& r, long long e) {
    if (r.count == 1) return e;
    int lo = 0, hi = r.count - 1;  // the first region whose running total exceeds e
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (r.end[mid] > e)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo * t.region_records + e - (lo == 0 ? 0 : r.end[lo - 1]);
}

// The lanes of a warp with the same slot (a hot element's records lie side by side) act once,
// through their lowest lane; and the first slot a warp's leader brings to its block is the
// block's hot slot, counted in shared memory for all the block's records and added to the global
// count once per block (a hot element's count would otherwise take an atomic on one word per
// block and tile).
constexpr unsigned kNoSlot = 0xffffffffu;  // no slot is this large (slots are below 2^32 - 1)

struct Peers {
    unsigned mask;  // lanes with this lane's slot
    int leader;
    int rank;  // among them
    __device__ bool leads() const { return static_cast<int>(threadIdx.x & 31) == leader; }
};

__device__ Peers peers_of(wf::u32 slot) {
    const unsigned mask = __match_any_sync(__activemask(), slot);
    const unsigned lane = threadIdx.x & 31;
    return {mask, __ffs(mask) - 1, __popc(mask & ((1u << lane) - 1))};
}

// Whether `slot` is (or now becomes) the block's hot slot.
__device__ bool claims_hot(unsigned* hot_slot, wf::u32 slot) {
    const unsigned seen = atomicCAS(hot_slot, kNoSlot, slot);
    return seen == kNoSlot || seen == slot;
}

// A block's hot slot and its records there, left by the counting kernel for the grouping kernel,
// which runs the same grid over the same tiles (so the block meets the same records).
struct BlockHot {
    unsigned slot;
    int count;
};

// Records strategy, step 1: records per slot. An overflow (of any region) leaves the records
// emitted in the target's status word, and the target unchanged. The grid is at most one wave
// whatever the capacity, its threads striding over the records emitted: the work follows the
// count on the device, not the capacity planned on the host.
__device__ void count_records(wf::DetTarget t, int* counts, wf::u64* report, BlockHot* block_hot) {
    __shared__ Regions regions;
    __shared__ unsigned hot_slot;
    __shared__ int hot_count;
    load_regions(t, regions);
    const long long n = regions.end[regions.count - 1];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        wf::u64* summary = summary_of(t);
        summary[0] = static_cast<wf::u64>(n);
        summary[1] = static_cast<wf::u64>(regions.overflowed);
        if (regions.overflowed) atomicMax(report, regions.total);
    }
    if (regions.overflowed) return;
    if (threadIdx.x == 0) {
        hot_slot = kNoSlot;
        hot_count = 0;
    }
    __syncthreads();
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += stride) {
        const wf::u32 slot = t.record_slots[record_index(t, regions, r)];
        const Peers p = peers_of(slot);
        if (p.leads()) {
            if (claims_hot(&hot_slot, slot))
                atomicAdd(&hot_count, __popc(p.mask));
            else
                atomicAdd(counts + slot, __popc(p.mask));
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (hot_count != 0) atomicAdd(counts + hot_slot, hot_count);
        block_hot[blockIdx.x] = BlockHot{hot_slot, hot_count};
    }
}

// Step 3 (after an inclusive scan of the counts into `ends`): group the records by slot, each
// taking a place from its slot's remaining count; the block's hot slot's records take places
// from the block's own run of them, reserved once. The order inside a slot's group does not
// matter: the reduction is exact.
__device__ void group_records(wf::DetTarget t, int* counts, const int* ends, wf::u64* grouped,
                              const BlockHot* block_hot) {
    __shared__ Regions regions;
    __shared__ int hot_before;  // the hot slot's remaining count before the block took its places
    __shared__ int hot_taken;   // the block's hot places taken so far
    load_regions(t, regions);
    if (regions.overflowed) return;
    const BlockHot hot = block_hot[blockIdx.x];
    if (threadIdx.x == 0) {
        hot_before = hot.count != 0 ? atomicSub(counts + hot.slot, hot.count) : 0;
        hot_taken = 0;
    }
    __syncthreads();
    const long long n = regions.end[regions.count - 1];
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += stride) {
        const long long at_record = record_index(t, regions, r);
        const wf::u32 slot = t.record_slots[at_record];
        const Peers p = peers_of(slot);
        const bool is_hot = slot == hot.slot;
        int offset = 0;  // within the block's hot places, or the slot's count before the warp's
        if (p.leads())
            offset =
                is_hot ? atomicAdd(&hot_taken, __popc(p.mask)) : atomicSub(counts + slot, __popc(p.mask));
        offset = __shfl_sync(p.mask, offset, p.leader);
        const int at = is_hot ? ends[slot] - hot_before + offset + p.rank : ends[slot] - offset + p.rank;
        grouped[at] = t.records[at_record];
    }
}

// A segment (a slot's group) longer than kLongRecords is long: summed by many blocks, kSumChunk
// records each (step 4b); shorter ones by one warp (step 4). A long segment's sum is kept in the
// accumulator numbered by the kLongRecords-chunk it begins in (no two long segments begin in
// one).
using wf::kernels::det::kLongRecords;
using wf::kernels::det::kSumChunk;

__device__ int begin_of(const int* ends, long long slot) {
    return slot == 0 ? 0 : ends[slot - 1];
}

// The slot whose group holds grouped record r (r below the number of records).
__device__ long long slot_containing(const int* ends, long long slots, long long r) {
    long long lo = 0, hi = slots - 1;
    while (lo < hi) {
        const long long mid = lo + (hi - lo) / 2;
        if (ends[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// 32-bit warp reductions (one instruction from sm_80; shuffles before).
#if __CUDA_ARCH__ >= 800
__device__ unsigned warp_add(unsigned v) {
    return __reduce_add_sync(kAll, v);
}
__device__ unsigned warp_min(unsigned v) {
    return __reduce_min_sync(kAll, v);
}
__device__ unsigned warp_max(unsigned v) {
    return __reduce_max_sync(kAll, v);
}
__device__ unsigned warp_or(unsigned v) {
    return __reduce_or_sync(kAll, v);
}
#else
template <class Op>
__device__ unsigned warp_reduce(unsigned v, Op op) {
    for (int d = 16; d > 0; d /= 2) v = op(v, __shfl_xor_sync(kAll, v, d));
    return v;
}
__device__ unsigned warp_add(unsigned v) {
    return warp_reduce(v, [](unsigned a, unsigned b) { return a + b; });
}
__device__ unsigned warp_min(unsigned v) {
    return warp_reduce(v, [](unsigned a, unsigned b) { return min(a, b); });
}
__device__ unsigned warp_max(unsigned v) {
    return warp_reduce(v, [](unsigned a, unsigned b) { return max(a, b); });
}
__device__ unsigned warp_or(unsigned v) {
    return warp_reduce(v, [](unsigned a, unsigned b) { return a | b; });
}
#endif

// The whole warp adds its lanes' values (`live` lanes only) to its own digit words and flags in
// shared memory, which only its lane 0 writes: each digit word's lane values are summed exactly
// (as 16-bit halves, so the 32-bit reductions cannot overflow) and added once. Every lane of the
// warp calls this together.
template <class S>
__device__ void warp_add_values(S v, bool live, wf::i64* words, wf::u32* flags) {
    constexpr int kWords = wf::Exact<S>::kWords;
    const bool lead = (threadIdx.x & 31) == 0;
    const wf::u32 flag = live ? wf::special_flag(v) : 0;
    const wf::Split<S> s = wf::split(v);
    const bool has_digits = live && flag == 0 && s.significand != 0;
    const wf::Digits d = has_digits ? wf::digits<S>(s) : wf::Digits{0, {0, 0, 0}};
    const unsigned any_flag = warp_or(flag);
    if (lead) *flags |= any_flag;
    const unsigned lo = warp_min(has_digits ? static_cast<unsigned>(d.first) : kAll);
    if (lo == kAll) return;  // no lane has digits (the same for every lane)
    const int hi = static_cast<int>(warp_max(has_digits ? static_cast<unsigned>(d.first) : 0u)) +
                   (sizeof(S) == 4 ? 1 : 2);  // a float's significand spans two digits, a double's three
    for (int k = static_cast<int>(lo); k <= hi && k < kWords; ++k) {
        const int j = k - d.first;
        const wf::i64 mine = has_digits && j >= 0 && j < 3 ? d.d[j] : 0;
        const unsigned low_sum = warp_add(static_cast<unsigned>(mine & 0xffff));
        const int high_sum = static_cast<int>(warp_add(static_cast<unsigned>(mine >> 16)));
        const wf::i64 total = static_cast<wf::i64>(high_sum) * 65536 + static_cast<wf::i64>(low_sum);
        if (lead) words[k] += total;
    }
}

// Step 4b: blocks stride over chunks of kSumChunk grouped records; a chunk meets at most two
// long segments (the one holding its first record and the one holding its last). For each, the
// block's warps sum their share of the chunk into digit words of their own (no atomics), the
// block adds the totals to the segment's accumulator with one global atomic per word, and the
// block that adds the segment's last piece (counted in `long_done`) rounds the sum into the
// element. The target keeps its value when the records overflowed.
// What a block summing pieces of long segments keeps in shared memory.
template <class T>
struct SumShared {
    wf::i64 words[kWarps][wf::Exact<T>::kWords];
    wf::u32 flags[kWarps];
    int last;  // whether this block added the segment's last piece
};

// The block adds records [from, to) of one segment (`record(r)`: record r's bits) to the
// segment's accumulator (`acc`, `acc_flags`): its warps sum their share into digit words of their
// own (no atomics), the block adds the totals with one global atomic per word, and the block that
// adds the segment's last piece (counted in `done`, `pieces` in all) rounds the sum into the
// element of `slot`. Every thread of the block calls this; it ends synchronized.
template <class T, class Record>
__device__ void add_piece(const wf::DetTarget& t, long long from, long long to, Record record, wf::i64* acc,
                          wf::u32* acc_flags, unsigned* done, unsigned pieces, long long slot,
                          SumShared<T>& sh) {
    using S = typename wf::StateOf<T>::type;
    using Bits = typename wf::Format<S>::Bits;
    constexpr int kWords = wf::Exact<T>::kWords;
    const int warp = static_cast<int>(threadIdx.x / 32);
    const int lane = static_cast<int>(threadIdx.x % 32);
    for (int k = lane; k < kWords; k += 32) sh.words[warp][k] = 0;
    if (lane == 0) sh.flags[warp] = 0;
    __syncwarp();
    for (long long b = from + warp * 32; b < to; b += blockDim.x) {
        const long long r = b + lane;
        const bool live = r < to;
        const S v = wf::bit_cast<S>(static_cast<Bits>(live ? record(r) : 0));
        warp_add_values<S>(v, live, sh.words[warp], &sh.flags[warp]);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < kWords; k += blockDim.x) {
        wf::i64 total = 0;
        for (int w = 0; w < kWarps; ++w) total += sh.words[w][k];
        if (total != 0)
            atomicAdd(reinterpret_cast<unsigned long long*>(acc + k), static_cast<unsigned long long>(total));
    }
    if (threadIdx.x == 0) {
        wf::u32 f = 0;
        for (int w = 0; w < kWarps; ++w) f |= sh.flags[w];
        if (f != 0) atomicOr(acc_flags, f);
    }
    __threadfence();  // this block's additions before its piece is counted
    __syncthreads();
    if (threadIdx.x == 0) {
        sh.last = atomicAdd(done, 1u) == pieces - 1 ? 1 : 0;
        __threadfence();  // the other blocks' additions before the reads below
    }
    __syncthreads();
    if (sh.last) {  // the same for the whole block
        for (int k = threadIdx.x; k < kWords; k += blockDim.x) sh.words[0][k] = __ldcg(acc + k);
        if (threadIdx.x == 0) sh.flags[0] = __ldcg(acc_flags);
        __syncthreads();
        if (threadIdx.x == 0) {
            T* element = record_element<T>(t, slot);
            *element = wf::resolve_sum<T>(sh.words[0], sh.flags[0], *element);
        }
    }
    __syncthreads();  // the words are read before the next piece's sums reset them
}

template <class T>
__device__ void sum_long_records(wf::DetTarget t, const int* ends, const wf::u64* grouped,
                                 wf::i64* long_words, wf::u32* long_flags, unsigned* long_done,
                                 unsigned block, unsigned blocks) {
    constexpr int kWords = wf::Exact<T>::kWords;
    __shared__ SumShared<T> sh;
    __shared__ long long seg[2];          // the two segments' slots, -1 where not long
    __shared__ long long from[2], to[2];  // their records within the chunk
    __shared__ long long id[2];           // their accumulators
    __shared__ unsigned pieces[2];        // the chunks each segment spans
    if (overflowed(t)) return;
    const long long n = emitted(t);
    for (long long c0 = static_cast<long long>(block) * kSumChunk; c0 < n;
         c0 += static_cast<long long>(blocks) * kSumChunk) {
        const long long c1 = c0 + kSumChunk < n ? c0 + kSumChunk : n;
        if (threadIdx.x < 2) {
            const int j = static_cast<int>(threadIdx.x);
            const long long s = slot_containing(ends, t.count, j == 0 ? c0 : c1 - 1);
            const long long begin = begin_of(ends, s);
            const long long end = ends[s];
            seg[j] = end - begin > kLongRecords ? s : -1;
            from[j] = begin > c0 ? begin : c0;
            to[j] = end < c1 ? end : c1;
            id[j] = begin / kLongRecords;
            pieces[j] = static_cast<unsigned>((end - 1) / kSumChunk - begin / kSumChunk + 1);
        }
        __syncthreads();
        for (int j = 0; j < 2; ++j) {
            if (seg[j] < 0 || (j == 1 && seg[1] == seg[0])) continue;  // the same for the whole block
            add_piece<T>(
                t, from[j], to[j], [&](long long r) { return grouped[r]; }, long_words + id[j] * kWords,
                long_flags + id[j], long_done + id[j], pieces[j], seg[j], sh);
        }
        __syncthreads();  // every thread has read seg before the next chunk's are written
    }
}

// A one-element target's records need no counting or grouping: they are all one segment, summed
// as emitted (found in their regions) by blocks striding over chunks of kSumChunk. The counting
// kernel does not run, so this one reports an overflow.
template <class T>
__device__ void sum_one_element(wf::DetTarget t, wf::i64* acc, wf::u32* acc_flags, unsigned* done,
                                wf::u64* report) {
    __shared__ Regions regions;
    __shared__ SumShared<T> sh;
    load_regions(t, regions);
    if (blockIdx.x == 0 && threadIdx.x == 0 && regions.overflowed) atomicMax(report, regions.total);
    if (regions.overflowed) return;
    const long long n = regions.end[regions.count - 1];
    const auto pieces = static_cast<unsigned>((n + kSumChunk - 1) / kSumChunk);
    for (long long c0 = static_cast<long long>(blockIdx.x) * kSumChunk; c0 < n;
         c0 += static_cast<long long>(gridDim.x) * kSumChunk) {
        const long long c1 = c0 + kSumChunk < n ? c0 + kSumChunk : n;
        add_piece<T>(
            t, c0, c1, [&](long long r) { return t.records[record_index(t, regions, r)]; }, acc, acc_flags,
            done, pieces, 0, sh);
    }
}

// Step 4: one warp per slot sums its group exactly in shared memory, then rounds once.
template <class T>
__device__ void reduce_records(wf::DetTarget t, const int* ends, const wf::u64* grouped, unsigned block) {
    __shared__ wf::i64 words[kWarps][wf::Exact<T>::kWords];
    __shared__ wf::u32 flags[kWarps];
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const long long slot = (static_cast<long long>(block) * blockDim.x + threadIdx.x) / 32;
    if (overflowed(t) || slot >= t.count) return;
    const int begin = slot == 0 ? 0 : ends[slot - 1];
    const int end = ends[slot];
    if (begin == end || end - begin > kLongRecords) return;
    for (int k = lane; k < wf::Exact<T>::kWords; k += 32) words[warp][k] = 0;
    if (lane == 0) flags[warp] = 0;
    __syncwarp();
    for (int r = begin + lane; r < end; r += 32)
        wf::add_record<T>(words[warp], &flags[warp], grouped[r], true);
    __syncwarp();
    if (lane != 0) return;
    T* element = record_element<T>(t, slot);
    bool touched = flags[warp] != 0;
    for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[warp][k] != 0;
    if (touched) *element = wf::resolve_sum<T>(words[warp], flags[warp], *element);
}
}  // namespace wf_records

using namespace wf_records;

extern "C" __global__ void det_publish_records(wf::DetTarget* s, wf::DetTarget t, int words) {
    publish_records(s, t, words);
}
extern "C" __global__ void det_count_records(wf::DetTarget t, int* counts, wf::u64* report,
                                             BlockHot* block_hot) {
    count_records(t, counts, report, block_hot);
}
extern "C" __global__ void det_group_records(wf::DetTarget t, int* counts, const int* ends, wf::u64* grouped,
                                             const BlockHot* block_hot) {
    group_records(t, counts, ends, grouped, block_hot);
}
// Step 4 in one kernel (one node of a captured graph): the first `sum_blocks` blocks sum the long
// segments (4b), the others reduce the short ones.
#define WEFT_RECORDS(SUFFIX, T)                                                                             \
    extern "C" __global__ void det_sum_records_##SUFFIX(                                                    \
        wf::DetTarget t, const int* ends, const wf::u64* grouped, wf::i64* long_words, wf::u32* long_flags, \
        unsigned* long_done, unsigned sum_blocks) {                                                         \
        if (blockIdx.x < sum_blocks)                                                                        \
            sum_long_records<T>(t, ends, grouped, long_words, long_flags, long_done, blockIdx.x,            \
                                sum_blocks);                                                                \
        else                                                                                                \
            reduce_records<T>(t, ends, grouped, blockIdx.x - sum_blocks);                                   \
    }
#define WEFT_ONE_ELEMENT(SUFFIX, T)                                                           \
    extern "C" __global__ void det_sum_one_element_##SUFFIX(                                  \
        wf::DetTarget t, wf::i64* acc, wf::u32* acc_flags, unsigned* done, wf::u64* report) { \
        sum_one_element<T>(t, acc, acc_flags, done, report);                                  \
    }
WEFT_ONE_ELEMENT(f32, float)
WEFT_ONE_ELEMENT(f64, double)
WEFT_ONE_ELEMENT(f16, wf::f16)
WEFT_ONE_ELEMENT(bf16, wf::bf16)
WEFT_RECORDS(f32, float)
WEFT_RECORDS(f64, double)
WEFT_RECORDS(f16, wf::f16)
WEFT_RECORDS(bf16, wf::bf16)
