// Allocation on the CPU: 64-byte aligned, so every element type and vector load is aligned.
#include "runtime/memory.hpp"

#include <cstdlib>
#include <new>

#include "weft/error.hpp"

namespace weft::detail {

Allocation::~Allocation() { std::free(ptr); }

std::shared_ptr<Allocation> allocate(Device device, size_t bytes) {
    if (!device.is_cpu()) throw Error("cannot allocate on " + device.name() + ": this build has no CUDA support");
    auto a = std::make_shared<Allocation>();
    a->bytes = bytes;
    a->device = device;
    const size_t rounded = (bytes + 63) / 64 * 64;
    a->ptr = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!a->ptr) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
    return a;
}

}  // namespace weft::detail
