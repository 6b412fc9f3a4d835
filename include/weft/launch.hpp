// Launching kernels: weft::launch(kernel, dim, args...), checked at compile and run time.
#pragma once

#include <initializer_list>
#include <source_location>
#include <variant>
#include <vector>

#include "weft/device_array.hpp"
#include "weft/module.hpp"

namespace weft {

// A launch's thread grid: 1 to 4 extents, each >= 1, at most 2^31 - 1 threads in all.
// Built implicitly from an integer or a braced list, capturing the user's source line.
struct Dim {
    int ndim = 1;
    int64_t dims[4] = {1, 1, 1, 1};
    detail::Loc loc;

    Dim(int64_t n, std::source_location s = std::source_location::current());
    Dim(std::initializer_list<int64_t> extents, std::source_location s = std::source_location::current());
};

// A scalar launch argument whose type is known at run time.
struct ScalarArg {
    DType dtype;
    uint64_t bits;
};

template <ElementType T>
ScalarArg scalar_arg(T value) {
    return {dtype_of<T>, detail::literal_bits(value)};
}

using LaunchArg = std::variant<AnyArray, ScalarArg>;

// Launches with arguments whose types are checked at run time (count, kind, dtype, dimensions,
// device). The device is the arrays' device; with no array arguments, default_device().
void launch(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args);

namespace detail {

template <class P, class A>
struct ArgFits : std::false_type {};
template <ElementType T, int N, class A>
requires std::is_base_of_v<DeviceArray<T>, A>
struct ArgFits<Array<T, N>, A> : std::true_type {
};
template <ElementType T, int N>
struct ArgFits<Array<T, N>, AnyArray> : std::true_type {};  // checked at run time
template <ElementType T, class A>
requires std::is_arithmetic_v<A>
struct ArgFits<Scalar<T>, A> : std::true_type {
};

template <class P, class A>
LaunchArg to_launch_arg(const A& a) {
    if constexpr (IsArray<P>::value) {
        return static_cast<const AnyArray&>(a);
    } else {
        return scalar_arg(static_cast<typename P::value_type>(a));
    }
}

}  // namespace detail

// Launches `kernel` over `dim` threads. Argument count and kinds are checked at compile time;
// shapes and devices at run time.
template <class... P, class... A>
void launch(const Kernel<P...>& kernel, const Dim& dim, const A&... args) {
    static_assert(sizeof...(P) == sizeof...(A),
                  "weft::launch: the number of arguments differs from the kernel's parameters");
    static_assert((detail::ArgFits<P, std::remove_cvref_t<A>>::value && ...),
                  "weft::launch: an argument does not fit its parameter: an Array<T, N> takes a "
                  "DeviceArray<T> (or AnyArray), a Scalar<T> takes a C++ number");
    launch(*kernel.state(), dim, {detail::to_launch_arg<P>(args)...});
}

}  // namespace weft
