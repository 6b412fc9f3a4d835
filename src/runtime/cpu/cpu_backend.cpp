// The CPU backend: 64-byte aligned host memory; every launch has finished when it returns.
#include "runtime/cpu/cpu_backend.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "codegen/generated.hpp"
#include "runtime/cpu/cpu_module.hpp"
#include "runtime/cpu/worker_pool.hpp"
#include "runtime/det/cpu_accumulation.hpp"
#include "runtime/det/cpu_slots.hpp"
#include "runtime/graph_capture.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cpu {

namespace {

template <class T>
void scan_host(const T* in, T* out, int64_t n, bool inclusive) {
    T running = T(0);
    for (int64_t i = 0; i < n; ++i) {
        const T v = in[i];
        if (!inclusive) out[i] = running;
        running += v;
        if (inclusive) out[i] = running;
    }
}

class CpuBackend final : public Backend {
public:
    void allocate(detail::Allocation& a) const override {
        // aligned_alloc wants a multiple of the alignment; past PTRDIFF_MAX nothing can be allocated.
        if (a.bytes > static_cast<size_t>(PTRDIFF_MAX) - 63)
            throw Error("cannot allocate " + std::to_string(a.bytes) +
                        " bytes: more than memory can address");
        const size_t rounded = (a.bytes + 63) / 64 * 64;
        a.ptr = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
        if (!a.ptr) throw Error("out of host memory allocating " + std::to_string(a.bytes) + " bytes");
    }
    void release(detail::Allocation& a) const noexcept override { std::free(a.ptr); }
    void zero(void* dst, size_t bytes) const override { std::memset(dst, 0, bytes); }
    void set_element(void* dst, uint64_t bits, size_t bytes) const override {
        std::memcpy(dst, &bits, bytes);  // (little-endian hosts)
    }
    void copy_from_host(void* dst, const void* src, size_t bytes) const override {
        std::memcpy(dst, src, bytes);
    }
    void copy_to_host(void* dst, const void* src, size_t bytes) const override {
        std::memcpy(dst, src, bytes);
    }
    void copy_within(void* dst, const void* src, size_t bytes) const override {
        std::memcpy(dst, src, bytes);
    }
    bool host_addressable() const override { return true; }

    codegen::Dialect dialect() const override { return codegen::Dialect::Cpu; }
    std::shared_ptr<DeviceModule> load_module(codegen::Generated generated, const plan::ProgramPlan& plan,
                                              const Options& options) const override {
        return CpuModule::load(std::move(generated), plan, options);
    }

    std::unique_ptr<det::Accumulation> accumulation(std::vector<det::TargetPlan> plans,
                                                    const det::LaunchSite& site) const override {
        return det::prepare_cpu(std::move(plans), site);
    }
    std::unique_ptr<det::SlotAllocation> slot_allocation(det::SlotPlan plan,
                                                         const det::LaunchSite& site) const override {
        return det::prepare_cpu_slots(std::move(plan), site);
    }
    void scan(DType dtype, const void* in, void* out, int64_t n, bool inclusive) const override {
        if (dtype == DType::Int32)
            scan_host(static_cast<const int32_t*>(in), static_cast<int32_t*>(out), n, inclusive);
        else
            scan_host(static_cast<const float*>(in), static_cast<float*>(out), n, inclusive);
    }

    bool finds_failures_at_launch() const override { return true; }
    bool has_serial_launches() const override { return true; }
    bool runs_serial(int64_t threads, const Options& options) const override {
        return chunk_count(threads, cpu_workers(options)) <= 1;
    }
    int launch_workers(const Options& options) const override { return cpu_workers(options); }
    void synchronize() const override {}
    std::shared_ptr<detail::StreamHandle> create_stream() const override { return nullptr; }
    std::shared_ptr<detail::StreamHandle> current_stream() const override { return nullptr; }
    std::shared_ptr<detail::EventHandle> create_event() const override {
        throw Error("events order and time GPU work; on the CPU every launch has finished when it returns");
    }
    DeviceInfo info() const override {
        return {"cpu", 0, 0, static_cast<int>(std::thread::hardware_concurrency()), 0};
    }
    // A CPU graph is the runtime's operations, recorded while a capture is open.
    bool capturing() const override { return active_capture(Device::cpu()) != nullptr; }
    std::unique_ptr<CaptureRecorder> begin_capture(Capture& capture) const override {
        return record_operations(capture);
    }
};

}  // namespace

const Backend& cpu_backend() {
    // Never destroyed, so that arrays held in static objects can still be freed during exit.
    static const auto* backend = new CpuBackend();
    return *backend;
}

}  // namespace weft::runtime::cpu
