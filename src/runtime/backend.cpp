// The choice of backend for a device, and copies between the memory of any two devices.
#include "runtime/backend.hpp"

#include <vector>

#include "runtime/cpu/cpu_backend.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/memory.hpp"

namespace weft::runtime {

const Backend& backend(Device device) {
    return device.is_cpu() ? cpu::cpu_backend() : cuda::cuda_backend(device.ordinal());
}

}  // namespace weft::runtime

namespace weft::detail {

void copy_bytes(void* dst, Device to, const void* src, Device from, size_t bytes) {
    if (bytes == 0) return;
    const runtime::Backend& into = runtime::backend(to);
    const runtime::Backend& out_of = runtime::backend(from);
    if (to == from) return into.copy_within(dst, src, bytes);
    if (out_of.host_addressable()) return into.copy_from_host(dst, src, bytes);
    if (into.host_addressable()) return out_of.copy_to_host(dst, src, bytes);
    // Between two GPUs: through the host.
    std::vector<char> staging(bytes);
    out_of.copy_to_host(staging.data(), src, bytes);
    into.copy_from_host(dst, staging.data(), bytes);
}

}  // namespace weft::detail
