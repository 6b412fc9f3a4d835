// AnyArray: allocation, shape and host copies.
#include "runtime/memory.hpp"
#include "weft/device_array.hpp"
#include "weft/error.hpp"

namespace weft {

Shape::Shape(int64_t n) : ndim(1), dims{n, 1, 1, 1} {
    if (n < 0) throw Error("array extents must be >= 0, got " + std::to_string(n));
}

Shape::Shape(std::initializer_list<int64_t> extents) : ndim(static_cast<int>(extents.size())) {
    if (ndim < 1 || ndim > 4) throw Error("arrays have 1 to 4 dimensions, got " + std::to_string(ndim));
    int d = 0;
    for (int64_t e : extents) {
        if (e < 0) throw Error("array extents must be >= 0, got " + std::to_string(e));
        dims[d++] = e;
    }
}

int64_t Shape::size() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= dims[d];
    return n;
}

bool operator==(const Shape& a, const Shape& b) {
    if (a.ndim != b.ndim) return false;
    for (int d = 0; d < a.ndim; ++d)
        if (a.dims[d] != b.dims[d]) return false;
    return true;
}

AnyArray::AnyArray(DType dtype, const Shape& shape, Device device)
    : dtype_(dtype), shape_(shape), device_(device) {
    if (dtype == DType::Float16) throw Error("float16 arrays are not supported yet");
    int64_t stride = static_cast<int64_t>(dtype_size(dtype));
    for (int d = shape.ndim - 1; d >= 0; --d) {
        strides_[d] = stride;
        stride *= shape.dims[d];
    }
    allocation_ = detail::allocate(device, static_cast<size_t>(shape.size()) * dtype_size(dtype));
}

void* AnyArray::data() const { return allocation_ ? allocation_->ptr : nullptr; }

void AnyArray::zero_() {
    if (valid()) detail::zero_bytes(data(), device_, static_cast<size_t>(size()) * dtype_size(dtype_));
}

namespace {
void check_bytes(const AnyArray& a, size_t bytes, const char* what) {
    const size_t expected = static_cast<size_t>(a.size()) * dtype_size(a.dtype());
    if (bytes != expected)
        throw Error(std::string(what) + ": " + std::to_string(bytes) + " bytes for an array of " +
                    std::to_string(a.size()) + " " + dtype_name(a.dtype()) + " elements (" + std::to_string(expected) +
                    " bytes)");
}
}  // namespace

void AnyArray::copy_from_host(const void* src, size_t bytes) {
    check_bytes(*this, bytes, "copy to array");
    detail::copy_bytes(data(), device_, src, Device::cpu(), bytes);
}

void AnyArray::copy_to_host(void* dst, size_t bytes) const {
    check_bytes(*this, bytes, "copy from array");
    detail::copy_bytes(dst, Device::cpu(), data(), device_, bytes);
}

}  // namespace weft

namespace weft {

AnyArray AnyArray::to(Device device) const {
    AnyArray out(dtype_, shape_, device);
    copy(out, *this);
    return out;
}

void copy(const AnyArray& dst, const AnyArray& src) {
    if (dst.dtype() != src.dtype() || !(dst.shape() == src.shape()))
        throw Error(std::string("copy: the arrays differ in type or shape (") + dtype_name(dst.dtype()) + " vs " +
                    dtype_name(src.dtype()) + ", " + std::to_string(dst.size()) + " vs " + std::to_string(src.size()) +
                    " elements)");
    detail::copy_bytes(dst.data(), dst.device(), src.data(), src.device(),
                       static_cast<size_t>(src.size()) * dtype_size(src.dtype()));
}

}  // namespace weft
