// The runtime side of deterministic accumulation: per-launch target state, and its resolve.
#pragma once

#include <memory>
#include <vector>

#include "ir/ir.hpp"
#include "weft/device_array.hpp"

namespace weft::runtime::det {

// The address range of an array argument (a view may have negative or zero strides).
struct Span {
    char* base;  // lowest element address
    int64_t count;  // element slots from base to the highest element address
};
Span span_of(const AnyArray& array);

// One launch's deterministic targets: created before the kernel runs (state allocated and
// initialised), resolved after it (results written into the target arrays). On a GPU both steps
// are queued on the current stream; nothing waits for the host.
class Accumulation {
public:
    virtual ~Accumulation() = default;
    // The wf::DetTarget* (a device address on a GPU) to put into target i's array descriptor.
    virtual void* state(size_t i) const = 0;
    // Applies the accumulated contributions to the target arrays.
    virtual void resolve() = 0;
};

std::unique_ptr<Accumulation> prepare(Device device, const std::vector<ir::DetTarget>& targets,
                                      const std::vector<const AnyArray*>& arrays);

}  // namespace weft::runtime::det
