// The float64 exact sums' resolve kernel (part of the deterministic library module). A warp
// resolves 32 consecutive slots. Its lanes first copy the slots' digit words (66 each, 528
// contiguous bytes per slot) into shared memory with coalesced loads: a thread reading its own
// slot's words, 528 bytes from its neighbour's, used a quarter of each sector it fetched and
// fetched most sectors several times. Then each lane rounds its slot from shared memory, and the
// lanes zero the words of the slots that were touched together (for a state kept between
// launches). Blocks of two warps: 34 KB of shared memory.
#include "device/kernels/library.cuh"

namespace wf_exact_f64 {
constexpr int kWords = wf::Exact<double>::kWords;
constexpr int kPitch = kWords + 1;  // odd: lanes reading their own slot's word k hit distinct banks
constexpr int kWarps = wf::kernels::det::kExactF64Threads / 32;
constexpr unsigned kAll = 0xffffffffu;

__device__ void resolve_sum_f64(wf::DetTarget t, wf::u64* report, bool clean) {
    __shared__ wf::i64 staged[kWarps][32][kPitch];
    if (t.carrying && *t.cursor != 0) {  // out of range: the target keeps its value
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicMax(report, *t.cursor);
        return;
    }
    const int warp = static_cast<int>(threadIdx.x / 32);
    const int lane = static_cast<int>(threadIdx.x % 32);
    const long long first = (static_cast<long long>(blockIdx.x) * kWarps + warp) * 32;
    if (first >= t.count) return;  // the whole warp
    const int slots = t.count - first < 32 ? static_cast<int>(t.count - first) : 32;
    wf::i64* words = t.words + first * kWords;
    for (int w = lane; w < slots * kWords; w += 32) staged[warp][w / kWords][w % kWords] = words[w];
    const wf::u32 flags = lane < slots ? t.flags[first + lane] : 0;
    __syncwarp();
    bool touched = false;
    if (lane < slots) {
        touched = flags != 0;
        for (int k = 0; k < kWords && !touched; ++k) touched = staged[warp][lane][k] != 0;
    }
    if (touched) {
        double* element = reinterpret_cast<double*>(wf::slot_address(t, first + lane, 8));
        *element = wf::resolve_sum<double>(staged[warp][lane], flags, *element);
    }
    const unsigned touched_lanes = __ballot_sync(kAll, touched);
    if (!clean || touched_lanes == 0) return;  // the same for the whole warp
    for (int w = lane; w < slots * kWords; w += 32)
        if (touched_lanes & (1u << (w / kWords))) words[w] = 0;
    if (touched) t.flags[first + lane] = 0;
}
}  // namespace wf_exact_f64

extern "C" __global__ void det_resolve_sum_f64(wf::DetTarget t, wf::u64* report, int clean) {
    wf_exact_f64::resolve_sum_f64(t, report, clean != 0);
}
