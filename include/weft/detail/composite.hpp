// Scalar steps of composite operators: each records one IR node at the user's source line.
#pragma once

#include <array>
#include <source_location>
#include <string>
#include <type_traits>

#include "weft/builtins.hpp"

namespace weft {

// A composite operand with the user's source position. A binary operator cannot take a
// source_location parameter, so its first operand carries it, as Located does for scalars.
template <class V>
struct At {
    const V& value;
    detail::Loc loc;
    At(const V& v, std::source_location s = std::source_location::current())
        : value(v), loc(detail::Loc::from(s)) {}
    At(const V& v, detail::Loc l) : value(v), loc(l) {}
};

// A component or row index written as a C++ integer, with the user's source position; it is
// checked against the extent while tracing (weft::get<I>(v) checks a constant at compile time).
struct Component {
    int index;
    detail::Loc loc;
    Component(int i, std::source_location s = std::source_location::current())
        : index(i), loc(detail::Loc::from(s)) {}
};

namespace detail {

// A scalar operand of a composite builtin, converted to the composite's element type T (a
// literal 0.5 next to a vec3 is a float constant); T is deduced from the composite alone.
template <ElementType T>
using LocatedOf = std::type_identity_t<Located<T>>;

// Tags the constructors that take freshly traced component values.
struct FromRefs {};

// `what` names the index ("vector component"), `entries` what there are `extent` of.
inline void check_component(const Component& c, int extent, const char* what, const char* entries) {
    if (c.index < 0 || c.index >= extent)
        trace_fail(c.loc, std::string(what) + " index " + std::to_string(c.index) +
                              " is out of range: there are " + std::to_string(extent) + " " + entries +
                              ", indices 0 to " + std::to_string(extent - 1) +
                              " (weft::get<I>(v) checks a constant component index at compile time)");
}

template <ElementType T>
Ref constant(double value, Loc loc) {
    return emit_const(dtype_of<T>, literal_bits(static_cast<T>(value)), loc);
}
inline Ref add(Ref a, Ref b, Loc loc) {
    return emit_binary(BinaryOp::Add, a, b, loc);
}
inline Ref sub(Ref a, Ref b, Loc loc) {
    return emit_binary(BinaryOp::Sub, a, b, loc);
}
inline Ref mul(Ref a, Ref b, Loc loc) {
    return emit_binary(BinaryOp::Mul, a, b, loc);
}
inline Ref div(Ref a, Ref b, Loc loc) {
    return emit_binary(BinaryOp::Div, a, b, loc);
}
inline Ref neg(Ref a, Loc loc) {
    return emit_unary(UnaryOp::Neg, a, loc);
}
inline Ref sqrt(Ref a, Loc loc) {
    return emit_math(MathOp::Sqrt, a, loc);
}

// A fresh register holding `value`: a composite's components are its own mutable locals, so
// building one from a named scalar must not alias that scalar.
inline Ref own(Ref value, Loc loc) {
    return emit_copy(value, loc);
}

// Sum of products a[0]*b[0] + a[1]*b[1] + ..., added left to right.
template <size_t N>
Ref dot_refs(const std::array<Ref, N>& a, const std::array<Ref, N>& b, Loc loc) {
    Ref sum = mul(a[0], b[0], loc);
    for (size_t i = 1; i < N; ++i) sum = add(sum, mul(a[i], b[i], loc), loc);
    return sum;
}

template <ElementType T>
Scalar<T> scalar(Ref ref) {
    return Access::wrap<Scalar<T>>(ref);
}

}  // namespace detail

}  // namespace weft
