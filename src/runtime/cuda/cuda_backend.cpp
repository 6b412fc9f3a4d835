// The CUDA backend: work is queued on the thread's current stream of the GPU and reports its
// failures at the stream's next synchronization.
#include "runtime/cuda/cuda_backend.hpp"

#include <array>
#include <utility>

#include "codegen/generated.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/cuda_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/cuda/stream_handles.hpp"
#include "runtime/det/cuda_accumulation.hpp"
#include "runtime/det/cuda_slots.hpp"
#include "runtime/graph_capture.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace {

CUdeviceptr dptr(const void* p) {
    return reinterpret_cast<CUdeviceptr>(p);
}

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(int ordinal) : ordinal_(ordinal) {}

    void allocate(detail::Allocation& a) const override {
        // A request larger than the GPU is refused before the driver is asked: the message can
        // say why, and the stream-ordered pool is never asked to grow for it.
        const size_t total = context(ordinal_).total_memory;
        if (a.bytes > total)
            throw Error("cannot allocate " + std::to_string(a.bytes) +
                        " bytes on cuda:" + std::to_string(ordinal_) + ", which has " +
                        std::to_string(total) + " bytes of memory; use smaller arrays or split the work");
        a.stream = cuda::current_stream(ordinal_);
        CUdeviceptr p = 0;
        // While Weft captures the stream into a graph, memory is allocated outside the capture:
        // a stream-ordered allocation would become the graph's own node, freed inside it, and a
        // conditional body may hold none.
        const Capture* capture = active_capture(Device::cuda(ordinal_));
        a.captured = capture && capture->stream == a.stream.get() && cuda::capturing(*a.stream);
        CUresult r = 0;
        if (a.captured) {
            const UnsafeCallsAllowed unsafe;
            r = require_driver().cuMemAlloc(&p, a.bytes == 0 ? 1 : a.bytes);
        } else {
            r = require_driver().cuMemAllocAsync(&p, a.bytes == 0 ? 1 : a.bytes, a.stream->stream);
        }
        if (r != CUDA_SUCCESS)
            throw Error("cannot allocate " + std::to_string(a.bytes) +
                        " bytes on cuda:" + std::to_string(ordinal_) + " (CUDA error " + std::to_string(r) +
                        "); free arrays you no longer need");
        a.ptr = reinterpret_cast<void*>(p);
    }
    // Freed in order on the stream it was allocated on.
    void release(detail::Allocation& a) const noexcept override {
        if (!a.ptr || !bind_for_release(ordinal_)) return;
        const Driver& d = *driver();
        if (a.captured) {
            int previous = CU_STREAM_CAPTURE_MODE_RELAXED;
            d.cuThreadExchangeStreamCaptureMode(&previous);
            d.cuMemFree(dptr(a.ptr));
            d.cuThreadExchangeStreamCaptureMode(&previous);
            return;
        }
        // Freed while its stream is being captured by Weft: a free there would become a node of
        // the graph, which may only free the graph's own memory. The graph frees it instead.
        int status = 0;
        Capture* capture = nullptr;
        try {
            capture = active_capture(Device::cuda(ordinal_));
            if (capture && capture->stream == a.stream.get() &&
                d.cuStreamIsCapturing(a.stream->stream, &status) == CUDA_SUCCESS && status != 0) {
                auto later = std::make_shared<detail::Allocation>();
                later->ptr = std::exchange(a.ptr, nullptr);
                later->bytes = a.bytes;
                later->device = a.device;
                later->stream = a.stream;
                capture->keep.push_back(std::move(later));
                return;
            }
        } catch (...) {  // (no capture to hand it to: freed in stream order, as always)
        }
        d.cuMemFreeAsync(dptr(a.ptr), a.stream->stream);
    }
    void zero(void* dst, size_t bytes) const override {
        check(require_driver().cuMemsetD8Async(dptr(dst), 0, bytes, stream()), "memset");
    }
    void set_element(void* dst, uint64_t bits, size_t bytes) const override {
        const Driver& d = require_driver();
        const CUdeviceptr p = dptr(dst);
        const auto low = static_cast<unsigned>(bits & 0xffffffffu);
        if (bytes == 2) {
            check(d.cuMemsetD16Async(p, static_cast<unsigned short>(bits), 1, stream()), "memset");
        } else {
            check(d.cuMemsetD32Async(p, low, 1, stream()), "memset");
            if (bytes == 8)
                check(d.cuMemsetD32Async(p + 4, static_cast<unsigned>(bits >> 32), 1, stream()), "memset");
        }
    }
    void copy_from_host(void* dst, const void* src, size_t bytes) const override {
        refuse_in_capture(Device::cuda(ordinal_), "a copy from the host into GPU memory");
        const auto s = cuda::current_stream(ordinal_);
        check(require_driver().cuMemcpyHtoDAsync(dptr(dst), src, bytes, s->stream), "host-to-device copy");
        cuda::synchronize(*s);
    }
    void copy_to_host(void* dst, const void* src, size_t bytes) const override {
        refuse_in_capture(Device::cuda(ordinal_), "a copy from GPU memory to the host");
        const auto s = cuda::current_stream(ordinal_);
        check(require_driver().cuMemcpyDtoHAsync(dst, dptr(src), bytes, s->stream), "device-to-host copy");
        cuda::synchronize(*s);
    }
    void copy_within(void* dst, const void* src, size_t bytes) const override {
        check(require_driver().cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, stream()),
              "device-to-device copy");
    }
    bool host_addressable() const override { return false; }

    codegen::Dialect dialect() const override { return codegen::Dialect::Cuda; }
    std::shared_ptr<DeviceModule> load_module(codegen::Generated generated, const plan::ProgramPlan& plan,
                                              const Options& options) const override {
        const UnsafeCallsAllowed unsafe;  // a kernel first launched inside a capture loads here
        return CudaModule::load(std::move(generated), plan, options, ordinal_);
    }

    std::unique_ptr<det::Accumulation> accumulation(std::vector<det::TargetPlan> plans,
                                                    const det::LaunchSite& site) const override {
        return det::prepare_cuda(ordinal_, std::move(plans), site);
    }
    std::unique_ptr<det::SlotAllocation> slot_allocation(det::SlotPlan plan,
                                                         const det::LaunchSite& site) const override {
        return det::prepare_cuda_slots(ordinal_, std::move(plan), site);
    }
    void scan(DType dtype, const void* in, void* out, int64_t n, bool inclusive) const override {
        cuda::scan(ordinal_, dtype, in, out, n, inclusive);
    }

    bool finds_failures_at_launch() const override { return false; }
    bool has_serial_launches() const override { return false; }
    bool runs_serial(int64_t, const Options&) const override { return false; }
    void synchronize() const override { cuda::synchronize(*cuda::current_stream(ordinal_)); }
    std::shared_ptr<detail::StreamHandle> create_stream() const override {
        return std::make_shared<detail::StreamHandle>(detail::StreamHandle{cuda::create_stream(ordinal_)});
    }
    std::shared_ptr<detail::StreamHandle> current_stream() const override {
        return std::make_shared<detail::StreamHandle>(detail::StreamHandle{cuda::current_stream(ordinal_)});
    }
    std::shared_ptr<detail::EventHandle> create_event() const override {
        context(ordinal_);
        auto e = std::make_shared<detail::EventHandle>();
        e->ordinal = ordinal_;
        check(require_driver().cuEventCreate(&e->event, CU_EVENT_DEFAULT), "cuEventCreate");
        return e;
    }
    DeviceInfo info() const override {
        const DeviceContext& c = context(ordinal_);
        return {c.name, c.cc_major, c.cc_minor, c.sm_count, c.total_memory};
    }

    bool capturing() const override { return cuda::capturing(*cuda::current_stream(ordinal_)); }
    std::unique_ptr<CaptureRecorder> begin_capture(Capture& capture) const override {
        return cuda::capture_stream(cuda::current_stream(ordinal_), capture);
    }

private:
    CUstream stream() const { return cuda::current_stream(ordinal_)->stream; }
    int ordinal_;
};

constexpr int kMaxOrdinals = 64;

}  // namespace

const Backend& cuda_backend(int ordinal) {
    // Never destroyed, so that arrays held in static objects can still be freed during exit.
    static const auto* backends = [] {
        auto* all = new std::array<std::unique_ptr<CudaBackend>, kMaxOrdinals>();
        for (int i = 0; i < kMaxOrdinals; ++i)
            (*all)[static_cast<size_t>(i)] = std::make_unique<CudaBackend>(i);
        return all;
    }();
    if (ordinal < 0 || ordinal >= kMaxOrdinals)
        throw Error("device cuda:" + std::to_string(ordinal) + " does not exist; this machine has " +
                    std::to_string(device_count()) + " GPU(s)");
    return *(*backends)[static_cast<size_t>(ordinal)];
}

}  // namespace weft::runtime::cuda
