// AnyArray: allocation, shape, views and host copies.
#include "weft/device_array.hpp"

#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/graph_capture.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft {

namespace {

[[noreturn]] void located_error(const std::source_location& s, const std::string& message) {
    throw Error(message, "", s.file_name(), s.line());
}

// Shape's fields are public, so its ndim may be anything: only 1 to 4 are shapes.
bool valid_ndim(int ndim) {
    return ndim >= 1 && ndim <= 4;
}

std::string extents_text(const int64_t* dims, int ndim) {
    if (!valid_ndim(ndim)) return "of " + std::to_string(ndim) + " dimensions";
    std::string out = "[";
    for (int d = 0; d < ndim; ++d) out += (d ? ", " : "") + std::to_string(dims[d]);
    return out + "]";
}

std::string shape_text(const Shape& s) {
    return extents_text(s.dims, s.ndim);
}

// "float32", or "float32 x 3" for elements of three components.
std::string element_text(DType dtype, int components) {
    return components == 1 ? std::string(dtype_name(dtype))
                           : std::string(dtype_name(dtype)) + " x " + std::to_string(components);
}

// The product of the extents, or -1 past 2^63 - 1.
int64_t element_count(const int64_t* dims, int ndim) {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d)
        if (__builtin_mul_overflow(n, dims[d], &n)) return -1;
    return n;
}

void check_extents(const int64_t* dims, int ndim, const std::source_location& s) {
    if (!valid_ndim(ndim)) located_error(s, "arrays have 1 to 4 dimensions, got " + std::to_string(ndim));
    for (int d = 0; d < ndim; ++d)
        if (dims[d] < 0) located_error(s, "array extents must be >= 0, got " + std::to_string(dims[d]));
    if (element_count(dims, ndim) < 0)
        located_error(s, "an array of shape " + extents_text(dims, ndim) +
                             " would have more than 2^63 - 1 elements; use smaller extents");
}

}  // namespace

Shape::Shape(int64_t n, std::source_location s) : ndim(1), dims{n, 1, 1, 1} {
    check_extents(dims, ndim, s);
}

Shape::Shape(std::initializer_list<int64_t> extents, std::source_location s)
    : ndim(static_cast<int>(extents.size())) {
    if (ndim < 1 || ndim > 4) located_error(s, "arrays have 1 to 4 dimensions, got " + std::to_string(ndim));
    int d = 0;
    for (int64_t e : extents) dims[d++] = e;
    check_extents(dims, ndim, s);
}

int64_t Shape::size() const {
    if (!valid_ndim(ndim))
        throw Error("arrays have 1 to 4 dimensions, got a Shape of " + std::to_string(ndim));
    const int64_t n = element_count(dims, ndim);
    if (n < 0)
        throw Error("an array of shape " + extents_text(dims, ndim) +
                    " would have more than 2^63 - 1 elements");
    return n;
}

bool operator==(const Shape& a, const Shape& b) {
    if (a.ndim != b.ndim || !valid_ndim(a.ndim)) return false;
    for (int d = 0; d < a.ndim; ++d)
        if (a.dims[d] != b.dims[d]) return false;
    return true;
}

AnyArray::AnyArray(DType dtype, const Shape& shape, Device device, std::source_location s)
    : AnyArray(dtype, 1, shape, device, s) {}

AnyArray::AnyArray(DType scalar, int components, const Shape& shape, Device device, std::source_location s)
    : dtype_(scalar), components_(components), shape_(shape), device_(device) {
    if (components < 1)
        located_error(s, "an array's elements have at least 1 component, got " + std::to_string(components));
    check_extents(shape.dims, shape.ndim, s);
    int64_t bytes = 0;
    if (__builtin_mul_overflow(shape.size(), static_cast<int64_t>(element_bytes()), &bytes))
        located_error(s, "an array of shape " + shape_text(shape) + " of " +
                             element_text(scalar, components) +
                             " would need more than 2^63 - 1 bytes; use smaller extents");
    int64_t stride = static_cast<int64_t>(element_bytes());
    for (int d = shape.ndim - 1; d >= 0; --d) {
        strides_[d] = stride;
        stride *= shape.dims[d];
    }
    try {
        allocation_ = detail::allocate(device, static_cast<size_t>(bytes));
    } catch (const Error& e) {
        located_error(s, e.message());
    }
}

void* AnyArray::data() const {
    return allocation_ ? static_cast<char*>(allocation_->ptr) + offset_ : nullptr;
}

bool AnyArray::is_contiguous() const {
    int64_t expected = static_cast<int64_t>(element_bytes());
    for (int d = ndim() - 1; d >= 0; --d) {
        if (shape_.dims[d] != 1 && strides_[d] != expected) return false;
        expected *= shape_.dims[d];
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Views

namespace {

void check_dim(const AnyArray& a, int dim, const char* what, const std::source_location& s) {
    if (!a.valid()) located_error(s, std::string(what) + " of an empty (default-constructed) array");
    if (dim < 0 || dim >= a.ndim())
        located_error(s, std::string(what) + ": dimension " + std::to_string(dim) + " of a " +
                             std::to_string(a.ndim()) + "-D array; dimensions are numbered from 0");
}

}  // namespace

AnyArray AnyArray::slice(int dim, int64_t start, int64_t stop, int64_t step, std::source_location s) const {
    check_dim(*this, dim, "slice", s);
    if (step < 1)
        located_error(s, "slice: step " + std::to_string(step) +
                             "; the step must be at least 1 (views cannot reverse an array)");
    const int64_t n = shape_.dims[dim];
    // Python's rules for a positive step: count negative bounds from the end, then clamp to [0, n].
    auto bound = [n](int64_t i) {
        if (i < 0) i = i + n < 0 ? 0 : i + n;
        return i > n ? n : i;
    };
    start = bound(start);
    stop = bound(stop);
    AnyArray v = *this;
    v.shape_.dims[dim] = stop > start ? (stop - start - 1) / step + 1 : 0;
    v.offset_ += start * strides_[dim];
    v.strides_[dim] = strides_[dim] * step;
    return v;
}

AnyArray AnyArray::select(int dim, int64_t index, std::source_location s) const {
    check_dim(*this, dim, "select", s);
    if (ndim() == 1)
        located_error(s,
                      "indexing a 1-D array would give a single element, not an array; read elements with "
                      "to_vector(), or take a one-element view with slice(0, i, i + 1)");
    const int64_t n = shape_.dims[dim];
    if (index < -n || index >= n)
        located_error(s, "index " + std::to_string(index) + " is out of range for dimension " +
                             std::to_string(dim) + " of extent " + std::to_string(n) +
                             " (valid: " + std::to_string(-n) + " to " + std::to_string(n - 1) +
                             "; negative indices count from the end)");
    if (index < 0) index += n;
    AnyArray v = *this;
    v.offset_ += index * strides_[dim];
    for (int d = dim; d + 1 < 4; ++d) {
        v.shape_.dims[d] = shape_.dims[d + 1];
        v.strides_[d] = strides_[d + 1];
    }
    v.shape_.dims[3] = 1;
    v.strides_[3] = 0;
    v.shape_.ndim = ndim() - 1;
    return v;
}

AnyArray AnyArray::transpose() const {
    AnyArray v = *this;
    for (int d = 0; d < ndim(); ++d) {
        v.shape_.dims[d] = shape_.dims[ndim() - 1 - d];
        v.strides_[d] = strides_[ndim() - 1 - d];
    }
    return v;
}

AnyArray AnyArray::transpose(int d0, int d1, std::source_location s) const {
    check_dim(*this, d0, "transpose", s);
    check_dim(*this, d1, "transpose", s);
    AnyArray v = *this;
    std::swap(v.shape_.dims[d0], v.shape_.dims[d1]);
    std::swap(v.strides_[d0], v.strides_[d1]);
    return v;
}

AnyArray AnyArray::broadcast(const Shape& shape, std::source_location s) const {
    if (!valid()) located_error(s, "broadcast of an empty (default-constructed) array");
    check_extents(shape.dims, shape.ndim, s);
    const std::string what = "cannot broadcast a " + shape_text(shape_) + " array to " + shape_text(shape);
    if (shape.ndim < ndim())
        located_error(s,
                      what + ": broadcasting adds dimensions, it cannot remove them (select or slice first)");
    const int added = shape.ndim - ndim();
    AnyArray v = *this;
    v.shape_ = shape;
    for (int d = 0; d < 4; ++d) v.strides_[d] = 0;
    for (int d = 0; d < ndim(); ++d) {
        const int64_t from = shape_.dims[d];
        const int64_t to = shape.dims[added + d];
        if (from != to && from != 1)
            located_error(s, what + ": dimension " + std::to_string(d) + " has extent " +
                                 std::to_string(from) + ", which must be 1 or " + std::to_string(to));
        v.strides_[added + d] = from == to ? strides_[d] : 0;
    }
    return v;
}

AnyArray AnyArray::component(int i, std::source_location s) const {
    if (!valid()) located_error(s, "component of an empty (default-constructed) array");
    if (i < 0 || i >= components_)
        located_error(s, "component " + std::to_string(i) + " of an array whose elements have " +
                             std::to_string(components_) + " component" + (components_ == 1 ? "" : "s") +
                             " (valid: 0 to " + std::to_string(components_ - 1) + ")");
    AnyArray v = *this;
    v.components_ = 1;
    v.offset_ += static_cast<int64_t>(i) * static_cast<int64_t>(dtype_size(dtype_));
    return v;
}

void detail::bad_matrix_entry(int r, int c, int rows, int columns, const std::source_location& s) {
    located_error(s, "entry (" + std::to_string(r) + ", " + std::to_string(c) + ") of an array of " +
                         std::to_string(rows) + "x" + std::to_string(columns) +
                         " matrices (valid: rows 0 to " + std::to_string(rows - 1) + ", columns 0 to " +
                         std::to_string(columns - 1) + ")");
}

uint64_t detail::version(const AnyArray& a) {
    return a.allocation_ ? a.allocation_->version.load(std::memory_order_relaxed) : 0;
}

void detail::bump_version(const AnyArray& a) {
    if (a.allocation_) a.allocation_->version.fetch_add(1, std::memory_order_relaxed);
}

bool detail::shared_elsewhere(const AnyArray& a) {
    return a.allocation_ && a.allocation_.use_count() > 1;
}

void detail::retire(const AnyArray& a, const char* why) {
    if (a.allocation_) a.allocation_->retired.store(why, std::memory_order_relaxed);
}

const char* detail::retired(const AnyArray& a) {
    return a.allocation_ ? a.allocation_->retired.load(std::memory_order_relaxed) : nullptr;
}

AnyArray detail::without_broadcast(const AnyArray& a) {
    AnyArray v = a;
    for (int d = 0; d < v.ndim(); ++d)
        if (v.strides_[d] == 0 && v.shape_.dims[d] > 1) v.shape_.dims[d] = 1;
    return v;
}

// ---------------------------------------------------------------------------------------------
// Host copies of views that are not contiguous

std::pair<int64_t, int64_t> runtime::byte_span(const AnyArray& a) {
    int64_t lo = 0;
    int64_t hi = static_cast<int64_t>(a.element_bytes());
    for (int d = 0; d < a.ndim(); ++d) {
        const int64_t reach = (a.shape()[d] - 1) * a.stride(d);
        (reach < 0 ? lo : hi) += reach;
    }
    return {lo, hi};
}

namespace {

// Calls f(k, offset) for element k (row-major order) at byte `offset` from data().
template <class F>
void for_each_element(const AnyArray& a, F f) {
    int64_t index[4] = {0, 0, 0, 0};
    int64_t offset = 0;
    const int64_t n = a.size();
    for (int64_t k = 0; k < n; ++k) {
        f(k, offset);
        for (int d = a.ndim() - 1; d >= 0; --d) {
            offset += a.stride(d);
            if (++index[d] < a.shape()[d]) break;
            offset -= index[d] * a.stride(d);
            index[d] = 0;
        }
    }
}

// Moves elements between a dense host buffer and a strided view. A GPU view goes through a host
// copy of the bytes it spans: read, gathered from or scattered into, and (for a scatter) written
// back whole. That is one round trip instead of one copy per element (correctness over speed);
// the bytes between the view's elements are written back with the values just read, so the write
// races with GPU work on other streams that touches those bytes.
void strided_copy(const AnyArray& a, char* dense, bool to_host) {
    if (a.size() == 0) return;
    const size_t elem = a.element_bytes();
    char* base = static_cast<char*>(a.data());
    std::vector<char> staging;
    const auto [lo, hi] = runtime::byte_span(a);
    const bool staged = !runtime::backend(a.device()).host_addressable();
    if (staged) {
        staging.resize(static_cast<size_t>(hi - lo));
        detail::copy_bytes(staging.data(), Device::cpu(), base + lo, a.device(), staging.size());
        base = staging.data() - lo;
    }
    for_each_element(a, [&](int64_t k, int64_t offset) {
        if (to_host)
            std::memcpy(dense + k * elem, base + offset, elem);
        else
            std::memcpy(base + offset, dense + k * elem, elem);
    });
    if (staged && !to_host)
        detail::copy_bytes(static_cast<char*>(a.data()) + lo, a.device(), staging.data(), Device::cpu(),
                           staging.size());
}

}  // namespace

bool may_share_memory(const AnyArray& a, const AnyArray& b) {
    if (!a.valid() || a.allocation_ != b.allocation_ || a.size() == 0 || b.size() == 0) return false;
    const auto [alo, ahi] = runtime::byte_span(a);
    const auto [blo, bhi] = runtime::byte_span(b);
    return a.offset_ + alo < b.offset_ + bhi && b.offset_ + blo < a.offset_ + ahi;
}

AnyArray& AnyArray::requires_grad_(std::source_location s) {
    if (!valid()) located_error(s, "requires_grad_() of an empty (default-constructed) array");
    if (!is_float(dtype_))
        located_error(s, std::string("requires_grad_() of an array of ") + dtype_name(dtype_) +
                             ": only float arrays have gradients; keep integer data without one");
    if (!allocation_->grad) {
        std::shared_ptr<detail::Allocation> grad;
        try {
            grad = detail::allocate(device_, allocation_->bytes);
        } catch (const Error& e) {
            located_error(s, e.message());
        }
        detail::zero_bytes(grad->ptr, device_, grad->bytes);
        allocation_->grad = std::move(grad);
    }
    return *this;
}

bool AnyArray::requires_grad() const {
    return valid() && allocation_->grad != nullptr;
}

AnyArray AnyArray::grad(std::source_location s) const {
    if (!requires_grad())
        located_error(s,
                      "grad() of an array that has no gradient; create it with weft::requires_grad "
                      "(or call requires_grad_() on it, or on the array it is a view of) first");
    AnyArray g = *this;
    g.allocation_ = allocation_->grad;
    return g;
}

void AnyArray::zero_() {
    if (!valid()) return;
    detail::bump_version(*this);
    if (runtime::Capture* capture = runtime::recording_capture(device_)) {  // recorded, run at replay
        capture->bodies.back().push_back([array = *this]() mutable { array.zero_(); });
        return;
    }
    AnyArray reached = detail::without_broadcast(*this);  // each element once
    const size_t bytes = static_cast<size_t>(reached.size()) * element_bytes();
    if (reached.is_contiguous()) {
        detail::zero_bytes(reached.data(), device_, bytes);
    } else {
        std::vector<char> zeros(bytes, 0);
        strided_copy(reached, zeros.data(), false);
    }
}

namespace {
void check_bytes(const AnyArray& a, size_t bytes, const char* what) {
    const size_t expected = static_cast<size_t>(a.size()) * a.element_bytes();
    if (bytes != expected)
        throw Error(std::string(what) + ": " + std::to_string(bytes) + " bytes for an array of " +
                    std::to_string(a.size()) + " " + element_text(a.dtype(), a.components()) + " elements (" +
                    std::to_string(expected) + " bytes)");
}
}  // namespace

void detail::check_element(const AnyArray& a, DType dtype, int components, const std::source_location& s) {
    if (!a.valid()) located_error(s, "an empty (default-constructed) array has no element type");
    if (a.dtype() != dtype || a.components() != components)
        located_error(s, "the array's elements are " + element_text(a.dtype(), a.components()) + ", not " +
                             element_text(dtype, components) + "; use a DeviceArray of its element type");
}

AnyArray AnyArray::wrap(void* data, DType scalar, int components, const Shape& shape, Device device,
                        std::vector<int64_t> byte_strides, std::function<void()> release,
                        std::source_location s) {
    if (components < 1)
        located_error(s, "an array's elements have at least 1 component, got " + std::to_string(components));
    check_extents(shape.dims, shape.ndim, s);
    try {
        // A device that cannot be used is an error here, not at first use (without the caller's
        // line) or never (a release that never runs).
        if (!device.is_cpu()) (void)weft::device(device.name());
        runtime::backend(device);
    } catch (const Error& e) {
        located_error(s, "wrap: " + e.message());
    }
    AnyArray a;
    a.dtype_ = scalar;
    a.components_ = components;
    a.shape_ = shape;
    a.device_ = device;
    const int64_t scalar_bytes = static_cast<int64_t>(dtype_size(scalar));
    if (byte_strides.empty()) {
        int64_t stride = static_cast<int64_t>(a.element_bytes());
        for (int d = shape.ndim - 1; d >= 0; --d) {
            a.strides_[d] = stride;
            if (d > 0 && __builtin_mul_overflow(stride, shape.dims[d], &stride))
                located_error(s, "wrap: the array spans more than 2^63 - 1 bytes");
        }
    } else {
        if (static_cast<int>(byte_strides.size()) != shape.ndim)
            located_error(s, "wrap: " + std::to_string(byte_strides.size()) + " strides for an array of " +
                                 std::to_string(shape.ndim) + " dimensions; give one per dimension, or none");
        for (int d = 0; d < shape.ndim; ++d) {
            const int64_t stride = byte_strides[static_cast<size_t>(d)];
            if (stride < 0 || stride % scalar_bytes != 0)
                located_error(s, "wrap: the stride of dimension " + std::to_string(d) + " is " +
                                     std::to_string(stride) + " bytes; strides are >= 0 and multiples of " +
                                     std::to_string(scalar_bytes) + " (the size of " + dtype_name(scalar) +
                                     "); copy other layouts into a Weft array instead");
            a.strides_[d] = stride;
        }
    }
    // The bytes the elements span, from element 0.
    int64_t span = 0;
    if (shape.size() > 0) {
        span = static_cast<int64_t>(a.element_bytes());
        for (int d = 0; d < shape.ndim; ++d) {
            int64_t reach = 0;  // (a product that overflowed would wrap to a small span: checked)
            if (__builtin_mul_overflow(shape.dims[d] - 1, a.strides_[d], &reach) ||
                __builtin_add_overflow(span, reach, &span))
                located_error(s, "wrap: the array spans more than 2^63 - 1 bytes (dimension " +
                                     std::to_string(d) + ": " + std::to_string(shape.dims[d]) + " elements " +
                                     std::to_string(a.strides_[d]) + " bytes apart)");
        }
        if (data == nullptr) located_error(s, "wrap: the data pointer is null but the array has elements");
        uintptr_t end = 0;
        if (__builtin_add_overflow(reinterpret_cast<uintptr_t>(data), static_cast<uintptr_t>(span), &end))
            located_error(s, "wrap: the array's " + std::to_string(span) +
                                 " bytes from the data pointer run past the end of the address space");
    }
    if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(scalar_bytes) != 0)
        located_error(s, std::string("wrap: the data pointer is not aligned to the size of ") +
                             dtype_name(scalar) + " (" + std::to_string(scalar_bytes) + " bytes)");
    auto allocation = std::make_shared<detail::Allocation>();
    allocation->ptr = data;
    allocation->bytes = static_cast<size_t>(span);
    allocation->device = device;
    allocation->external = true;
    allocation->release = std::move(release);
    a.allocation_ = std::move(allocation);
    return a;
}

void detail::check_host_count(const AnyArray& a, size_t count, const char* what,
                              const std::source_location& s) {
    if (count != static_cast<size_t>(a.size()))
        located_error(s, std::string(what) + ": " + std::to_string(count) + " elements for an array of " +
                             std::to_string(a.size()) +
                             " elements; the count is in elements (as from_vector and to_vector count), "
                             "not bytes, and covers the whole array");
}

void detail::check_host_copy(const AnyArray& a, const char* what, const std::source_location& s) {
    runtime::refuse_in_capture(a.device(), what, &s);
}

size_t detail::host_capacity(size_t bytes) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return SIZE_MAX / bytes;
    return static_cast<size_t>(pages) / bytes * static_cast<size_t>(page);
}

void detail::no_host_memory(const AnyArray& a, const char* what, const std::source_location& s) {
    located_error(s, std::string(what) + ": host memory cannot hold the array's " + std::to_string(a.size()) +
                         " elements of " + std::to_string(a.element_bytes()) +
                         " bytes; copy a smaller view (slice, select) at a time");
}

void AnyArray::copy_from_host(const void* src, size_t bytes) {
    check_bytes(*this, bytes, "copy to array");
    runtime::refuse_in_capture(device_,
                               "a copy from the host into an array (copy_from_host, from_vector, full)");
    detail::bump_version(*this);
    if (is_contiguous())
        detail::copy_bytes(data(), device_, src, Device::cpu(), bytes);
    else
        // (Only read: the scatter copies from the dense buffer.)
        strided_copy(*this, static_cast<char*>(const_cast<void*>(src)), false);
}

void AnyArray::copy_to_host(void* dst, size_t bytes) const {
    check_bytes(*this, bytes, "copy from array");
    runtime::refuse_in_capture(device_, "a copy from an array to the host (copy_to_host, to_vector)");
    if (is_contiguous())
        detail::copy_bytes(dst, Device::cpu(), data(), device_, bytes);
    else
        strided_copy(*this, static_cast<char*>(dst), true);
}

}  // namespace weft

namespace weft {

AnyArray AnyArray::to(Device device) const {
    AnyArray out(dtype_, components_, shape_, device);
    copy(out, *this);
    return out;
}

void copy(const AnyArray& dst, const AnyArray& src, std::source_location s) {
    if (dst.dtype() != src.dtype() || dst.components() != src.components() || !(dst.shape() == src.shape()))
        located_error(s, "copy: the arrays differ in type or shape (" +
                             element_text(dst.dtype(), dst.components()) + " " + shape_text(dst.shape()) +
                             " vs " + element_text(src.dtype(), src.components()) + " " +
                             shape_text(src.shape()) + "); copy between arrays of one type and shape");
    const size_t bytes = static_cast<size_t>(src.size()) * src.element_bytes();
    detail::bump_version(dst);
    // A capture that records operations (the CPU's) records the copy; a GPU capture records the
    // copy its stream queues.
    runtime::Capture* capture = runtime::recording_capture(dst.device());
    if (!capture) capture = runtime::recording_capture(src.device());
    if (capture) {
        if (src.device() != capture->device || dst.device() != capture->device)
            located_error(s, "copy: a CPU graph capture cannot record a copy between " + src.device().name() +
                                 " and " + dst.device().name() + "; copy before the capture begins");
        capture->bodies.back().push_back([dst, src, s] { copy(dst, src, s); });
        return;
    }
    const bool direct = dst.is_contiguous() && src.is_contiguous() && !may_share_memory(dst, src);
    if (!direct)
        for (const Device d : {src.device(), dst.device()})
            if (runtime::capturing(d))
                located_error(s,
                              "copy: a copy between arrays that are not contiguous or that overlap goes "
                              "through the host, so it cannot be part of a graph (work on " +
                                  d.name() +
                                  " is being captured); copy between contiguous arrays, or "
                                  "copy before the capture begins");
    if (direct) {
        detail::copy_bytes(dst.data(), dst.device(), src.data(), src.device(), bytes);
        return;
    }
    // Strided or overlapping: through the host, reading `src` whole first.
    std::vector<char> host(bytes);
    src.copy_to_host(host.data(), bytes);
    AnyArray target = dst;  // a handle to the same memory (dst is const only as a handle)
    target.copy_from_host(host.data(), bytes);
}

}  // namespace weft
