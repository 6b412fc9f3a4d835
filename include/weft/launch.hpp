// Launching kernels: weft::launch(kernel, dim, args...), checked at compile and run time.
#pragma once

#include <array>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft/device_array.hpp"
#include "weft/module.hpp"

namespace weft {

/// A launch's thread grid: 1 to 4 extents, each >= 1, at most 2^31 - 1 threads in all.
/// Built implicitly from an integer or a braced list, capturing the user's source line.
struct Dim {
    /// The number of dimensions, 1 to 4.
    int ndim = 1;
    /// The extents; those past ndim are 1.
    int64_t dims[4] = {1, 1, 1, 1};
    /// The user's source position, for errors.
    detail::Loc loc;

    /// A 1-D grid of n threads (checked at the launch, whose line errors name).
    Dim(int64_t n, std::source_location s = std::source_location::current());
    /// A grid of 1 to 4 extents, outermost first (checked at the launch).
    Dim(std::initializer_list<int64_t> extents, std::source_location s = std::source_location::current());
};

/// A scalar launch argument whose type is known at run time.
struct ScalarArg {
    /// The parameter's scalar type.
    DType dtype;
    /// The value's bytes, zero-extended to 64 bits.
    uint64_t bits;
};

/// The ScalarArg of C++ value `value`: its DType and bytes.
template <ElementType T>
ScalarArg scalar_arg(T value) {
    return {dtype_of<T>, detail::literal_bits(value)};
}

/// One argument of a launch checked at run time: an array or a scalar.
using LaunchArg = std::variant<AnyArray, ScalarArg>;

namespace detail {
/// "1e+300": a floating-point argument's value, for errors.
std::string floating_text(double value);
/// Throws the weft::Error for scalar argument `index`, given as `value`, which its parameter's
/// type cannot hold: it names the kernel, the argument and the launch's line.
[[noreturn]] void reject_scalar(const KernelState& kernel, const Dim& dim, size_t index,
                                const std::string& value);
}  // namespace detail

/// Launches with arguments whose types are checked at run time (count, kind, dtype, dimensions,
/// device). The device is the arrays' device; with no array arguments, default_device().
void launch(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args);

namespace detail {

template <class P, class A>
struct ArgFits : std::false_type {};
template <ArrayElement T, int N, class A>
requires std::is_base_of_v<DeviceArray<T>, A>
struct ArgFits<Array<T, N>, A> : std::true_type {
};
template <ArrayElement T, int N>
struct ArgFits<Array<T, N>, AnyArray> : std::true_type {};  // checked at run time
template <ElementType T, class A>
requires std::is_arithmetic_v<A> || std::is_same_v<A, T>
struct ArgFits<Scalar<T>, A> : std::true_type {
};
template <class V>
requires is_composite<V>
struct ArgFits<V, host_t<V>> : std::true_type {
};

/// One launch argument's compile-time check, a function of its own so that the compiler's
/// "In instantiation of ... [with Argument = 2; Parameter = weft::Array<float, 1>; Given =
/// weft::DeviceArray<int>]" names the argument that does not fit (counted from 1, as a user
/// counts: the second argument after the grid).
template <size_t Argument, class Parameter, class Given>
constexpr bool argument_fits() {
    static_assert(ArgFits<Parameter, Given>::value,
                  "weft: a launch argument does not fit its kernel parameter. The compiler's \"In "
                  "instantiation of ... argument_fits() [with ... Argument = N; Parameter = ...; Given = "
                  "...]\" before its \"required from\" lines names it: 'Argument' N is the Nth argument "
                  "after the grid, counted from 1, 'Parameter' the kernel's parameter type, 'Given' the "
                  "argument's type; the last \"required from here\" is your launch's line. An Array<T, N> "
                  "takes a DeviceArray<T> (or "
                  "an AnyArray) of the same T; a Scalar<T> takes a C++ number; a composite (vec3, ...) its "
                  "host value (weft::host::vec3f, ...); a WEFT_STRUCT its host-side struct");
    return true;
}
template <class Params, class Args, class Indices>
struct ArgumentsFit;
template <class... P, class... A, size_t... I>
struct ArgumentsFit<std::tuple<P...>, std::tuple<A...>, std::index_sequence<I...>> {
    static constexpr bool value = (argument_fits<I + 1, P, A>() && ...);
};
/// Checks a launch's arguments A... against the kernel's parameters P... at compile time:
/// Parameters<P...>::fit<A...>().
template <class... P>
struct Parameters {
    template <class... A>
    static constexpr bool fit() {
        static_assert(sizeof...(P) == sizeof...(A),
                      "weft: the number of launch arguments (after the grid) differs from the kernel's "
                      "number of parameters");
        if constexpr (sizeof...(P) == sizeof...(A))
            return ArgumentsFit<std::tuple<P...>, std::tuple<std::remove_cvref_t<A>...>,
                                std::index_sequence_for<P...>>::value;
        else
            return false;
    }
};

/// Whether the C++ number `value` passed for a Scalar<T> parameter keeps its value as a T:
/// integers must be in T's range (and floating-point values for integer parameters whole),
/// and a finite value must stay finite in a narrower floating-point type. (Rounding to the
/// nearest float or double is not a change of value in this sense: 0.1 for a Float is fine.)
template <ElementType T, class A>
bool scalar_fits(A value) {
    if constexpr (std::is_same_v<A, bool> || std::is_same_v<A, T>) {
        return true;
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        return !std::isfinite(static_cast<double>(value)) || std::isfinite(static_cast<float>(T(value)));
    } else if constexpr (std::is_same_v<T, bool>) {
        return value == A(0) || value == A(1);
    } else if constexpr (std::is_integral_v<T> && std::is_integral_v<A>) {
        using Wide = std::conditional_t<std::is_signed_v<A>, long long, unsigned long long>;
        return std::in_range<T>(static_cast<Wide>(value));
    } else if constexpr (std::is_integral_v<T>) {
        // [lowest, 2^bits or 2^(bits - 1)): both bounds are powers of two, exact as long double.
        constexpr long double half = static_cast<long double>(std::numeric_limits<T>::max() / 2 + 1);
        constexpr long double end = std::is_signed_v<T> ? half * 2 : half * 4;
        constexpr long double lowest = std::is_signed_v<T> ? -half * 2 : 0.0L;
        const auto x = static_cast<long double>(value);
        return x == std::trunc(x) && x >= lowest && x < end;
    } else if constexpr (std::is_floating_point_v<A> && sizeof(A) > sizeof(T)) {
        return !std::isfinite(value) || std::isfinite(static_cast<T>(value));
    } else {
        return true;
    }
}

template <class A>
std::string number_text(A value) {
    if constexpr (std::is_same_v<A, bool>)
        return value ? "true" : "false";
    else if constexpr (std::is_floating_point_v<A>)
        return floating_text(static_cast<double>(value));
    else if constexpr (std::is_signed_v<A>)
        return std::to_string(static_cast<long long>(value));
    else
        return std::to_string(static_cast<unsigned long long>(value));
}

/// `value` as an argument of a `target` parameter, by scalar_fits's rule; nullopt when `target`
/// cannot hold it. (RecordedLaunch::set, which knows its parameter's type only at run time.)
template <class A>
requires std::is_arithmetic_v<A> std::optional<ScalarArg> scalar_as(DType target, A value) {
    const auto as = [&]<class T>(std::type_identity<T>) -> std::optional<ScalarArg> {
        if (!scalar_fits<T>(value)) return std::nullopt;
        return scalar_arg(static_cast<T>(value));
    };
    switch (target) {
        case DType::Bool: return as(std::type_identity<bool>{});
        case DType::Int32: return as(std::type_identity<int32_t>{});
        case DType::UInt32: return as(std::type_identity<uint32_t>{});
        case DType::Int64: return as(std::type_identity<int64_t>{});
        case DType::UInt64: return as(std::type_identity<uint64_t>{});
        case DType::Float16: return as(std::type_identity<float16>{});
        case DType::Float32: return as(std::type_identity<float>{});
        case DType::Float64: return as(std::type_identity<double>{});
        case DType::BFloat16: return as(std::type_identity<bfloat16>{});
    }
    return std::nullopt;
}

/// What a `dtype` scalar holds, for errors: "whole numbers from 0 to 4294967295".
std::string holds_text(DType dtype);

/// Appends the launch arguments of parameter P's leaves (weft/module.hpp's ParamTraits), given
/// the host value `a`; `leaf` counts the leaves so far, for errors.
template <class P>
struct HostArgs {
    template <class A>
    static void append(const KernelState& kernel, const Dim& dim, size_t& leaf, const A& a,
                       std::vector<LaunchArg>& out) {
        if constexpr (IsArray<P>::value) {
            out.push_back(static_cast<const AnyArray&>(a));
        } else {
            using T = typename P::value_type;
            if (!scalar_fits<T>(a)) reject_scalar(kernel, dim, leaf, number_text(a));
            out.push_back(scalar_arg(static_cast<T>(a)));
        }
        ++leaf;
    }
};
template <class V>
requires is_composite<V>
struct HostArgs<V> {
    static void append(const KernelState&, const Dim&, size_t& leaf, const host_t<V>& a,
                       std::vector<LaunchArg>& out) {
        using T = typename Layout<V>::scalar;
        std::array<T, components_of<V>> c;
        static_assert(sizeof(c) == sizeof(a), "a host composite is its components, packed");
        std::memcpy(c.data(), &a, sizeof(c));
        for (const T& x : c) out.push_back(scalar_arg(x));
        leaf += c.size();
    }
};

template <class... P, class... A>
std::vector<LaunchArg> launch_args(const KernelState& kernel, const Dim& dim, const A&... args) {
    std::vector<LaunchArg> out;
    size_t leaf = 0;
    (HostArgs<P>::append(kernel, dim, leaf, args, out), ...);
    return out;
}

}  // namespace detail

/// Launches `kernel` over `dim` threads. Argument count and kinds are checked at compile time;
/// shapes, devices and whether each scalar's value fits its parameter's type at run time.
template <class... P, class... A>
void launch(const Kernel<P...>& kernel, const Dim& dim, const A&... args) {
    static_assert(detail::Parameters<P...>::template fit<A...>());
    launch(*kernel.state(), dim, detail::launch_args<P...>(*kernel.state(), dim, args...));
}

}  // namespace weft
