// Allocations and zeroing, by the backend of the memory's device.
#include "runtime/memory.hpp"

#include "runtime/backend.hpp"
#include "runtime/graph_capture.hpp"

namespace weft::detail {

Allocation::~Allocation() {
    if (!external) {
        runtime::backend(device).release(*this);
        return;
    }
    if (!release) return;
    // A destructor cannot report: a failure of the wait or of the owner's release is dropped
    // here (a failed launch is still reported at the next synchronization).
    try {
        runtime::backend(device).synchronize();  // no queued kernel still uses the memory
        release();
    } catch (...) {
    }
}

std::shared_ptr<Allocation> allocate(Device device, size_t bytes) {
    const runtime::Backend& backend = runtime::backend(device);
    auto a = std::make_shared<Allocation>();
    a->bytes = bytes;
    a->device = device;
    backend.allocate(*a);
    // Memory made while a graph is captured may be used by its work: the graph keeps it.
    if (runtime::Capture* capture = runtime::active_capture(device)) capture->keep.push_back(a);
    return a;
}

void zero_bytes(void* dst, Device device, size_t bytes) {
    if (bytes == 0) return;
    runtime::backend(device).zero(dst, bytes);
}

}  // namespace weft::detail
