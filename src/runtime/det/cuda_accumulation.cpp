// Deterministic accumulation on a GPU: state in stream-ordered device memory, initialised and
// resolved by library kernels built from the same device header the generated code uses.
#include "runtime/det/cuda_accumulation.hpp"

#include <algorithm>

#include "codegen/generated.hpp"
#include "device/abi.h"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

constexpr int kThreads = 256;

const char* const kKernels = R"(
namespace {
constexpr int kWarps = 8;  // kThreads / 32

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
    if (slot < t.count && (t.flags[slot] & wf::kFlagOverflow)) atomicAdd(reinterpret_cast<unsigned long long*>(t.cursor), 1ull);
}

// A carrying target whose sums left the range reports how many slots did in its status word.
template <class T>
__device__ void resolve_exact(wf::DetTarget t, int family, wf::u64* report) {
    const long long slot = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t.carrying && *t.cursor != 0) {  // out of range: the target keeps its value
        if (slot == 0) atomicMax(report, *t.cursor);
        return;
    }
    if (slot >= t.count) return;
    T* element = element_of<T>(t, slot);
    if (family == 0) {
        const wf::i64* words = t.words + slot * wf::Exact<T>::kWords;
        bool touched = t.flags[slot] != 0;
        for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[k] != 0;
        if (touched) *element = wf::resolve_sum<T>(words, t.flags[slot], *element);
    } else {
        const auto key = reinterpret_cast<const typename wf::KeyOf<T>::Key*>(t.words)[slot];
        *element = wf::resolve_minmax<T>(key, *element, family == 2);
    }
}

__device__ bool overflowed(const wf::DetTarget& t) { return *t.cursor > static_cast<wf::u64>(t.capacity); }

__device__ long long emitted(const wf::DetTarget& t) {
    const wf::u64 n = *t.cursor;
    return static_cast<long long>(n < static_cast<wf::u64>(t.capacity) ? n : t.capacity);
}

// Records strategy, step 1: records per slot. An overflow leaves the records emitted in the
// target's status word, and the target unchanged. The grid is at most one wave whatever the
// capacity, its threads striding over the records emitted: the work follows the count on the
// device, not the capacity planned on the host.
__device__ void count_records(wf::DetTarget t, int* counts, wf::u64* report) {
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (first == 0 && overflowed(t)) atomicMax(report, *t.cursor);
    if (overflowed(t)) return;
    const long long n = emitted(t);
    for (long long r = first; r < n; r += static_cast<long long>(gridDim.x) * blockDim.x)
        atomicAdd(counts + t.record_slots[r], 1);
}

// Step 3 (after an inclusive scan of the counts into `ends`): group the records by slot. The
// order inside a slot's group does not matter: the reduction is exact.
__device__ void group_records(wf::DetTarget t, int* counts, const int* ends, wf::u64* grouped) {
    if (overflowed(t)) return;
    const long long n = emitted(t);
    for (long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
         r += static_cast<long long>(gridDim.x) * blockDim.x) {
        const wf::u32 slot = t.record_slots[r];
        grouped[ends[slot] - atomicSub(counts + slot, 1)] = t.records[r];
    }
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
    if (begin == end) return;
    for (int k = lane; k < wf::Exact<T>::kWords; k += 32) words[warp][k] = 0;
    if (lane == 0) flags[warp] = 0;
    __syncwarp();
    for (int r = begin + lane; r < end; r += 32) wf::add_record<T>(words[warp], &flags[warp], grouped[r], true);
    __syncwarp();
    if (lane != 0) return;
    T* element = element_of<T>(t, slot);
    bool touched = flags[warp] != 0;
    for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[warp][k] != 0;
    if (touched) *element = wf::resolve_sum<T>(words[warp], flags[warp], *element);
}
}  // namespace

extern "C" __global__ void det_publish_f32(wf::DetTarget* s, wf::DetTarget t, int keys, int is_max) {
    publish_and_fill<float>(s, t, keys != 0, is_max != 0);
}
extern "C" __global__ void det_publish_f64(wf::DetTarget* s, wf::DetTarget t, int keys, int is_max) {
    publish_and_fill<double>(s, t, keys != 0, is_max != 0);
}
extern "C" __global__ void det_count_out_of_range(wf::DetTarget t) { count_out_of_range(t); }
extern "C" __global__ void det_resolve_f32(wf::DetTarget t, int family, wf::u64* report) {
    resolve_exact<float>(t, family, report);
}
extern "C" __global__ void det_resolve_f64(wf::DetTarget t, int family, wf::u64* report) {
    resolve_exact<double>(t, family, report);
}
extern "C" __global__ void det_resolve_f16(wf::DetTarget t, int family, wf::u64* report) {
    resolve_exact<wf::f16>(t, family, report);
}
extern "C" __global__ void det_resolve_bf16(wf::DetTarget t, int family, wf::u64* report) {
    resolve_exact<wf::bf16>(t, family, report);
}
extern "C" __global__ void det_count_records(wf::DetTarget t, int* counts, wf::u64* report) {
    count_records(t, counts, report);
}
extern "C" __global__ void det_group_records(wf::DetTarget t, int* counts, const int* ends, wf::u64* grouped) {
    group_records(t, counts, ends, grouped);
}
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

int family_code(detail::AtomicOp f) {
    return f == detail::AtomicOp::Add ? 0 : f == detail::AtomicOp::Min ? 1 : 2;
}

using Memory = std::shared_ptr<detail::Allocation>;

class CudaAccumulation final : public Accumulation {
public:
    CudaAccumulation(int ordinal, std::vector<TargetPlan> plans, const LaunchSite& site)
        : ordinal_(ordinal), site_(site) {
        for (TargetPlan& p : plans) {
            shared_with_.push_back(p.shared_with);
            if (p.shared_with < 0) targets_.push_back(make_target(std::move(p)));
            owner_index_.push_back(targets_.size() - 1);
        }
    }

    // Owners are created in order, so a sharer's owner is the owner's own target.
    void* state(size_t i) const override {
        const size_t at =
            shared_with_[i] >= 0 ? owner_index_[static_cast<size_t>(shared_with_[i])] : owner_index_[i];
        return targets_[at].state->ptr;
    }

    void resolve() override {
        for (Target& t : targets_) {
            if (t.plan.records)
                resolve_records(t);
            else
                resolve_exact(t);
        }
        targets_.clear();  // freed in stream order, after the resolve kernels
    }

private:
    struct Target {
        TargetPlan plan;
        Memory state, words, flags, records, record_slots, cursor;
        wf::DetTarget value{};
    };

    // Device memory for `count` items of `size` bytes of target `p`; failure names the target.
    Memory allocate(const TargetPlan& p, int64_t count, size_t size) const {
        const size_t bytes = state_bytes(p, count, size, site_);
        try {
            return detail::allocate(Device::cuda(ordinal_), bytes);
        } catch (const Error& e) {
            state_allocation_failed(p, e.message(), site_);
        }
    }
    void zero(const Memory& m) const { detail::zero_bytes(m->ptr, Device::cuda(ordinal_), m->bytes); }
    // Half-precision targets keep float32's state; only their resolve kernels are their own.
    bool f32_state(const Target& t) const { return t.plan.target.dtype != DType::Float64; }
    std::string resolve_kernel(const Target& t, const char* prefix) const {
        switch (t.plan.target.dtype) {
            case DType::Float16: return std::string(prefix) + "_f16";
            case DType::BFloat16: return std::string(prefix) + "_bf16";
            case DType::Float64: return std::string(prefix) + "_f64";
            default: return std::string(prefix) + "_f32";
        }
    }

    Target make_target(TargetPlan plan) {
        Target t{std::move(plan)};
        const TargetPlan& p = t.plan;
        const SlotMap& m = p.slots;
        t.state = allocate(p, 1, sizeof(wf::DetTarget));
        describe_slots(p, t.value);
        const bool add = p.target.family == detail::AtomicOp::Add;
        if (p.records || p.carrying) {
            // Records appended, or a carrying target's count of slots out of range.
            t.cursor = allocate(p, 1, 8);
            zero(t.cursor);
            t.value.cursor = static_cast<wf::u64*>(t.cursor->ptr);
        }
        if (p.records) {
            t.records = allocate(p, p.capacity, 8);
            t.record_slots = allocate(p, p.capacity, 4);
            t.value.records = static_cast<wf::u64*>(t.records->ptr);
            t.value.record_slots = static_cast<wf::u32*>(t.record_slots->ptr);
            t.value.capacity = p.capacity;
        } else {
            const int64_t words_per_slot = add ? (f32_state(t) ? 9 : 66) : 1;
            int64_t words = 0;
            if (__builtin_mul_overflow(m.count, words_per_slot, &words)) words = -1;
            t.words = allocate(p, words, 8);
            t.value.words = static_cast<wf::i64*>(t.words->ptr);
            if (add) {
                t.flags = allocate(p, m.count, 4);
                t.value.flags = static_cast<wf::u32*>(t.flags->ptr);
                zero(t.words);
                zero(t.flags);
            }
        }
        int keys = !add ? 1 : 0;
        int is_max = p.target.family == detail::AtomicOp::Max ? 1 : 0;
        void* state_ptr = t.state->ptr;
        void* params[] = {&state_ptr, &t.value, &keys, &is_max};
        launch(f32_state(t) ? "det_publish_f32" : "det_publish_f64", keys ? m.count : 1, params);
        return t;
    }

    void resolve_exact(Target& t) const {
        cu::StatusTicket ticket;  // a carrying target reports the slots out of range
        if (t.plan.carrying) {
            ticket = status_word(t, false);
            void* check_params[] = {&t.value};
            launch("det_count_out_of_range", t.plan.slots.count, check_params);
        }
        int family = family_code(t.plan.target.family);
        wf::u64* report = ticket.word();
        void* params[] = {&t.value, &family, &report};
        launch(resolve_kernel(t, "det_resolve").c_str(), t.plan.slots.count, params);
    }

    // The status word in which the resolve kernels leave the target's count (records emitted,
    // past the capacity, or slots out of range); the stream's next synchronization reports it.
    // Work captured into a graph keeps its word, so a replay that fails reports too.
    cu::StatusTicket status_word(const Target& t, bool records) const {
        const LaunchSite& site = site_;
        const std::string message =
            records ? overflow_message(t.plan, 0, site) : range_message(t.plan, 0, site);
        const std::string key =
            site.kernel + "\n" + site.file + ":" + std::to_string(site.line) + "\n" + message;
        return cu::status_word(
            cu::current_stream(ordinal_), key, [plan = t.plan, site, records](uint64_t count) {
                throw Error(records ? overflow_message(plan, count, site) : range_message(plan, count, site),
                            site.kernel, site.file, site.line);
            });
    }

    void resolve_records(Target& t) const {
        const int64_t slots = t.plan.slots.count;
        const Memory counts = allocate(t.plan, slots, 4);
        const Memory ends = allocate(t.plan, slots, 4);
        const Memory grouped = allocate(t.plan, t.plan.capacity, 8);
        zero(counts);
        void* counts_ptr = counts->ptr;
        void* ends_ptr = ends->ptr;
        void* grouped_ptr = grouped->ptr;
        const cu::StatusTicket ticket = status_word(t, true);
        wf::u64* report = ticket.word();
        void* count_params[] = {&t.value, &counts_ptr, &report};
        const int64_t wave = static_cast<int64_t>(cu::context(ordinal_).sm_count) * 2048;
        const int64_t record_threads = std::min<int64_t>(t.plan.capacity, wave);
        launch("det_count_records", record_threads, count_params);
        cu::scan(ordinal_, DType::Int32, counts->ptr, ends->ptr, slots, true);
        void* group_params[] = {&t.value, &counts_ptr, &ends_ptr, &grouped_ptr};
        launch("det_group_records", record_threads, group_params);
        void* reduce_params[] = {&t.value, &ends_ptr, &grouped_ptr};
        launch(resolve_kernel(t, "det_reduce_records").c_str(), slots * 32, reduce_params);
    }

    void launch(const char* name, int64_t threads, void** params) const {
        const cu::CUfunction f =
            cu::library_function(ordinal_, "deterministic", codegen::prelude() + kKernels, name);
        const auto stream = cu::current_stream(ordinal_);
        const auto blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
        cu::check(cu::require_driver().cuLaunchKernel(f, blocks == 0 ? 1 : blocks, 1, 1, kThreads, 1, 1, 0,
                                                      stream->stream, params, nullptr),
                  name);
        cu::note_launch(*stream, site_.kernel + " (deterministic " + name + ")");
    }

    int ordinal_;
    LaunchSite site_;
    std::vector<Target> targets_;      // owners only
    std::vector<int> shared_with_;     // per plan
    std::vector<size_t> owner_index_;  // per plan: its (or its owner's) index in targets_
};

}  // namespace

std::unique_ptr<Accumulation> prepare_cuda(int ordinal, std::vector<TargetPlan> plans,
                                           const LaunchSite& site) {
    return std::make_unique<CudaAccumulation>(ordinal, std::move(plans), site);
}

}  // namespace weft::runtime::det
