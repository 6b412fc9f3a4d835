// Deterministic accumulation on a GPU: state in stream-ordered device memory, initialised and
// resolved by library kernels built from the same device header the generated code uses.
#include "runtime/det/cuda_accumulation.hpp"

#include "codegen/emit.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/memory.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

// Mirrors wf::DetTarget.
struct TargetState {
    char* base;
    int64_t count;
    int64_t* words;
    uint32_t* flags;
};

constexpr int kThreads = 256;

const char* const kKernels = R"(
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
__device__ void resolve(wf::DetTarget t, int family) {
    const long long slot = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (slot >= t.count) return;
    T* element = reinterpret_cast<T*>(t.base) + slot;
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
}  // namespace

extern "C" __global__ void det_publish_f32(wf::DetTarget* s, wf::DetTarget t, int keys, int is_max) {
    publish_and_fill<float>(s, t, keys != 0, is_max != 0);
}
extern "C" __global__ void det_publish_f64(wf::DetTarget* s, wf::DetTarget t, int keys, int is_max) {
    publish_and_fill<double>(s, t, keys != 0, is_max != 0);
}
extern "C" __global__ void det_resolve_f32(wf::DetTarget t, int family) { resolve<float>(t, family); }
extern "C" __global__ void det_resolve_f64(wf::DetTarget t, int family) { resolve<double>(t, family); }
)";

int family_code(ir::AtomicOp f) { return f == ir::AtomicOp::Add ? 0 : f == ir::AtomicOp::Min ? 1 : 2; }

class CudaAccumulation final : public Accumulation {
public:
    CudaAccumulation(int ordinal, const std::vector<ir::DetTarget>& targets, const std::vector<const AnyArray*>& arrays)
        : ordinal_(ordinal), targets_(targets) {
        const Device gpu = Device::cuda(ordinal);
        for (size_t i = 0; i < targets.size(); ++i) {
            const ir::DetTarget& target = targets[i];
            const Span span = span_of(*arrays[i]);
            const bool f32 = target.dtype == DType::Float32;
            Buffers b;
            b.state = detail::allocate(gpu, sizeof(TargetState));
            b.value = {span.base, span.count, nullptr, nullptr};
            const bool add = target.family == ir::AtomicOp::Add;
            const int64_t words_per_slot = add ? (f32 ? 9 : 66) : 1;
            b.words = detail::allocate(gpu, static_cast<size_t>(span.count * words_per_slot) * 8);
            b.value.words = static_cast<int64_t*>(b.words->ptr);
            if (add) {
                b.flags = detail::allocate(gpu, static_cast<size_t>(span.count) * 4);
                b.value.flags = static_cast<uint32_t*>(b.flags->ptr);
                detail::zero_bytes(b.words->ptr, gpu, b.words->bytes);
                detail::zero_bytes(b.flags->ptr, gpu, b.flags->bytes);
            }
            int keys = add ? 0 : 1;
            int is_max = target.family == ir::AtomicOp::Max ? 1 : 0;
            void* state_ptr = b.state->ptr;
            void* params[] = {&state_ptr, &b.value, &keys, &is_max};
            launch(f32 ? "det_publish_f32" : "det_publish_f64", add ? 1 : span.count, params);
            buffers_.push_back(std::move(b));
        }
    }

    void* state(size_t i) const override { return buffers_[i].state->ptr; }

    void resolve() override {
        for (size_t i = 0; i < targets_.size(); ++i) {
            int family = family_code(targets_[i].family);
            void* params[] = {&buffers_[i].value, &family};
            launch(targets_[i].dtype == DType::Float32 ? "det_resolve_f32" : "det_resolve_f64",
                   buffers_[i].value.count, params);
        }
        buffers_.clear();  // freed in stream order, after the resolve kernels
    }

private:
    struct Buffers {
        std::shared_ptr<detail::Allocation> state, words, flags;
        TargetState value;
    };

    void launch(const char* name, int64_t threads, void** params) const {
        const cu::CUfunction f = cu::library_function(ordinal_, "deterministic", codegen::prelude() + kKernels, name);
        const auto stream = cu::current_stream(ordinal_);
        const auto blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
        cu::check(cu::require_driver().cuLaunchKernel(f, blocks == 0 ? 1 : blocks, 1, 1, kThreads, 1, 1, 0,
                                                      stream->stream, params, nullptr),
                  name);
        cu::note_launch(*stream, std::string("deterministic ") + name);
    }

    int ordinal_;
    std::vector<ir::DetTarget> targets_;
    std::vector<Buffers> buffers_;
};

}  // namespace

std::unique_ptr<Accumulation> prepare_cuda(int ordinal, const std::vector<ir::DetTarget>& targets,
                                           const std::vector<const AnyArray*>& arrays) {
    return std::make_unique<CudaAccumulation>(ordinal, targets, arrays);
}

}  // namespace weft::runtime::det
