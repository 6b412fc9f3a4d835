// What the runtime does on a device (memory, modules, library kernels, streams) as one interface
// with a CPU and a CUDA implementation; backend() is the one place that chooses between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "weft/device.hpp"
#include "weft/dtype.hpp"
#include "weft/options.hpp"

namespace weft::codegen {
enum class Dialect;
struct Generated;
}  // namespace weft::codegen

namespace weft::plan {
struct ProgramPlan;
}

namespace weft::detail {
struct Allocation;
struct StreamHandle;
struct EventHandle;
}  // namespace weft::detail

namespace weft::runtime {

class DeviceModule;
struct Capture;
class CaptureRecorder;

namespace det {
struct TargetPlan;
struct SlotPlan;
struct LaunchSite;
class Accumulation;
class SlotAllocation;
}  // namespace det

class Backend {
public:
    virtual ~Backend() = default;

    // Memory. allocate() sets a.ptr (and what release() needs) for a.bytes on a.device, or
    // throws weft::Error; release() never throws. GPU work is ordered on the current stream.
    virtual void allocate(detail::Allocation& a) const = 0;
    virtual void release(detail::Allocation& a) const noexcept = 0;
    virtual void zero(void* dst, size_t bytes) const = 0;
    // Sets the element of `bytes` (2, 4 or 8) bytes at `dst` to `bits` (little-endian), ordered
    // on the current stream: a GPU graph captures it, as it cannot capture a copy from the host.
    virtual void set_element(void* dst, uint64_t bits, size_t bytes) const = 0;
    // Copies into this device's memory from the host and out of it to the host (finished when
    // they return), and within it (ordered on the current stream).
    virtual void copy_from_host(void* dst, const void* src, size_t bytes) const = 0;
    virtual void copy_to_host(void* dst, const void* src, size_t bytes) const = 0;
    virtual void copy_within(void* dst, const void* src, size_t bytes) const = 0;
    // Whether the host can read and write this device's memory directly.
    virtual bool host_addressable() const = 0;

    // Code: the dialect kernels are generated in, and modules, whose launch() runs them.
    virtual codegen::Dialect dialect() const = 0;
    // Compiles `generated` (the code of the program `plan` describes), or loads it from the disk
    // cache.
    virtual std::shared_ptr<DeviceModule> load_module(codegen::Generated generated,
                                                      const plan::ProgramPlan& plan,
                                                      const Options& options) const = 0;

    // Library kernels: one launch's deterministic targets and slot allocation, and a prefix sum
    // of n contiguous int32 or float32 values.
    virtual std::unique_ptr<det::Accumulation> accumulation(std::vector<det::TargetPlan> plans,
                                                            const det::LaunchSite& site) const = 0;
    virtual std::unique_ptr<det::SlotAllocation> slot_allocation(det::SlotPlan plan,
                                                                 const det::LaunchSite& site) const = 0;
    virtual void scan(DType dtype, const void* in, void* out, int64_t n, bool inclusive) const = 0;

    // Streams. Whether a failure found while a launch runs (an overflow, a divergence) is known
    // when the launch returns; a GPU finds it at the stream's next synchronization.
    virtual bool finds_failures_at_launch() const = 0;
    // Serial launches (the CPU): a launch that runs as one chunk may update its atomics' targets
    // with plain loads and stores while it holds them exclusively (det::LaunchLocks).
    // Whether the backend has them, and whether a launch of `threads` threads would be one.
    virtual bool has_serial_launches() const = 0;
    virtual bool runs_serial(int64_t threads, const Options& options) const = 0;
    // The workers a launch of a module with `options` may run on (the CPU's; one elsewhere).
    virtual int launch_workers(const Options&) const { return 1; }
    // Waits for the current stream; throws the first failure found on the device.
    virtual void synchronize() const = 0;
    // A new stream, and the current one (null on the CPU, whose work is done when it returns).
    virtual std::shared_ptr<detail::StreamHandle> create_stream() const = 0;
    virtual std::shared_ptr<detail::StreamHandle> current_stream() const = 0;
    // An event (throws weft::Error on the CPU, where there is nothing to order or time).
    virtual std::shared_ptr<detail::EventHandle> create_event() const = 0;
    virtual DeviceInfo info() const = 0;

    // Graphs (runtime/graph_capture.hpp). Whether work queued now on the current stream is being
    // captured (by weft::ScopedCapture; on a GPU also by any CUDA stream capture).
    virtual bool capturing() const = 0;
    // Begins capturing the current stream's work into `capture` (weft::ScopedCapture), setting how
    // it records conditional bodies; the recorder ends it with the graph, which replays it.
    virtual std::unique_ptr<CaptureRecorder> begin_capture(Capture& capture) const = 0;
};

// The backend of `device`.
const Backend& backend(Device device);

}  // namespace weft::runtime
