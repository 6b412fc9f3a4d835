// Arrays in a device's memory: creation, filling, and copies to and from the host.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "weft/device.hpp"
#include "weft/dtype.hpp"

namespace weft {

// The extents of an array of 1 to 4 dimensions.
struct Shape {
    int ndim = 1;
    int64_t dims[4] = {0, 1, 1, 1};

    Shape(int64_t n);  // NOLINT(google-explicit-constructor): `zeros<float>(16)` reads well
    Shape(std::initializer_list<int64_t> extents);
    int64_t size() const;
    int64_t operator[](int d) const { return dims[d]; }
    friend bool operator==(const Shape& a, const Shape& b);
};

namespace detail {
struct Allocation;
}

// An array whose element type is known at run time. Strides are in bytes.
class AnyArray {
public:
    AnyArray() = default;
    AnyArray(DType dtype, const Shape& shape, Device device);

    bool valid() const { return allocation_ != nullptr; }
    DType dtype() const { return dtype_; }
    int ndim() const { return shape_.ndim; }
    const Shape& shape() const { return shape_; }
    int64_t size() const { return shape_.size(); }
    int64_t stride(int d) const { return strides_[d]; }
    Device device() const { return device_; }
    // The address of element 0 in the device's memory.
    void* data() const;

    // Sets every element to zero.
    void zero_();
    // Copies `bytes` of host data (size() elements, densely packed) in, or out.
    void copy_from_host(const void* src, size_t bytes);
    void copy_to_host(void* dst, size_t bytes) const;

protected:
    std::shared_ptr<detail::Allocation> allocation_;
    DType dtype_ = DType::Float32;
    Shape shape_{0};
    int64_t strides_[4] = {0, 0, 0, 0};
    Device device_ = Device::cpu();
};

template <ElementType T>
class DeviceArray : public AnyArray {
public:
    DeviceArray() = default;
    DeviceArray(const Shape& shape, Device device) : AnyArray(dtype_of<T>, shape, device) {}

    void fill_(T value) {
        std::vector<T> host(static_cast<size_t>(size()), value);
        copy_from_host(host.data(), host.size() * sizeof(T));
    }
    std::vector<T> to_vector() const {
        std::vector<T> host(static_cast<size_t>(size()));
        copy_to_host(host.data(), host.size() * sizeof(T));
        return host;
    }
};

// Uninitialised contents.
template <ElementType T>
DeviceArray<T> empty(const Shape& shape, Device device = default_device()) {
    return DeviceArray<T>(shape, device);
}
template <ElementType T>
DeviceArray<T> zeros(const Shape& shape, Device device = default_device()) {
    DeviceArray<T> a(shape, device);
    a.zero_();
    return a;
}
template <ElementType T>
DeviceArray<T> full(const Shape& shape, T value, Device device = default_device()) {
    DeviceArray<T> a(shape, device);
    a.fill_(value);
    return a;
}
template <ElementType T>
DeviceArray<T> ones(const Shape& shape, Device device = default_device()) {
    return full<T>(shape, T(1), device);
}
// A 1-D array holding `values`, or an array of `shape` (whose size must match).
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, Device device = default_device()) {
    DeviceArray<T> a(Shape(static_cast<int64_t>(values.size())), device);
    a.copy_from_host(values.data(), values.size() * sizeof(T));
    return a;
}
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, const Shape& shape,
                           Device device = default_device()) {
    DeviceArray<T> a(shape, device);
    a.copy_from_host(values.data(), values.size() * sizeof(T));
    return a;
}

}  // namespace weft
