// The deterministic accumulation's own kernels: publishing a target's state, resolving its
// slots into the array (the host side: src/runtime/det/cuda_accumulation.cpp; the records
// strategy's kernels and the float64 exact resolve follow in the same module).
#include "device/kernels/library.cuh"

namespace {

template <class T>
__device__ void publish_and_fill(wf::DetTarget* state, wf::DetTarget t, bool fill_keys, bool is_max) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i == 0) *state = t;
    if (!fill_keys || i >= t.count) return;
    using Key = typename wf::KeyOf<T>::Key;
    reinterpret_cast<Key*>(t.words)[i] = is_max ? wf::KeyOf<T>::kMin : wf::KeyOf<T>::kMax;
}

template <class T>
__device__ T* element_of(const wf::DetTarget& t, long long slot) {
    return reinterpret_cast<T*>(wf::slot_address(t, slot, static_cast<wf::i64>(sizeof(T))));
}

// A carrying target: counts the slots whose running sum left the words' range (into `cursor`).
__device__ void count_out_of_range(wf::DetTarget t) {
    const long long slot = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (slot < t.count && (t.flags[slot] & wf::kFlagOverflow))
        atomicAdd(reinterpret_cast<unsigned long long*>(t.cursor), 1ull);
}

// A carrying target whose sums left the range reports how many slots did in its status word.
// `clean`: the slot's words and flags are zeroed once read, so that the next launch can reuse
// the state without zeroing it (state kept between direct launches).
template <class T>
__device__ void resolve_exact(wf::DetTarget t, int family, wf::u64* report, bool clean) {
    const long long slot = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t.carrying && *t.cursor != 0) {  // out of range: the target keeps its value
        if (slot == 0) atomicMax(report, *t.cursor);
        return;
    }
    if (slot >= t.count) return;
    if (family == 0) {
        wf::resolve_exact_slot<T>(t, slot, clean);
    } else {
        T* element = element_of<T>(t, slot);
        const auto key = reinterpret_cast<const typename wf::KeyOf<T>::Key*>(t.words)[slot];
        *element = wf::resolve_minmax<T>(key, *element, family == 2);
    }
}

// Compact: the cells zeroed and no anchor kept (spill blocks are zeroed where a slot first
// spills), the state published, its grid barrier word and a carrying target's count of slots out
// of range cleared: one kernel, so one node of a captured graph.
__device__ void publish_compact(wf::DetTarget* state, wf::DetTarget t, wf::u32* barrier) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i == 0) {
        *state = t;
        state->anchors = nullptr;  // published by the first resolve kernel (resolve_compact)
        *barrier = 0;
        if (t.cursor) *t.cursor = 0;
    }
    if (i >= t.count) return;
    t.cells[i] = wf::CompactCell{0, 0, 0};
    if (t.anchors) t.anchors[i] = wf::kNoAnchor;
}

__device__ void count_compact_out_of_range(wf::DetTarget t) {
    const long long slot = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (slot < t.count && (t.cells[slot].meta & wf::kFlagOverflow))
        atomicAdd(reinterpret_cast<unsigned long long*>(t.cursor), 1ull);
}

// Only the slots a contribution reached are read beyond their cell; their cells are left as the
// next launch needs them (zeroed, or holding the anchor kept for the slot), so that the state can
// serve it without zeroing. The kept anchors' array is published in the state the kernels read
// (`state`) once a resolve kernel has written it: until then (a state only ever resolved by its
// kernels, which keep no anchor) a contribution does not read it.
template <class T>
__device__ void resolve_compact(wf::DetTarget* state, wf::DetTarget t, wf::u64* report) {
    const long long slot = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (slot == 0 && t.anchors) state->anchors = t.anchors;
    if (t.carrying && *t.cursor != 0) {  // out of range: the target keeps its value
        if (slot == 0) atomicMax(report, *t.cursor);
        return;
    }
    if (slot < t.count) wf::resolve_compact_slot<T>(t, slot, true);
}

}  // namespace

extern "C" __global__ void det_publish_f32(wf::DetTarget* s, wf::DetTarget t, int keys, int is_max) {
    publish_and_fill<float>(s, t, keys != 0, is_max != 0);
}
extern "C" __global__ void det_publish_f64(wf::DetTarget* s, wf::DetTarget t, int keys, int is_max) {
    publish_and_fill<double>(s, t, keys != 0, is_max != 0);
}
extern "C" __global__ void det_count_out_of_range(wf::DetTarget t) {
    count_out_of_range(t);
}
extern "C" __global__ void det_publish_compact(wf::DetTarget* s, wf::DetTarget t, wf::u32* barrier) {
    publish_compact(s, t, barrier);
}
extern "C" __global__ void det_count_compact_out_of_range(wf::DetTarget t) {
    count_compact_out_of_range(t);
}
extern "C" __global__ void det_resolve_compact_f32(wf::DetTarget* s, wf::DetTarget t, wf::u64* report) {
    resolve_compact<float>(s, t, report);
}
extern "C" __global__ void det_resolve_compact_f16(wf::DetTarget* s, wf::DetTarget t, wf::u64* report) {
    resolve_compact<wf::f16>(s, t, report);
}
extern "C" __global__ void det_resolve_compact_bf16(wf::DetTarget* s, wf::DetTarget t, wf::u64* report) {
    resolve_compact<wf::bf16>(s, t, report);
}
extern "C" __global__ void det_resolve_f32(wf::DetTarget t, int family, wf::u64* report, int clean) {
    resolve_exact<float>(t, family, report, clean != 0);
}
extern "C" __global__ void det_resolve_f64(wf::DetTarget t, int family, wf::u64* report, int clean) {
    resolve_exact<double>(t, family, report, clean != 0);
}
extern "C" __global__ void det_resolve_f16(wf::DetTarget t, int family, wf::u64* report, int clean) {
    resolve_exact<wf::f16>(t, family, report, clean != 0);
}
extern "C" __global__ void det_resolve_bf16(wf::DetTarget t, int family, wf::u64* report, int clean) {
    resolve_exact<wf::bf16>(t, family, report, clean != 0);
}
