// Allocation and copies: 64-byte aligned host memory; stream-ordered pooled GPU memory.
#include "runtime/memory.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "weft/error.hpp"

namespace weft::detail {

namespace cu = runtime::cuda;

namespace {

cu::CUdeviceptr dptr(const void* p) {
    return reinterpret_cast<cu::CUdeviceptr>(p);
}

}  // namespace

Allocation::~Allocation() {
    if (device.is_cpu()) {
        std::free(ptr);
    } else if (ptr && cu::bind_for_release(device.ordinal())) {
        cu::driver()->cuMemFreeAsync(dptr(ptr), stream->stream);
    }
}

std::shared_ptr<Allocation> allocate(Device device, size_t bytes) {
    auto a = std::make_shared<Allocation>();
    a->bytes = bytes;
    a->device = device;
    if (device.is_cpu()) {
        // aligned_alloc wants a multiple of the alignment; past PTRDIFF_MAX nothing can be allocated.
        if (bytes > static_cast<size_t>(PTRDIFF_MAX) - 63)
            throw Error("cannot allocate " + std::to_string(bytes) + " bytes: more than memory can address");
        const size_t rounded = (bytes + 63) / 64 * 64;
        a->ptr = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
        if (!a->ptr) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
        return a;
    }
    a->stream = cu::current_stream(device.ordinal());
    cu::CUdeviceptr p = 0;
    const cu::CUresult r =
        cu::require_driver().cuMemAllocAsync(&p, bytes == 0 ? 1 : bytes, a->stream->stream);
    if (r != cu::CUDA_SUCCESS)
        throw Error("cannot allocate " + std::to_string(bytes) + " bytes on " + device.name() +
                    " (CUDA error " + std::to_string(r) + "); free arrays you no longer need");
    a->ptr = reinterpret_cast<void*>(p);
    return a;
}

void copy_bytes(void* dst, Device to, const void* src, Device from, size_t bytes) {
    if (bytes == 0) return;
    if (to.is_cpu() && from.is_cpu()) {
        std::memcpy(dst, src, bytes);
        return;
    }
    if (to.is_cuda() && from.is_cuda() && to != from) {
        std::vector<char> staging(bytes);
        copy_bytes(staging.data(), Device::cpu(), src, from, bytes);
        copy_bytes(dst, to, staging.data(), Device::cpu(), bytes);
        return;
    }
    const Device gpu = to.is_cuda() ? to : from;
    const auto stream = cu::current_stream(gpu.ordinal());
    const cu::Driver& d = cu::require_driver();
    if (to.is_cuda() && from.is_cuda()) {
        cu::check(d.cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, stream->stream), "device-to-device copy");
        return;
    }
    if (to.is_cuda())
        cu::check(d.cuMemcpyHtoDAsync(dptr(dst), src, bytes, stream->stream), "host-to-device copy");
    else
        cu::check(d.cuMemcpyDtoHAsync(dst, dptr(src), bytes, stream->stream), "device-to-host copy");
    cu::synchronize(*stream);
}

void zero_bytes(void* dst, Device device, size_t bytes) {
    if (bytes == 0) return;
    if (device.is_cpu()) {
        std::memset(dst, 0, bytes);
        return;
    }
    const auto stream = cu::current_stream(device.ordinal());
    cu::check(cu::require_driver().cuMemsetD8Async(dptr(dst), 0, bytes, stream->stream), "memset");
}

}  // namespace weft::detail
