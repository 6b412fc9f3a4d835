// Device memory: allocations shared by arrays, and byte copies between any two devices (the
// copies are in runtime/backend.cpp, beside the choice of backend).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "weft/device.hpp"

namespace weft::runtime::cuda {
struct StreamState;
}

namespace weft::detail {

struct Allocation {
    void* ptr = nullptr;  // a device address for GPU memory
    size_t bytes = 0;
    Device device = Device::cpu();
    // GPU memory is freed in order on the stream it was allocated on (set by its backend).
    std::shared_ptr<runtime::cuda::StreamState> stream;
    // GPU memory allocated while its stream was being captured into a graph: outside stream
    // order, so that it exists for every replay (the graph holds it), and freed the same way.
    bool captured = false;
    // The gradient of this memory (autodiff): an allocation of the same size, made by
    // AnyArray::requires_grad_(); every view of this memory reads its gradient at the same bytes.
    std::shared_ptr<Allocation> grad;
    // Memory Weft did not allocate (AnyArray::wrap): never released by a backend; `release`, if
    // set, runs when the last array of it is gone, after the device finished the work queued on it.
    bool external = false;
    std::function<void()> release;
    // Bumped by every write Weft makes to this memory (a launch that may write it, a host copy or
    // fill, through any view of it): the tape compares it to refuse a backward pass whose inputs
    // changed after the launch that read them (detail::version).
    std::atomic<uint64_t> version{0};
    // Set when its owner replaced this memory and arrays of it must not be launched with again
    // (detail::retire): what happened and what to do, for the refusal.
    std::atomic<const char*> retired{nullptr};
    ~Allocation();
};

std::shared_ptr<Allocation> allocate(Device device, size_t bytes);

// Copies `bytes` from `src` on `from` to `dst` on `to`. Copies that involve the host have
// finished when this returns; device-to-device copies are ordered on the current stream.
void copy_bytes(void* dst, Device to, const void* src, Device from, size_t bytes);
// Sets `bytes` at `dst` to zero, in order on the current stream for GPU memory.
void zero_bytes(void* dst, Device device, size_t bytes);

}  // namespace weft::detail

namespace weft {
class AnyArray;
}

namespace weft::runtime {
// The bytes a non-empty array's elements occupy: [data() + lo, data() + hi).
std::pair<int64_t, int64_t> byte_span(const AnyArray& a);
}  // namespace weft::runtime
