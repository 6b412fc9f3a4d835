// Traced scalars: weft::Scalar<T> and its aliases (Int, Float, ...), with operators.
//
// A Scalar is a handle to a value in the kernel being traced. Operators record IR; they do not
// compute. Each operator records the user's source line: operands arrive as Located<T>, whose
// converting constructor takes std::source_location::current() at the user's expression.
//
// A C++ `if`, `while`, `&&` short-circuit or `?:` cannot branch on a traced value, because its
// value is not known while tracing. Scalar<bool> therefore has no conversion to bool: such code
// does not compile. Use weft::if_, weft::while_ and weft::select instead.
#pragma once

#include <bit>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "weft/detail/trace_api.hpp"
#include "weft/half.hpp"

namespace weft {

template <ElementType T>
class Scalar;

namespace detail {

/// False, but only once a template is instantiated: the condition of a static_assert that names
/// a mistake's cure.
template <class A>
inline constexpr bool always_false = false;

template <ElementType T>
uint64_t literal_bits(T value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}

/// Lets the library wrap raw references without making that constructor public.
struct Access {
    template <class V>
    static V wrap(Ref ref) {
        return V(ref, typename V::FromRef{});
    }
    template <class V>
    static Ref ref(const V& v) {
        return v.ref_;
    }
    /// An array element (weft/array.hpp) whose value is the register `loaded` already holds.
    template <class E, class Place>
    static E element(Place place, Ref loaded) {
        return E(std::move(place), loaded);
    }
};

}  // namespace detail

/// An operand with the user's source position. Implicitly built from a Scalar<T> (or anything
/// derived from it) or from a C++ arithmetic literal, which becomes a constant of type T.
template <ElementType T>
struct Located {
    /// The traced value.
    detail::Ref ref;
    /// The user's source position, for the IR and for errors.
    detail::Loc loc;

    /// A traced value, at the caller's line.
    Located(const Scalar<T>& value, std::source_location s = std::source_location::current());
    /// A C++ arithmetic literal: a constant of type T (static_cast<T>(literal)).
    template <class U>
    requires std::is_arithmetic_v<U> Located(U literal,
                                             std::source_location s = std::source_location::current())
        : ref(detail::emit_const(dtype_of<T>, detail::literal_bits(static_cast<T>(literal)),
                                 detail::Loc::from(s))),
          loc(detail::Loc::from(s)) {}
};

/// A traced scalar of element type T: a handle to a value in the kernel being traced (see the top
/// of weft/scalar.hpp). Bool, Int, Float, ... name the usual ones.
template <ElementType T>
class Scalar {
public:
    /// T, the element type.
    using value_type = T;

    /// A zero-initialised local variable.
    Scalar(std::source_location s = std::source_location::current())
        : ref_(detail::emit_const(dtype_of<T>, 0, detail::Loc::from(s))) {}
    /// A literal becomes a constant.
    template <class U>
    requires std::is_arithmetic_v<U> Scalar(U literal,
                                            std::source_location s = std::source_location::current())
        : ref_(detail::emit_const(dtype_of<T>, detail::literal_bits(static_cast<T>(literal)),
                                  detail::Loc::from(s))) {}
    /// Copies snapshot the value: later assignments to the source do not show through.
    Scalar(const Scalar& other, std::source_location s = std::source_location::current())
        : ref_(detail::emit_copy(other.ref_, detail::Loc::from(s))) {}
    /// An explicit conversion between element types is a cast.
    template <ElementType U>
    requires(!std::is_same_v<U, T>) explicit Scalar(const Scalar<U>& other,
                                                    std::source_location s = std::source_location::current())
        : ref_(detail::emit_cast(dtype_of<T>, detail::Access::ref(other), detail::Loc::from(s))) {}

    /// Assigns other's value to this local, at the line traced last (an operator= cannot take a
    /// source_location).
    Scalar& operator=(const Scalar& other) {
        detail::emit_assign(ref_, other.ref_, detail::last_loc());
        return *this;
    }
    /// Assigns an operand (a traced value or a literal) to this local, at its source line.
    Scalar& operator=(const Located<T>& other) {
        detail::emit_assign(ref_, other.ref, other.loc);
        return *this;
    }
    /// `x = 0;`: without this overload a literal converts equally well to Scalar and to Located,
    /// and the assignment is ambiguous. (An operator= cannot take a source_location.)
    template <class U>
    requires std::is_arithmetic_v<U> Scalar& operator=(U literal) {
        const detail::Loc loc = detail::last_loc();
        detail::emit_assign(
            ref_, detail::emit_const(dtype_of<T>, detail::literal_bits(static_cast<T>(literal)), loc), loc);
        return *this;
    }

    /// A traced value has no value while the kernel is traced: `if (b)`, `while (b)` and
    /// `b ? x : y` stop here with a message naming weft::if_, weft::while_ and weft::select.
    template <class B>
    requires std::is_same_v<B, bool>
    explicit operator B() const {
        static_assert(detail::always_false<B>,
                      "weft: a traced value has no value while the kernel is traced, so C++'s if, "
                      "while and ?: cannot branch on it: write weft::if_(cond, [&] { ... }), "
                      "weft::while_([&] { return cond; }, [&] { ... }) or weft::select(cond, a, b)");
        return false;
    }

#define WEFT_COMPOUND(op, code)                                                                        \
    Scalar& operator op(const Located<T>& rhs) {                                                       \
        detail::emit_assign(ref_, detail::emit_binary(detail::BinaryOp::code, ref_, rhs.ref, rhs.loc), \
                            rhs.loc);                                                                  \
        return *this;                                                                                  \
    }
    /// `x += v`, `x -= v`, ... `x >>= v`: updates this local, at v's line.
    ///@{
    WEFT_COMPOUND(+=, Add)
    WEFT_COMPOUND(-=, Sub)
    WEFT_COMPOUND(*=, Mul)
    WEFT_COMPOUND(/=, Div)
    WEFT_COMPOUND(%=, Mod)
    WEFT_COMPOUND(&=, BitAnd)
    WEFT_COMPOUND(|=, BitOr)
    WEFT_COMPOUND(^=, BitXor)
    WEFT_COMPOUND(<<=, Shl)
    WEFT_COMPOUND(>>=, Shr)
    ///@}
#undef WEFT_COMPOUND

#define WEFT_BINARY(op, code, R)                                               \
    friend Scalar<R> operator op(const Located<T>& a, const Located<T>& b) {   \
        return detail::Access::wrap<Scalar<R>>(                                \
            detail::emit_binary(detail::BinaryOp::code, a.ref, b.ref, a.loc)); \
    }
    /// a + b, a - b, ... a >> b: the arithmetic and bit operators, at a's line; a literal operand
    /// becomes a constant of type T.
    ///@{
    WEFT_BINARY(+, Add, T)
    WEFT_BINARY(-, Sub, T)
    WEFT_BINARY(*, Mul, T)
    WEFT_BINARY(/, Div, T)
    WEFT_BINARY(%, Mod, T)
    WEFT_BINARY(&, BitAnd, T)
    WEFT_BINARY(|, BitOr, T)
    WEFT_BINARY(^, BitXor, T)
    WEFT_BINARY(<<, Shl, T)
    WEFT_BINARY(>>, Shr, T)
    ///@}
    /// a && b, a || b. Both sides are always evaluated: traced operands have no side effects to skip.
    ///@{
    WEFT_BINARY(&&, And, bool)
    WEFT_BINARY(||, Or, bool)
    ///@}
    /// a == b, a != b, a < b, ...: comparisons, a traced bool.
    ///@{
    WEFT_BINARY(==, Eq, bool)
    WEFT_BINARY(!=, Ne, bool)
    WEFT_BINARY(<, Lt, bool)
    WEFT_BINARY(<=, Le, bool)
    WEFT_BINARY(>, Gt, bool)
    WEFT_BINARY(>=, Ge, bool)
    ///@}
#undef WEFT_BINARY

    /// -a.
    friend Scalar operator-(const Located<T>& a) {
        return Scalar(detail::emit_unary(detail::UnaryOp::Neg, a.ref, a.loc), FromRef{});
    }
    /// Logical not, !a.
    friend Scalar operator!(const Located<T>& a) {
        return Scalar(detail::emit_unary(detail::UnaryOp::Not, a.ref, a.loc), FromRef{});
    }
    // !, && and || on a Scalar itself and on literals: exact matches, so the built-in operators,
    // which the conversion to bool above makes candidates, never tie with the traced ones. (An
    // operator cannot take a source_location: these take the line last recorded.)
    /// Logical not of a Scalar itself, at the line last recorded.
    friend Scalar operator!(const Scalar& a) {
        return Scalar(detail::emit_unary(detail::UnaryOp::Not, a.ref_, detail::last_loc()), FromRef{});
    }
#define WEFT_LOGICAL(op, code)                                                                            \
    friend Scalar<bool> operator op(const Scalar& a, const Scalar& b) {                                   \
        return detail::Access::wrap<Scalar<bool>>(                                                        \
            detail::emit_binary(detail::BinaryOp::code, a.ref_, b.ref_, detail::last_loc()));             \
    }                                                                                                     \
    template <class U>                                                                                    \
    requires std::is_arithmetic_v<U>                                                                      \
    friend Scalar<bool> operator op(const Scalar& a, U b) {                                               \
        const detail::Loc loc = detail::last_loc();                                                       \
        return detail::Access::wrap<Scalar<bool>>(detail::emit_binary(                                    \
            detail::BinaryOp::code, a.ref_,                                                               \
            detail::emit_const(dtype_of<T>, detail::literal_bits(static_cast<T>(b)), loc), loc));         \
    }                                                                                                     \
    template <class U>                                                                                    \
    requires std::is_arithmetic_v<U>                                                                      \
    friend Scalar<bool> operator op(U a, const Scalar& b) {                                               \
        const detail::Loc loc = detail::last_loc();                                                       \
        return detail::Access::wrap<Scalar<bool>>(detail::emit_binary(                                    \
            detail::BinaryOp::code,                                                                       \
            detail::emit_const(dtype_of<T>, detail::literal_bits(static_cast<T>(a)), loc), b.ref_, loc)); \
    }
    /// a && b, a || b of a Scalar itself and a Scalar or a literal, at the line last recorded.
    ///@{
    WEFT_LOGICAL(&&, And)
    WEFT_LOGICAL(||, Or)
    ///@}
#undef WEFT_LOGICAL
    /// Bitwise not, ~a (integer types).
    friend Scalar operator~(const Located<T>& a) {
        return Scalar(detail::emit_unary(detail::UnaryOp::BitNot, a.ref, a.loc), FromRef{});
    }

protected:
    struct FromRef {};
    /// Wraps a traced value (the library does, through detail::Access).
    Scalar(detail::Ref ref, FromRef) : ref_(ref) {}

    /// The traced value this handle names.
    detail::Ref ref_;

    friend struct detail::Access;
    template <ElementType U>
    friend class Scalar;
    friend struct Located<T>;
};

template <ElementType T>
Located<T>::Located(const Scalar<T>& value, std::source_location s)
    : ref(detail::Access::ref(value)), loc(detail::Loc::from(s)) {}

using Bool = Scalar<bool>;          ///< A traced bool.
using Int = Scalar<int32_t>;        ///< A traced int32_t.
using UInt = Scalar<uint32_t>;      ///< A traced uint32_t.
using Int64 = Scalar<int64_t>;      ///< A traced int64_t.
using UInt64 = Scalar<uint64_t>;    ///< A traced uint64_t.
using Float = Scalar<float>;        ///< A traced float.
using Double = Scalar<double>;      ///< A traced double.
using Float16 = Scalar<float16>;    ///< A traced weft::float16 (IEEE binary16).
using BFloat16 = Scalar<bfloat16>;  ///< A traced weft::bfloat16.

namespace detail {

template <class X>
struct TracedScalar {};
template <ElementType T>
struct TracedScalar<Scalar<T>> {
    using type = Scalar<T>;
};
template <class X>
requires std::is_base_of_v<Scalar<typename X::value_type>, X>
struct TracedScalar<X> {
    using type = Scalar<typename X::value_type>;
};

}  // namespace detail

/// The Scalar type of a traced expression (Scalar<T> itself, or an array element).
template <class X>
using scalar_of_t = typename detail::TracedScalar<std::remove_cvref_t<X>>::type;

/// Whether X is a traced scalar expression: a Scalar<T> or an array element.
template <class X>
concept Traced = requires {
    typename scalar_of_t<X>;
};

namespace detail {
template <class A, class B>
concept DifferentTraced = Traced<A> && Traced<B> &&
    !std::is_same_v<typename scalar_of_t<A>::value_type, typename scalar_of_t<B>::value_type>;
}  // namespace detail

// Two traced operands of different element types (a Float and an Int): Weft converts nothing
// implicitly. Without these, the compiler lists every operator's candidates; with them it says
// what to write. (The result type R only keeps the compiler from adding errors of its own.)
#define WEFT_MIXED(op, R)                                                                             \
    template <class A, class B>                                                                       \
    requires detail::DifferentTraced<A, B> R operator op(const A&, const B&) {                        \
        static_assert(detail::always_false<A>,                                                        \
                      "weft: the operands of " #op                                                    \
                      " have different element types (a Float and an Int, "                           \
                      "say), and Weft never converts implicitly: convert one with weft::cast<T>(x), " \
                      "e.g. x " #op " weft::cast<float>(i)");                                         \
        return R();                                                                                   \
    }
WEFT_MIXED(+, scalar_of_t<A>)
WEFT_MIXED(-, scalar_of_t<A>)
WEFT_MIXED(*, scalar_of_t<A>)
WEFT_MIXED(/, scalar_of_t<A>)
WEFT_MIXED(%, scalar_of_t<A>)
WEFT_MIXED(&, scalar_of_t<A>)
WEFT_MIXED(|, scalar_of_t<A>)
WEFT_MIXED(^, scalar_of_t<A>)
WEFT_MIXED(<<, scalar_of_t<A>)
WEFT_MIXED(>>, scalar_of_t<A>)
WEFT_MIXED(&&, Scalar<bool>)
WEFT_MIXED(||, Scalar<bool>)
WEFT_MIXED(==, Scalar<bool>)
WEFT_MIXED(!=, Scalar<bool>)
WEFT_MIXED(<, Scalar<bool>)
WEFT_MIXED(<=, Scalar<bool>)
WEFT_MIXED(>, Scalar<bool>)
WEFT_MIXED(>=, Scalar<bool>)
#undef WEFT_MIXED

}  // namespace weft
