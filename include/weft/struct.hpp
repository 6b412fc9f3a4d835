// Structs as kernel and function parameters: a struct template written once for both sides,
// registered with WEFT_STRUCT, passed by value and flattened into its fields' leaves.
//
//   template <class Side = weft::host_side>
//   struct Model {
//       weft::Field<Side, float> stiffness;           // kernel: Float, host: float
//       weft::Field<Side, weft::vec3> gravity;        // kernel: vec3, host: weft::host::vec3f
//       weft::ArrayField<Side, weft::vec3> forces;    // kernel: Array<vec3>, host: DeviceArray<vec3>
//       Grid<Side> grid;                              // a nested registered struct
//   };
//   WEFT_STRUCT(Model, stiffness, gravity, forces, grid)   // every field, in declaration order
//
// A kernel takes `Model<weft::kernel_side>` and is launched with a `Model<>`. Each field becomes
// IR parameters named by path (`model.forces`, `model.grid.cells`), so a parameter `model_forces`
// and the field `forces` of a parameter `model` stay distinct (docs/design/0015).
#pragma once

/// @file
/// Structs as kernel and function parameters: weft::Field, weft::ArrayField and WEFT_STRUCT.

#include <string>
#include <utility>
#include <vector>

#include "weft/launch.hpp"

namespace weft {

/// The kernel side of a registered struct: its fields are traced values and weft::Array.
struct kernel_side {};
/// The host side of a registered struct: its fields are host values and weft::DeviceArray.
struct host_side {};

namespace detail {
template <class Side, class E>
struct FieldOf;
template <ElementType T>
struct FieldOf<kernel_side, T> {
    using type = Scalar<T>;
};
template <class V>
requires is_composite<V>
struct FieldOf<kernel_side, V> {
    using type = V;
};
template <ArrayElement E>
struct FieldOf<host_side, E> {
    using type = host_t<E>;
};
}  // namespace detail

/// A value field of element type E: a traced scalar or composite in kernels, its host value on the host.
template <class Side, ArrayElement E>
using Field = typename detail::FieldOf<Side, E>::type;
namespace detail {
template <class Side, class E, int N>
struct ArrayFieldOf {
    using type = Array<E, N>;
};
template <class E, int N>
struct ArrayFieldOf<host_side, E, N> {
    using type = DeviceArray<E>;
};
}  // namespace detail

/// An array field: weft::Array<E, N> in kernels, a DeviceArray<E> of N dimensions on the host.
template <class Side, ArrayElement E, int N = 1>
using ArrayField = typename detail::ArrayFieldOf<Side, E, N>::type;

namespace detail {

template <class S>
concept RegisteredStruct = requires(const S* s) {
    weft_struct_fields(s, [](const char*) {});
};

template <RegisteredStruct S>
struct ParamTraits<S> {
    static constexpr size_t count = [] {
        size_t n = 0;
        weft_struct_fields(static_cast<const S*>(nullptr), [&]<class F>(const char*) {
            static_assert(Param<F>,
                          "a WEFT_STRUCT field must be a weft::Field (a scalar or composite value), a "
                          "weft::ArrayField or a registered struct");
            n += ParamTraits<F>::count;
        });
        return n;
    }();
    static void leaves(const std::string& name, std::vector<ParamSpec>& specs,
                       std::vector<std::string>& names) {
        weft_struct_fields(static_cast<const S*>(nullptr), [&]<class F>(const char* field) {
            ParamTraits<F>::leaves(name + "." + field, specs, names);
        });
    }
    static S take(const Ref* refs) {
        size_t next = 0;
        return weft_struct_make(static_cast<const S*>(nullptr), [&]<class F>() {
            return ParamTraits<F>::take(refs + std::exchange(next, next + ParamTraits<F>::count));
        });
    }
    static void refs(const S& s, std::vector<Ref>& out) {
        weft_struct_values(s, [&]<class F>(const F& field) { ParamTraits<F>::refs(field, out); });
    }
};

template <class K>
struct HostOf;
template <template <class> class S>
struct HostOf<S<kernel_side>> {
    using type = S<host_side>;
};

template <RegisteredStruct S>
struct HostArgs<S> {
    static void append(const KernelState& kernel, const Dim& dim, size_t& leaf,
                       const typename HostOf<S>::type& host, std::vector<LaunchArg>& out) {
        weft_struct_values(host, [&]<class F>(const auto& field) {
            static_assert(ArgFits<F, std::remove_cvref_t<decltype(field)>>::value,
                          "a host struct's field does not fit its kernel-side field");
            HostArgs<F>::append(kernel, dim, leaf, field, out);
        });
    }
};

template <RegisteredStruct S>
struct ArgFits<S, typename HostOf<S>::type> : std::true_type {};

}  // namespace detail

}  // namespace weft

/// WEFT_STRUCT(S, field, ...): registers struct template S (see weft/struct.hpp's top comment) as a
/// kernel and function parameter type; list every field in declaration order (a field left out, or
/// listed out of order, does not compile). Write it at namespace scope, in S's namespace.
#define WEFT_STRUCT(S, ...)                                                            \
    template <class Side, class F>                                                     \
    constexpr void weft_struct_fields(const S<Side>*, F&& f) {                         \
        WEFT_DETAIL_FOR_EACH(WEFT_DETAIL_FIELD_TYPE, S, __VA_ARGS__)                   \
    }                                                                                  \
    template <class Side, class F>                                                     \
    void weft_struct_values(const S<Side>& s, F&& f) {                                 \
        WEFT_DETAIL_FOR_EACH(WEFT_DETAIL_FIELD_VALUE, S, __VA_ARGS__)                  \
    }                                                                                  \
    template <class F>                                                                 \
    S<::weft::kernel_side> weft_struct_make(const S<::weft::kernel_side>*, F&& make) { \
        return {WEFT_DETAIL_FOR_EACH(WEFT_DETAIL_FIELD_MAKE, S, __VA_ARGS__)};         \
    }

#define WEFT_DETAIL_FIELD_TYPE(S, field) \
    f.template operator()<decltype(S<::weft::kernel_side>::field)>(#field);
#define WEFT_DETAIL_FIELD_VALUE(S, field) \
    f.template operator()<decltype(S<::weft::kernel_side>::field)>(s.field);
#define WEFT_DETAIL_FIELD_MAKE(S, field) \
    .field = make.template operator()<decltype(S<::weft::kernel_side>::field)>(),

// WEFT_DETAIL_FOR_EACH(m, S, a, b, ...) expands to m(S, a) m(S, b) ... (up to 64 fields).
#define WEFT_DETAIL_PARENS ()
#define WEFT_DETAIL_EXPAND(...) WEFT_DETAIL_EXPAND3(WEFT_DETAIL_EXPAND3(WEFT_DETAIL_EXPAND3(__VA_ARGS__)))
#define WEFT_DETAIL_EXPAND3(...) WEFT_DETAIL_EXPAND2(WEFT_DETAIL_EXPAND2(WEFT_DETAIL_EXPAND2(__VA_ARGS__)))
#define WEFT_DETAIL_EXPAND2(...) WEFT_DETAIL_EXPAND1(WEFT_DETAIL_EXPAND1(WEFT_DETAIL_EXPAND1(__VA_ARGS__)))
#define WEFT_DETAIL_EXPAND1(...) __VA_ARGS__
#define WEFT_DETAIL_FOR_EACH(m, S, ...) \
    __VA_OPT__(WEFT_DETAIL_EXPAND(WEFT_DETAIL_FOR_EACH_STEP(m, S, __VA_ARGS__)))
#define WEFT_DETAIL_FOR_EACH_STEP(m, S, first, ...) \
    m(S, first) __VA_OPT__(WEFT_DETAIL_FOR_EACH_AGAIN WEFT_DETAIL_PARENS(m, S, __VA_ARGS__))
#define WEFT_DETAIL_FOR_EACH_AGAIN() WEFT_DETAIL_FOR_EACH_STEP
