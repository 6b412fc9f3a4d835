// Math builtins, casts and select on traced values.
#pragma once

#include "weft/scalar.hpp"

namespace weft {

namespace detail {

template <class S>
S wrap_scalar(Ref ref) {
    return Access::wrap<S>(ref);
}

/// The traced type of a binary builtin's result: the traced operand's type (a literal operand
/// is converted to it); two traced operands must have the same element type.
template <class A, class B>
struct CommonScalar;
template <Traced A, Traced B>
requires std::is_same_v<scalar_of_t<A>, scalar_of_t<B>>
struct CommonScalar<A, B> {
    using type = scalar_of_t<A>;
};
template <Traced A, class B>
requires std::is_arithmetic_v<B>
struct CommonScalar<A, B> {
    using type = scalar_of_t<A>;
};
template <class A, Traced B>
requires std::is_arithmetic_v<A>
struct CommonScalar<A, B> {
    using type = scalar_of_t<B>;
};

template <class S, class X>
Ref operand(const X& x, Loc loc) {
    using T = typename S::value_type;
    if constexpr (std::is_arithmetic_v<X>) {
        return emit_const(dtype_of<T>, literal_bits(static_cast<T>(x)), loc);
    } else {
        return Access::ref(static_cast<const Scalar<T>&>(x));
    }
}

}  // namespace detail

/// The Scalar type of a binary builtin's result: the traced operand's type (a literal operand is
/// converted to it); two traced operands must have the same element type.
template <class A, class B>
using common_scalar_t = typename detail::CommonScalar<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type;

#define WEFT_MATH_BUILTIN(fn, code)                                                                      \
    template <Traced X>                                                                                  \
    scalar_of_t<X> fn(const X& x, std::source_location s = std::source_location::current()) {            \
        using S = scalar_of_t<X>;                                                                        \
        return detail::wrap_scalar<S>(detail::emit_math(                                                 \
            detail::MathOp::code, detail::Access::ref(static_cast<const S&>(x)), detail::Loc::from(s))); \
    }
/// |x|.
WEFT_MATH_BUILTIN(abs, Abs)
/// The square root of x.
WEFT_MATH_BUILTIN(sqrt, Sqrt)
/// x rounded down to a whole number.
WEFT_MATH_BUILTIN(floor, Floor)
/// x rounded up to a whole number.
WEFT_MATH_BUILTIN(ceil, Ceil)
/// The sine of x (radians).
WEFT_MATH_BUILTIN(sin, Sin)
/// The cosine of x (radians).
WEFT_MATH_BUILTIN(cos, Cos)
/// e to the power x.
WEFT_MATH_BUILTIN(exp, Exp)
/// The natural logarithm of x.
WEFT_MATH_BUILTIN(log, Log)
#undef WEFT_MATH_BUILTIN

#define WEFT_BINARY_BUILTIN(fn, code)                                                              \
    template <class A, class B>                                                                    \
    common_scalar_t<A, B> fn(const A& a, const B& b,                                               \
                             std::source_location s = std::source_location::current()) {           \
        using S = common_scalar_t<A, B>;                                                           \
        const auto loc = detail::Loc::from(s);                                                     \
        return detail::wrap_scalar<S>(detail::emit_binary(                                         \
            detail::BinaryOp::code, detail::operand<S>(a, loc), detail::operand<S>(b, loc), loc)); \
    }
/// The smaller and the larger of a and b; for floats IEEE minNum/maxNum: a NaN operand yields the
/// other operand.
///@{
WEFT_BINARY_BUILTIN(min, Min)
WEFT_BINARY_BUILTIN(max, Max)
///@}
/// a to the power b.
WEFT_BINARY_BUILTIN(pow, Pow)
#undef WEFT_BINARY_BUILTIN

/// clamp(x, lo, hi) = min(max(x, lo), hi).
template <Traced X, class L, class H>
scalar_of_t<X> clamp(const X& x, const L& lo, const H& hi,
                     std::source_location s = std::source_location::current()) {
    using S = scalar_of_t<X>;
    const auto loc = detail::Loc::from(s);
    const auto low = detail::emit_binary(detail::BinaryOp::Max, detail::operand<S>(x, loc),
                                         detail::operand<S>(lo, loc), loc);
    return detail::wrap_scalar<S>(
        detail::emit_binary(detail::BinaryOp::Min, low, detail::operand<S>(hi, loc), loc));
}

/// select(cond, if_true, if_false): both operands are evaluated; the result picks one.
/// (Argument order follows C's `cond ? a : b`, not Warp's select(cond, false, true).)
template <class A, class B>
common_scalar_t<A, B> select(const Located<bool>& cond, const A& if_true, const B& if_false,
                             std::source_location s = std::source_location::current()) {
    using S = common_scalar_t<A, B>;
    const auto loc = detail::Loc::from(s);
    return detail::wrap_scalar<S>(detail::emit_select(cond.ref, detail::operand<S>(if_true, loc),
                                                      detail::operand<S>(if_false, loc), loc));
}

/// cast<T>(x): converts between element types (float to integer truncates toward zero).
template <ElementType T, Traced X>
Scalar<T> cast(const X& x, std::source_location s = std::source_location::current()) {
    using S = scalar_of_t<X>;
    return detail::wrap_scalar<Scalar<T>>(
        detail::emit_cast(dtype_of<T>, detail::Access::ref(static_cast<const S&>(x)), detail::Loc::from(s)));
}

}  // namespace weft
