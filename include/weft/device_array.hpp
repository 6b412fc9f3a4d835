// Arrays in a device's memory: creation, filling, and copies to and from the host.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <type_traits>
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

    // Sets every element to zero (in order on the current stream, for GPU arrays).
    void zero_();
    // A copy of this array on `device`.
    AnyArray to(Device device) const;
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

// Copies `src` into `dst` (same type and shape; any two devices).
void copy(const AnyArray& dst, const AnyArray& src);

namespace detail {
// How elements of T travel to and from the host: std::vector<bool> packs bits and has no data(),
// so bools go through bytes.
template <class T>
using HostElement = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
}  // namespace detail

template <ElementType T>
class DeviceArray : public AnyArray {
public:
    DeviceArray() = default;
    DeviceArray(const Shape& shape, Device device) : AnyArray(dtype_of<T>, shape, device) {}

    void fill_(T value) {
        std::vector<detail::HostElement<T>> host(static_cast<size_t>(size()), value);
        copy_from_host(host.data(), host.size() * sizeof(T));
    }
    DeviceArray<T> to(Device device) const {
        DeviceArray<T> out(shape(), device);
        copy(out, *this);
        return out;
    }
    std::vector<T> to_vector() const {
        std::vector<detail::HostElement<T>> host(static_cast<size_t>(size()));
        copy_to_host(host.data(), host.size() * sizeof(T));
        if constexpr (std::is_same_v<T, bool>) {
            return std::vector<bool>(host.begin(), host.end());
        } else {
            return host;
        }
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
DeviceArray<T> from_vector(const std::vector<T>& values, const Shape& shape,
                           Device device = default_device()) {
    DeviceArray<T> a(shape, device);
    if constexpr (std::is_same_v<T, bool>) {
        const std::vector<uint8_t> bytes(values.begin(), values.end());
        a.copy_from_host(bytes.data(), bytes.size());
    } else {
        a.copy_from_host(values.data(), values.size() * sizeof(T));
    }
    return a;
}
template <ElementType T>
DeviceArray<T> from_vector(const std::vector<T>& values, Device device = default_device()) {
    return from_vector(values, Shape(static_cast<int64_t>(values.size())), device);
}

}  // namespace weft
