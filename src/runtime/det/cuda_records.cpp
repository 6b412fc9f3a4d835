// The records strategy's GPU kernels, as source text for the deterministic library module.
#include "runtime/det/cuda_records.hpp"

namespace weft::runtime::det {

namespace {

const char* const kRecordKernels = R"(
namespace wf_records {
constexpr int kWarps = 8;  // 256 threads per block

template <class T>
__device__ T* record_element(const wf::DetTarget& t, long long slot) {
    return reinterpret_cast<T*>(wf::slot_address(t, slot, static_cast<wf::i64>(sizeof(T))));
}

__device__ bool overflowed(const wf::DetTarget& t) { return *t.cursor > static_cast<wf::u64>(t.capacity); }

__device__ long long emitted(const wf::DetTarget& t) {
    const wf::u64 n = *t.cursor;
    return static_cast<long long>(n < static_cast<wf::u64>(t.capacity) ? n : t.capacity);
}

// The lanes of a warp with the same slot (a hot element's records lie side by side) act once,
// through their lowest lane; and the first slot a warp's leader brings to its block is the
// block's hot slot, counted in shared memory and added to the global count once per block.
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

// Records strategy, step 1: records per slot. An overflow leaves the records emitted in the
// target's status word, and the target unchanged. The grid is at most one wave whatever the
// capacity, its threads striding over the records emitted: the work follows the count on the
// device, not the capacity planned on the host.
__device__ void count_records(wf::DetTarget t, int* counts, wf::u64* report) {
    __shared__ unsigned hot_slot;
    __shared__ int hot_count;
    if (blockIdx.x == 0 && threadIdx.x == 0 && overflowed(t)) atomicMax(report, *t.cursor);
    if (overflowed(t)) return;
    const long long n = emitted(t);
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    // Tiles of one block-width: the bound is the same for every thread of the block, so all of
    // them reach each __syncthreads.
    for (long long tile = static_cast<long long>(blockIdx.x) * blockDim.x; tile < n; tile += stride) {
        if (threadIdx.x == 0) {
            hot_slot = kNoSlot;
            hot_count = 0;
        }
        __syncthreads();
        const long long r = tile + threadIdx.x;
        if (r < n) {
            const wf::u32 slot = t.record_slots[r];
            const Peers p = peers_of(slot);
            if (p.leads()) {
                if (claims_hot(&hot_slot, slot))
                    atomicAdd(&hot_count, __popc(p.mask));
                else
                    atomicAdd(counts + slot, __popc(p.mask));
            }
        }
        __syncthreads();
        if (threadIdx.x == 0 && hot_count != 0) atomicAdd(counts + hot_slot, hot_count);
    }
}

// Step 3 (after an inclusive scan of the counts into `ends`): group the records by slot, each
// taking a place from its slot's remaining count. The order inside a slot's group does not
// matter: the reduction is exact.
__device__ void group_records(wf::DetTarget t, int* counts, const int* ends, wf::u64* grouped) {
    __shared__ unsigned hot_slot;
    __shared__ int hot_count;
    __shared__ int hot_before;  // the hot slot's remaining count before the block took its places
    if (overflowed(t)) return;
    const long long n = emitted(t);
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long tile = static_cast<long long>(blockIdx.x) * blockDim.x; tile < n; tile += stride) {
        if (threadIdx.x == 0) {
            hot_slot = kNoSlot;
            hot_count = 0;
        }
        __syncthreads();
        const long long r = tile + threadIdx.x;
        const bool live = r < n;
        wf::u32 slot = 0;
        Peers p{0, 0, 0};
        int offset = 0;  // within the block's places (hot), or the slot's count before the warp's
        int hot = 0;
        if (live) {
            slot = t.record_slots[r];
            p = peers_of(slot);
            if (p.leads()) {
                hot = claims_hot(&hot_slot, slot) ? 1 : 0;
                offset = hot ? atomicAdd(&hot_count, __popc(p.mask)) : atomicSub(counts + slot, __popc(p.mask));
            }
            hot = __shfl_sync(p.mask, hot, p.leader);
            offset = __shfl_sync(p.mask, offset, p.leader);
        }
        __syncthreads();
        if (threadIdx.x == 0 && hot_count != 0) hot_before = atomicSub(counts + hot_slot, hot_count);
        __syncthreads();
        if (live) {
            const int at = hot ? ends[slot] - hot_before + offset + p.rank : ends[slot] - offset + p.rank;
            grouped[at] = t.records[r];
        }
        __syncthreads();  // hot_before is read before the next tile's block sets it
    }
}

// A segment (a slot's group) longer than this is summed by many blocks, kLongRecords records each
// (steps 4b and 4c); shorter ones by one warp (step 4).
constexpr int kLongRecords = 8192;

__device__ int begin_of(const int* ends, long long slot) { return slot == 0 ? 0 : ends[slot - 1]; }

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

// Step 4b: block b sums the records of chunk b (kLongRecords of them) that belong to long
// segments in shared memory (lanes of a warp first sum their digits), then adds the totals to
// the segment's accumulator in `long_words`, numbered by the chunk the segment begins in (a long
// segment spans more than a chunk, so no two begin in one chunk). A chunk meets at most two
// long segments: the one holding its first record and the one holding its last.
template <class T>
__device__ void sum_long_records(wf::DetTarget t, const int* ends, const wf::u64* grouped, wf::i64* long_words,
                                 wf::u32* long_flags) {
    using S = typename wf::StateOf<T>::type;
    constexpr int kWords = wf::Exact<T>::kWords;
    __shared__ wf::i64 words[2][kWords];
    __shared__ wf::u32 flags[2];
    __shared__ long long seg[2];  // the two segments' slots, -1 where not long
    __shared__ long long bound[2];  // the end of segment 0, the beginning of segment 1
    if (overflowed(t)) return;
    const long long n = emitted(t);
    const long long c0 = static_cast<long long>(blockIdx.x) * kLongRecords;
    if (c0 >= n) return;
    const long long c1 = c0 + kLongRecords < n ? c0 + kLongRecords : n;
    if (threadIdx.x < 2) {
        const long long s = slot_containing(ends, t.count, threadIdx.x == 0 ? c0 : c1 - 1);
        const int begin = begin_of(ends, s);
        seg[threadIdx.x] = ends[s] - begin > kLongRecords ? s : -1;
        bound[threadIdx.x] = threadIdx.x == 0 ? ends[s] : begin;
        flags[threadIdx.x] = 0;
    }
    for (int k = threadIdx.x; k < 2 * kWords; k += blockDim.x) words[k / kWords][k % kWords] = 0;
    __syncthreads();
    if (seg[0] < 0 && seg[1] < 0) return;
    for (long long r = c0 + threadIdx.x; r < c1; r += blockDim.x) {
        const int j = seg[0] >= 0 && r < bound[0] ? 0 : seg[1] >= 0 && r >= bound[1] ? 1 : -1;
        if (j < 0) continue;
        const S v = wf::bit_cast<S>(static_cast<typename wf::Format<S>::Bits>(grouped[r]));
        const wf::u32 flag = wf::special_flag(v);
        const wf::Split<S> s = wf::split(v);
        if (flag != 0 || s.significand == 0) {
            if (flag) atomicOr(&flags[j], flag);
            continue;
        }
        wf::add_digits<S>(words[j], wf::digits<S>(s), [&](int k, wf::i64 total) {
            atomicAdd(reinterpret_cast<unsigned long long*>(&words[j][k]), static_cast<unsigned long long>(total));
        });
    }
    __syncthreads();
    for (int j = 0; j < 2; ++j) {
        if (seg[j] < 0 || (j == 1 && seg[1] == seg[0])) continue;
        const long long id = begin_of(ends, seg[j]) / kLongRecords;
        for (int k = threadIdx.x; k < kWords; k += blockDim.x)
            if (words[j][k] != 0)
                atomicAdd(reinterpret_cast<unsigned long long*>(long_words + id * kWords + k),
                          static_cast<unsigned long long>(words[j][k]));
        if (threadIdx.x == 0 && flags[j] != 0) atomicOr(long_flags + id, flags[j]);
    }
}

// Step 4c: thread c resolves the long segment that begins in chunk c, if one does (it holds the
// chunk's last record).
template <class T>
__device__ void resolve_long_records(wf::DetTarget t, const int* ends, const wf::i64* long_words,
                                     const wf::u32* long_flags) {
    const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (overflowed(t)) return;
    const long long n = emitted(t);
    const long long c0 = c * kLongRecords;
    if (c0 >= n) return;
    const long long last = (c0 + kLongRecords < n ? c0 + kLongRecords : n) - 1;
    const long long s = slot_containing(ends, t.count, last);
    const int begin = begin_of(ends, s);
    if (begin < c0 || ends[s] - begin <= kLongRecords) return;
    const wf::i64* words = long_words + c * wf::Exact<T>::kWords;
    T* element = record_element<T>(t, s);
    bool touched = long_flags[c] != 0;
    for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[k] != 0;
    if (touched) *element = wf::resolve_sum<T>(words, long_flags[c], *element);
}

// Step 4: one warp per slot sums its group exactly in shared memory, then rounds once.
template <class T>
__device__ void reduce_records(wf::DetTarget t, const int* ends, const wf::u64* grouped) {
    __shared__ wf::i64 words[kWarps][wf::Exact<T>::kWords];
    __shared__ wf::u32 flags[kWarps];
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const long long slot = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    if (overflowed(t) || slot >= t.count) return;
    const int begin = slot == 0 ? 0 : ends[slot - 1];
    const int end = ends[slot];
    if (begin == end || end - begin > kLongRecords) return;
    for (int k = lane; k < wf::Exact<T>::kWords; k += 32) words[warp][k] = 0;
    if (lane == 0) flags[warp] = 0;
    __syncwarp();
    for (int r = begin + lane; r < end; r += 32) wf::add_record<T>(words[warp], &flags[warp], grouped[r], true);
    __syncwarp();
    if (lane != 0) return;
    T* element = record_element<T>(t, slot);
    bool touched = flags[warp] != 0;
    for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[warp][k] != 0;
    if (touched) *element = wf::resolve_sum<T>(words[warp], flags[warp], *element);
}
}  // namespace wf_records

using namespace wf_records;

extern "C" __global__ void det_count_records(wf::DetTarget t, int* counts, wf::u64* report) {
    count_records(t, counts, report);
}
extern "C" __global__ void det_group_records(wf::DetTarget t, int* counts, const int* ends, wf::u64* grouped) {
    group_records(t, counts, ends, grouped);
}
#define WEFT_LONG_RECORDS(SUFFIX, T)                                                                    \
    extern "C" __global__ void det_sum_long_records_##SUFFIX(wf::DetTarget t, const int* ends,             \
                                                              const wf::u64* grouped, wf::i64* long_words, \
                                                              wf::u32* long_flags) {                        \
        sum_long_records<T>(t, ends, grouped, long_words, long_flags);                                     \
    }                                                                                                       \
    extern "C" __global__ void det_resolve_long_records_##SUFFIX(wf::DetTarget t, const int* ends,         \
                                                                  const wf::i64* long_words,                \
                                                                  const wf::u32* long_flags) {              \
        resolve_long_records<T>(t, ends, long_words, long_flags);                                          \
    }
WEFT_LONG_RECORDS(f32, float)
WEFT_LONG_RECORDS(f64, double)
WEFT_LONG_RECORDS(f16, wf::f16)
WEFT_LONG_RECORDS(bf16, wf::bf16)
extern "C" __global__ void det_reduce_records_f32(wf::DetTarget t, const int* ends, const wf::u64* grouped) {
    reduce_records<float>(t, ends, grouped);
}
extern "C" __global__ void det_reduce_records_f64(wf::DetTarget t, const int* ends, const wf::u64* grouped) {
    reduce_records<double>(t, ends, grouped);
}
extern "C" __global__ void det_reduce_records_f16(wf::DetTarget t, const int* ends, const wf::u64* grouped) {
    reduce_records<wf::f16>(t, ends, grouped);
}
extern "C" __global__ void det_reduce_records_bf16(wf::DetTarget t, const int* ends, const wf::u64* grouped) {
    reduce_records<wf::bf16>(t, ends, grouped);
}
)";

}  // namespace

const char* records_kernels() {
    return kRecordKernels;
}

}  // namespace weft::runtime::det
