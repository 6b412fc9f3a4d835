// Arrays in a device's memory: creation, filling, and copies to and from the host.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <source_location>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "weft/device.hpp"
#include "weft/dtype.hpp"
#include "weft/layout.hpp"

namespace weft {

/// The extents of an array of 1 to 4 dimensions, holding at most 2^63 - 1 elements.
struct Shape {
    /// The number of dimensions, 1 to 4.
    int ndim = 1;
    /// The extents, outermost first; those past ndim are 1.
    int64_t dims[4] = {0, 1, 1, 1};

    /// A 1-D shape of n elements: weft::Error, naming the caller's line, for n < 0.
    // NOLINTNEXTLINE(google-explicit-constructor): `zeros<float>(16)` reads well
    Shape(int64_t n, std::source_location s = std::source_location::current());
    /// A shape of 1 to 4 extents, outermost first (`{rows, columns}`): weft::Error, naming the caller's
    /// line, for another count, a negative extent or more than 2^63 - 1 elements.
    Shape(std::initializer_list<int64_t> extents, std::source_location s = std::source_location::current());
    /// The number of elements (weft::Error if `dims` were changed to a product past 2^63 - 1).
    int64_t size() const;
    /// The extent of dimension d (0 <= d < 4, not checked).
    int64_t operator[](int d) const { return dims[d]; }
    /// Whether a and b have the same dimensions and extents.
    friend bool operator==(const Shape& a, const Shape& b);
};

class AnyArray;

namespace detail {
struct Allocation;
/// `a` with each broadcast dimension (stride 0) cut to extent 1: the same elements, each once.
AnyArray without_broadcast(const AnyArray& a);
/// How many times Weft has written the memory behind `a` (every view of an allocation counts
/// the same writes): launches that may write it and host copies and fills. The tape compares it
/// to refuse a backward pass whose inputs changed since the launch that read them.
uint64_t version(const AnyArray& a);
/// Counts a write of the memory behind `a`.
void bump_version(const AnyArray& a);
/// Whether another array (a view, a copy of the handle, a graph) shares the memory behind `a`.
bool shared_elsewhere(const AnyArray& a);
/// Marks the memory behind `a` as replaced by its owner: a launch with an array of it is refused
/// with `why` (a static string: what replaced it and what to do instead).
void retire(const AnyArray& a, const char* why);
/// `why` of retire() for the memory behind `a`, or null.
const char* retired(const AnyArray& a);
}  // namespace detail

/// As a slice's `stop`: through the end of the dimension (Python's `a[start::step]`).
inline constexpr int64_t to_end = INT64_MAX;

/// An index into a host-side array, for a[i]: any integer, with the caller's source line for
/// errors. Negative values count from the end, as in Python.
struct ViewIndex {
    /// The index as written (negative counts from the end).
    int64_t value;
    /// The line of the a[i], for errors.
    std::source_location where;

    /// From any integer but bool, implicitly: a[i] takes an int, an int64_t or a size_t alike.
    template <class U>
    requires(std::is_integral_v<U> && !std::is_same_v<U, bool>)
        ViewIndex(U i, std::source_location s = std::source_location::current())  // NOLINT: a[i] reads well
        : value(static_cast<int64_t>(i)), where(s) {}
};

/// An array whose element type is known at run time: each element is components() scalars of
/// dtype() packed with no padding (weft/layout.hpp; one for a scalar array, three for a vec3).
/// Strides are in bytes, per element (a contiguous 1-D array of vec3 has stride 12).
///
/// Views (slice, select / a[i], transpose, broadcast) are arrays that share this array's memory:
/// writes through a view change it, and it stays alive while a view does. A view has its own
/// shape, byte strides (0 along a broadcast dimension) and byte offset; views of views compose,
/// and every operation below, launches included, works on any view. Errors name the caller's line.
class AnyArray {
public:
    /// An invalid array (valid() is false), holding nothing.
    AnyArray() = default;
    /// Throws weft::Error, naming the caller's line, when the array's bytes exceed what memory can
    /// address or cannot be allocated.
    AnyArray(DType dtype, const Shape& shape, Device device,
             std::source_location s = std::source_location::current());
    /// An array whose elements are `components` scalars of `scalar` each (at least 1).
    AnyArray(DType scalar, int components, const Shape& shape, Device device,
             std::source_location s = std::source_location::current());

    /// An array over memory Weft did not allocate (another library's buffer, a pointer from the
    /// CUDA driver), without a copy. `data` is element 0 on `device` (a host pointer for the CPU,
    /// a device address for a GPU); `byte_strides` gives each dimension's stride in bytes, each >= 0
    /// and a multiple of the scalar's size (empty: dense row-major). Lifetime: with `release`, the
    /// memory is the arrays' and `release` runs once, after the device finished the work queued on
    /// it, when the last array or view of it is gone (it must not throw); without, it stays the
    /// caller's, who keeps it alive while any array uses it. Views, launches, copies and gradients
    /// work as on Weft's own arrays (a gradient is memory Weft allocates); may_share_memory sees
    /// only views of one wrap. weft::Error, naming the caller's line, for a null `data` with
    /// elements, a misaligned pointer or stride, or a negative stride.
    static AnyArray wrap(void* data, DType scalar, int components, const Shape& shape, Device device,
                         std::vector<int64_t> byte_strides = {}, std::function<void()> release = {},
                         std::source_location s = std::source_location::current());

    /// Whether this array holds memory (false for a default-constructed one).
    bool valid() const { return allocation_ != nullptr; }
    /// The scalar type of the elements' components.
    DType dtype() const { return dtype_; }
    /// Scalars per element (1 for a scalar array).
    int components() const { return components_; }
    /// The bytes of one element: dtype_size(dtype()) * components().
    size_t element_bytes() const { return dtype_size(dtype_) * static_cast<size_t>(components_); }
    /// The number of dimensions, 1 to 4.
    int ndim() const { return shape_.ndim; }
    /// The extents.
    const Shape& shape() const { return shape_; }
    /// The number of elements (not scalars: an array of n vec3 has size n).
    int64_t size() const { return shape_.size(); }
    /// The byte stride of dimension d (0 along a broadcast dimension; d is not checked).
    int64_t stride(int d) const { return strides_[d]; }
    /// The device whose memory holds the elements.
    Device device() const { return device_; }
    /// The address of element 0 in the device's memory (the allocation's start plus offset()).
    void* data() const;
    /// The byte offset of element 0 from the start of the allocation (0 unless a view).
    int64_t offset() const { return offset_; }
    /// Whether the elements lie densely in row-major order from data() (strides of extent-1
    /// dimensions do not matter).
    bool is_contiguous() const;

    /// Elements start, start + step, ... before stop along `dim`, with Python's rules: negative
    /// start and stop count from the end, both are clamped to the extent, step must be >= 1.
    AnyArray slice(int dim, int64_t start, int64_t stop, int64_t step = 1,
                   std::source_location s = std::source_location::current()) const;
    /// The (ndim - 1)-D view with dimension `dim` fixed at `index` (negative counts from the end).
    AnyArray select(int dim, int64_t index, std::source_location s = std::source_location::current()) const;
    /// select(0, i): a row of a 2-D array, a plane of a 3-D one.
    AnyArray operator[](ViewIndex i) const { return select(0, i.value, i.where); }
    /// The dimensions in reverse order (the matrix transpose for 2-D arrays).
    AnyArray transpose() const;
    /// Dimensions d0 and d1 swapped.
    AnyArray transpose(int d0, int d1, std::source_location s = std::source_location::current()) const;
    /// The array repeated to `shape` without copying (NumPy's rules): trailing dimensions line up;
    /// each must equal the target extent or be 1 (its stride becomes 0), and missing leading
    /// dimensions are added with stride 0. Writes through such a view all land on the one element.
    AnyArray broadcast(const Shape& shape, std::source_location s = std::source_location::current()) const;
    /// Component i of every element: a scalar array (one component) of the same shape and strides,
    /// offset by i scalars, sharing this array's memory (and gradient). weft::Error, naming the
    /// caller's line, unless 0 <= i < components().
    AnyArray component(int i, std::source_location s = std::source_location::current()) const;

    /// Gradients (docs/autodiff.md). requires_grad_() gives a float array's memory a gradient: an
    /// array of the same shape and components, zeroed (kept if it has one already). Views share their base's
    /// gradient: grad() of a view is the same view (shape, strides, offset) of the base's gradient,
    /// so a gradient written through a view lands where the view's elements are. weft::Error, naming
    /// the caller's line, for an array that is not of a float type, or grad() of one with none.
    AnyArray& requires_grad_(std::source_location s = std::source_location::current());
    /// Whether the array's memory has a gradient (requires_grad_ was called on it or on a view of it).
    bool requires_grad() const;
    /// The gradient, as the same view of the gradient memory: weft::Error, naming the caller's line, if none.
    AnyArray grad(std::source_location s = std::source_location::current()) const;

    /// Sets every element to zero (in order on the current stream, for contiguous GPU arrays).
    void zero_();
    /// A copy of this array on `device` (a new, contiguous array).
    AnyArray to(Device device) const;
    /// Copies `bytes` of host data (size() elements of element_bytes() each, densely packed in
    /// row-major order) in, or out: bytes, because an AnyArray's element type is known only at run
    /// time (a DeviceArray<E>'s copies count elements). A view that is not contiguous is gathered
    /// / scattered element by element.
    void copy_from_host(const void* src, size_t bytes);
    /// The copy out, into `dst`; for either, weft::Error unless `bytes` is size() * element_bytes().
    void copy_to_host(void* dst, size_t bytes) const;

protected:
    /// The memory (and its gradient) that every view of it shares; null unless valid().
    std::shared_ptr<detail::Allocation> allocation_;
    /// As dtype().
    DType dtype_ = DType::Float32;
    /// As components().
    int components_ = 1;
    /// As shape().
    Shape shape_{0};
    /// As stride(d): bytes per step along each dimension.
    int64_t strides_[4] = {0, 0, 0, 0};
    /// As device().
    Device device_ = Device::cpu();
    /// Bytes from the allocation's start to element 0, as offset().
    int64_t offset_ = 0;

private:
    friend bool may_share_memory(const AnyArray& a, const AnyArray& b);
    friend AnyArray detail::without_broadcast(const AnyArray& a);
    friend uint64_t detail::version(const AnyArray& a);
    friend void detail::bump_version(const AnyArray& a);
    friend bool detail::shared_elsewhere(const AnyArray& a);
    friend void detail::retire(const AnyArray& a, const char* why);
    friend const char* detail::retired(const AnyArray& a);
};

/// Whether some element of `a` and some element of `b` may be the same memory (the arrays share
/// an allocation and the byte ranges their elements span overlap).
bool may_share_memory(const AnyArray& a, const AnyArray& b);

/// Copies `src` into `dst` (same scalar type, components and shape; any two devices; any views, overlapping
/// ones too: the result is as if `src` were read whole before `dst` is written).
void copy(const AnyArray& dst, const AnyArray& src, std::source_location s = std::source_location::current());

namespace detail {
/// How elements of E travel to and from the host: std::vector<bool> packs bits and has no data(),
/// so bools go through bytes; a composite travels as its host struct (weft::host_t<E>).
template <class E>
using HostElement = std::conditional_t<std::is_same_v<E, bool>, uint8_t, host_t<E>>;

template <class E>
struct MatrixShape {
    static constexpr bool matrix = false;
};
template <int R, int C, ElementType T>
struct MatrixShape<mat<R, C, T>> {
    static constexpr bool matrix = true;
    static constexpr int rows = R, columns = C;
};

/// Throws a weft::Error, naming the caller's line, unless `a`'s elements are `components` scalars of `dtype`.
void check_element(const AnyArray& a, DType dtype, int components, const std::source_location& s);
/// Throws a weft::Error, naming the caller's line, unless `count` is a.size() (`what` names the call).
void check_host_count(const AnyArray& a, size_t count, const char* what, const std::source_location& s);
/// Throws a weft::Error, naming the caller's line, where `a` cannot be copied to or from the
/// host now: work on its device is being captured into a graph (`what` names the call).
void check_host_copy(const AnyArray& a, const char* what, const std::source_location& s);
/// `count` host elements of type T, value-initialised: a weft::Error, naming the caller's line and
/// `a`, where host memory cannot hold them (instead of std::bad_alloc).
template <class T>
std::vector<T> host_buffer(const AnyArray& a, size_t count, const T& value, const char* what,
                           const std::source_location& s);
/// The weft::Error of host_buffer.
[[noreturn]] void no_host_memory(const AnyArray& a, const char* what, const std::source_location& s);
/// The most elements of `bytes` each that this machine's memory could hold.
size_t host_capacity(size_t bytes);
template <class T>
std::vector<T> host_buffer(const AnyArray& a, size_t count, const T& value, const char* what,
                           const std::source_location& s) {
    // (Checked first: where the system overcommits memory, the allocation would succeed and the
    // process be killed as it fills it.)
    if (count > host_capacity(sizeof(T))) no_host_memory(a, what, s);
    try {
        return std::vector<T>(count, value);
    } catch (const std::bad_alloc&) {
        no_host_memory(a, what, s);
    } catch (const std::length_error&) {
        no_host_memory(a, what, s);
    }
}

/// Throws the weft::Error for matrix entry (r, c) of an R x C matrix array that has none.
[[noreturn]] void bad_matrix_entry(int r, int c, int rows, int columns, const std::source_location& s);
}  // namespace detail

/// An array of elements of type E: a scalar ElementType (float, int32_t, bool, ...) or a composite
/// (weft::vec<N, T>, mat<R, C, T>, quat_t<T>, transform_t<T>), which the host reads and writes as
/// weft::host_t<E> (weft::host::vec3f for a vec3).
template <ArrayElement E>
class DeviceArray : public AnyArray {
public:
    /// The scalar type of E's components (float for a vec3).
    using scalar_type = typename Layout<E>::scalar;
    /// What the host reads and writes an element as: weft::host_t<E> (weft::host::vec3f for a vec3).
    using host_type = host_t<E>;
    static_assert(sizeof(host_type) == sizeof(scalar_type) * components_of<E>,
                  "a composite element's host struct holds its scalar components without padding");

    /// An invalid array (valid() is false), holding nothing.
    DeviceArray() = default;
    /// Uninitialised elements of `shape` on `device`, as weft::empty.
    DeviceArray(const Shape& shape, Device device, std::source_location s = std::source_location::current())
        : AnyArray(scalar_dtype_of<E>, components_of<E>, shape, device, s) {}
    /// `a` as an array of E (the same memory): weft::Error, naming the caller's line, unless its
    /// elements are E's scalar type and component count (from_dlpack's result, say).
    static DeviceArray<E> of(const AnyArray& a, std::source_location s = std::source_location::current()) {
        detail::check_element(a, scalar_dtype_of<E>, components_of<E>, s);
        return DeviceArray<E>(a);
    }

    /// Sets every element to `value` (copied from the host; a broadcast element is written once).
    void fill_(const host_type& value, std::source_location s = std::source_location::current()) {
        detail::check_host_copy(*this, "a copy from the host into an array (fill_)", s);
        AnyArray reached = detail::without_broadcast(*this);  // each element once
        const auto host = detail::host_buffer<detail::HostElement<E>>(
            *this, static_cast<size_t>(reached.size()), detail::HostElement<E>(value), "fill_", s);
        reached.copy_from_host(host.data(), host.size() * sizeof(host_type));
    }
    /// Copies `count` elements (count must be size()), densely packed in row-major order, from
    /// the host in, or to the host out: counted in elements, as from_vector and to_vector count.
    /// A view that is not contiguous is gathered / scattered element by element.
    void copy_from_host(const host_type* src, size_t count,
                        std::source_location s = std::source_location::current()) {
        detail::check_host_count(*this, count, "copy_from_host", s);
        detail::check_host_copy(*this, "a copy from the host into an array (copy_from_host)", s);
        AnyArray::copy_from_host(src, count * sizeof(host_type));
    }
    /// The copy out, to `dst`; for either, weft::Error, naming the caller's line, unless count is size().
    void copy_to_host(host_type* dst, size_t count,
                      std::source_location s = std::source_location::current()) const {
        detail::check_host_count(*this, count, "copy_to_host", s);
        detail::check_host_copy(*this, "a copy from an array to the host (copy_to_host)", s);
        AnyArray::copy_to_host(dst, count * sizeof(host_type));
    }
    /// AnyArray::requires_grad_, returning this array with its element type.
    DeviceArray<E>& requires_grad_(std::source_location s = std::source_location::current()) {
        AnyArray::requires_grad_(s);
        return *this;
    }
    /// AnyArray::grad, with the element type: the gradient as a DeviceArray<E>.
    DeviceArray<E> grad(std::source_location s = std::source_location::current()) const {
        return DeviceArray<E>(AnyArray::grad(s));
    }
    /// A copy of this array on `device` (a new, contiguous array).
    DeviceArray<E> to(Device device) const {
        DeviceArray<E> out(shape(), device);
        copy(out, *this);
        return out;
    }

    /// Views, as AnyArray's, keeping the element type.
    DeviceArray<E> slice(int dim, int64_t start, int64_t stop, int64_t step = 1,
                         std::source_location s = std::source_location::current()) const {
        return DeviceArray<E>(AnyArray::slice(dim, start, stop, step, s));
    }
    /// AnyArray::select, keeping the element type.
    DeviceArray<E> select(int dim, int64_t index,
                          std::source_location s = std::source_location::current()) const {
        return DeviceArray<E>(AnyArray::select(dim, index, s));
    }
    /// select(0, i), keeping the element type.
    DeviceArray<E> operator[](ViewIndex i) const { return select(0, i.value, i.where); }
    /// AnyArray::transpose(), keeping the element type: the dimensions in reverse order.
    DeviceArray<E> transpose() const { return DeviceArray<E>(AnyArray::transpose()); }
    /// AnyArray::transpose(d0, d1), keeping the element type: dimensions d0 and d1 swapped.
    DeviceArray<E> transpose(int d0, int d1, std::source_location s = std::source_location::current()) const {
        return DeviceArray<E>(AnyArray::transpose(d0, d1, s));
    }
    /// AnyArray::broadcast, keeping the element type.
    DeviceArray<E> broadcast(const Shape& shape,
                             std::source_location s = std::source_location::current()) const {
        return DeviceArray<E>(AnyArray::broadcast(shape, s));
    }
    /// Component i of every element (a view sharing this array's memory; AnyArray::component):
    /// for a vec3, component(1) is every element's y; for a transform, 0-2 are p and 3-6 q.
    DeviceArray<scalar_type> component(int i,
                                       std::source_location s = std::source_location::current()) const {
        return DeviceArray<scalar_type>(AnyArray::component(i, s));
    }
    /// A matrix's entry (r, c) of every element (component r * C + c).
    template <class M = E>
    requires detail::MatrixShape<M>::matrix DeviceArray<scalar_type> component(
        int r, int c, std::source_location s = std::source_location::current())
    const {
        constexpr int kRows = detail::MatrixShape<M>::rows, kColumns = detail::MatrixShape<M>::columns;
        if (r < 0 || r >= kRows || c < 0 || c >= kColumns) detail::bad_matrix_entry(r, c, kRows, kColumns, s);
        return DeviceArray<scalar_type>(AnyArray::component(r * kColumns + c, s));
    }

    /// The elements in row-major order.
    std::vector<host_type> to_vector(std::source_location s = std::source_location::current()) const {
        detail::check_host_copy(*this, "a copy from an array to the host (to_vector)", s);
        auto host = detail::host_buffer<detail::HostElement<E>>(*this, static_cast<size_t>(size()),
                                                                detail::HostElement<E>{}, "to_vector", s);
        AnyArray::copy_to_host(host.data(), host.size() * sizeof(host_type));
        if constexpr (std::is_same_v<E, bool>) {
            return std::vector<bool>(host.begin(), host.end());
        } else {
            return host;
        }
    }

private:
    template <ArrayElement>
    friend class DeviceArray;
    explicit DeviceArray(AnyArray view) : AnyArray(std::move(view)) {}  // a view of this type
};

/// A DeviceArray<E> over memory Weft did not allocate: AnyArray::wrap, typed.
template <ArrayElement E>
DeviceArray<E> wrap(void* data, const Shape& shape, Device device, std::vector<int64_t> byte_strides = {},
                    std::function<void()> release = {},
                    std::source_location s = std::source_location::current()) {
    return DeviceArray<E>::of(AnyArray::wrap(data, scalar_dtype_of<E>, components_of<E>, shape, device,
                                             std::move(byte_strides), std::move(release), s),
                              s);
}

/// As the last argument of zeros / full / ones / from_vector: the array gets a zeroed gradient
/// (AnyArray::requires_grad_), e.g. `weft::zeros<float>(n, dev, weft::requires_grad)`.
struct RequiresGrad {};
/// The value that asks for it: `weft::requires_grad`.
inline constexpr RequiresGrad requires_grad{};

/// Uninitialised contents.
template <ArrayElement E>
DeviceArray<E> empty(const Shape& shape, Device device = default_device(),
                     std::source_location s = std::source_location::current()) {
    return DeviceArray<E>(shape, device, s);
}
/// Every component of every element zero.
template <ArrayElement E>
DeviceArray<E> zeros(const Shape& shape, Device device = default_device(),
                     std::source_location s = std::source_location::current()) {
    DeviceArray<E> a(shape, device, s);
    a.zero_();
    return a;
}
/// Every element `value`: `full(n, 2.0f)`, `full<weft::vec3>(n, {1, 2, 3})`,
/// `full(n, weft::host::vec3f{1, 2, 3})`.
template <ElementType T>
DeviceArray<T> full(const Shape& shape, T value, Device device = default_device(),
                    std::source_location s = std::source_location::current()) {
    DeviceArray<T> a(shape, device, s);
    a.fill_(value);
    return a;
}
/// Every element the composite `value`, given as its host struct: `full<weft::vec3>(n, {1, 2, 3})`.
template <ArrayElement E>
requires is_composite<E> DeviceArray<E> full(const Shape& shape, const host_t<E>& value,
                                             Device device = default_device(),
                                             std::source_location s = std::source_location::current()) {
    DeviceArray<E> a(shape, device, s);
    a.fill_(value);
    return a;
}
/// Every element `value`, a host struct, in an array of its traced composite:
/// `full(n, weft::host::vec3f{1, 2, 3})` is a DeviceArray<weft::vec3>.
template <HostComposite H>
DeviceArray<traced_t<H>> full(const Shape& shape, const H& value, Device device = default_device(),
                              std::source_location s = std::source_location::current()) {
    return full<traced_t<H>>(shape, value, device, s);
}
/// Every element 1: scalar elements only.
template <ArrayElement E>
DeviceArray<E> ones(const Shape& shape, Device device = default_device(),
                    std::source_location s = std::source_location::current()) {
    static_assert(!is_composite<E>,
                  "weft::ones is defined for scalar elements only: for a vector, matrix, quaternion or "
                  "transform 'one' is ambiguous (every component 1? the identity?); use "
                  "weft::full<E>(shape, value) with the element you mean");
    if constexpr (is_composite<E>)
        return DeviceArray<E>();
    else
        return full<E>(shape, E(1), device, s);
}
/// What every from_vector overload does: `values` (host structs for composites) into a new array
/// of `shape` on `device`; call from_vector, which has the defaults.
template <ArrayElement E>
DeviceArray<E> from_vector_of(const std::vector<host_t<E>>& values, const Shape& shape, Device device,
                              std::source_location s) {
    DeviceArray<E> a(shape, device, s);
    if constexpr (std::is_same_v<E, bool>) {
        const std::vector<uint8_t> bytes(values.begin(), values.end());
        a.AnyArray::copy_from_host(bytes.data(), bytes.size());
    } else {
        a.AnyArray::copy_from_host(values.data(), values.size() * sizeof(host_t<E>));
    }
    return a;
}
/// A 1-D array holding `values`, or an array of `shape` (whose size must match). Composite
/// elements come as their host structs: `from_vector<weft::vec3>({{1, 2, 3}, {4, 5, 6}})`, or
/// `from_vector(std::vector<weft::host::vec3f>{...})`.
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, const Shape& shape, Device device = default_device(),
                           std::source_location s = std::source_location::current()) {
    return from_vector_of<T>(values, shape, device, s);
}
/// Composite elements from their host structs, in an array of `shape`: `from_vector<weft::vec3>(v, shape)`.
template <ArrayElement E>
requires is_composite<E> DeviceArray<E> from_vector(
    const std::vector<host_t<E>>& values, const Shape& shape, Device device = default_device(),
    std::source_location s = std::source_location::current()) {
    return from_vector_of<E>(values, shape, device, s);
}
/// Host structs H into an array of `shape` of their traced composite (weft::traced_t<H>).
template <HostComposite H>
DeviceArray<traced_t<H>> from_vector(const std::vector<H>& values, const Shape& shape,
                                     Device device = default_device(),
                                     std::source_location s = std::source_location::current()) {
    return from_vector_of<traced_t<H>>(values, shape, device, s);
}
/// A 1-D array holding `values`.
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, Device device = default_device(),
                           std::source_location s = std::source_location::current()) {
    return from_vector_of<T>(values, Shape(static_cast<int64_t>(values.size()), s), device, s);
}
/// A 1-D array of composites from their host structs: `from_vector<weft::vec3>({{1, 2, 3}, {4, 5, 6}})`.
template <ArrayElement E>
requires is_composite<E> DeviceArray<E> from_vector(
    const std::vector<host_t<E>>& values, Device device = default_device(),
    std::source_location s = std::source_location::current()) {
    return from_vector_of<E>(values, Shape(static_cast<int64_t>(values.size()), s), device, s);
}
/// A 1-D array of host structs' traced composite: `from_vector(std::vector<weft::host::vec3f>{...})`.
template <HostComposite H>
DeviceArray<traced_t<H>> from_vector(const std::vector<H>& values, Device device = default_device(),
                                     std::source_location s = std::source_location::current()) {
    return from_vector_of<traced_t<H>>(values, Shape(static_cast<int64_t>(values.size()), s), device, s);
}

/// Arrays of `a`'s element type, shape and device (new, contiguous ones), every element 0 or 1.
template <ArrayElement E>
DeviceArray<E> zeros_like(const DeviceArray<E>& a, std::source_location s = std::source_location::current()) {
    return zeros<E>(a.shape(), a.device(), s);
}
/// As zeros_like, with every element 1 (scalar elements only, as ones).
template <ArrayElement E>
DeviceArray<E> ones_like(const DeviceArray<E>& a, std::source_location s = std::source_location::current()) {
    return ones<E>(a.shape(), a.device(), s);
}

/// zeros, with a zeroed gradient (`weft::zeros<float>(n, dev, weft::requires_grad)`).
template <ArrayElement E>
DeviceArray<E> zeros(const Shape& shape, Device device, RequiresGrad,
                     std::source_location s = std::source_location::current()) {
    return zeros<E>(shape, device, s).requires_grad_(s);
}
/// full, with a zeroed gradient.
template <ElementType T>
DeviceArray<T> full(const Shape& shape, T value, Device device, RequiresGrad,
                    std::source_location s = std::source_location::current()) {
    return full<T>(shape, value, device, s).requires_grad_(s);
}
/// full of a composite, with a zeroed gradient.
template <ArrayElement E>
requires is_composite<E> DeviceArray<E> full(const Shape& shape, const host_t<E>& value, Device device,
                                             RequiresGrad,
                                             std::source_location s = std::source_location::current()) {
    return full<E>(shape, value, device, s).requires_grad_(s);
}
/// full of a host struct's traced composite, with a zeroed gradient.
template <HostComposite H>
DeviceArray<traced_t<H>> full(const Shape& shape, const H& value, Device device, RequiresGrad,
                              std::source_location s = std::source_location::current()) {
    return full<traced_t<H>>(shape, value, device, s).requires_grad_(s);
}
/// ones, with a zeroed gradient.
template <ArrayElement E>
DeviceArray<E> ones(const Shape& shape, Device device, RequiresGrad,
                    std::source_location s = std::source_location::current()) {
    return ones<E>(shape, device, s).requires_grad_(s);
}
/// from_vector (1-D), with a zeroed gradient.
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, Device device, RequiresGrad,
                           std::source_location s = std::source_location::current()) {
    return from_vector<T>(values, device, s).requires_grad_(s);
}
/// from_vector of `shape`, with a zeroed gradient.
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, const Shape& shape, Device device, RequiresGrad,
                           std::source_location s = std::source_location::current()) {
    return from_vector<T>(values, shape, device, s).requires_grad_(s);
}
/// from_vector of composites of `shape`, with a zeroed gradient.
template <ArrayElement E>
requires is_composite<E> DeviceArray<E> from_vector(
    const std::vector<host_t<E>>& values, const Shape& shape, Device device, RequiresGrad,
    std::source_location s = std::source_location::current()) {
    return from_vector<E>(values, shape, device, s).requires_grad_(s);
}
/// from_vector of host structs of `shape`, with a zeroed gradient.
template <HostComposite H>
DeviceArray<traced_t<H>> from_vector(const std::vector<H>& values, const Shape& shape, Device device,
                                     RequiresGrad, std::source_location s = std::source_location::current()) {
    return from_vector<traced_t<H>>(values, shape, device, s).requires_grad_(s);
}
/// from_vector of composites (1-D), with a zeroed gradient.
template <ArrayElement E>
requires is_composite<E> DeviceArray<E> from_vector(
    const std::vector<host_t<E>>& values, Device device, RequiresGrad,
    std::source_location s = std::source_location::current()) {
    return from_vector<E>(values, device, s).requires_grad_(s);
}
/// from_vector of host structs (1-D), with a zeroed gradient.
template <HostComposite H>
DeviceArray<traced_t<H>> from_vector(const std::vector<H>& values, Device device, RequiresGrad,
                                     std::source_location s = std::source_location::current()) {
    return from_vector<traced_t<H>>(values, device, s).requires_grad_(s);
}

}  // namespace weft
