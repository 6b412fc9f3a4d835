// Atomic operations on array elements; each returns the element's previous value.
//
// atomic_OP(array, i, [j, k, l,] value): one index per array dimension, then the operand.
// add/sub/min/max work on integer and float arrays; and/or/xor/cas/exch on integer arrays.
#pragma once

#include <type_traits>

#include "weft/array.hpp"

namespace weft {

namespace detail {

template <ElementType T, int N>
Scalar<T> atomic(AtomicOp op, const Array<T, N>& array, std::vector<Ref> index, Ref value, Ref compare,
                 Loc loc) {
    return Access::wrap<Scalar<T>>(
        emit_atomic(op, Place{Access::ref(array), std::move(index), 0}, value, compare, loc));
}

}  // namespace detail

#define WEFT_ATOMIC(fn, code)                                                                             \
    template <ElementType T>                                                                              \
    Scalar<T> fn(const Array<T, 1>& a, const Index& i, const std::type_identity_t<Located<T>>& v) {       \
        return detail::atomic(detail::AtomicOp::code, a, {i.ref}, v.ref, {}, i.loc);                      \
    }                                                                                                     \
    template <ElementType T>                                                                              \
    Scalar<T> fn(const Array<T, 2>& a, const Index& i, const Index& j,                                    \
                 const std::type_identity_t<Located<T>>& v) {                                             \
        return detail::atomic(detail::AtomicOp::code, a, {i.ref, j.ref}, v.ref, {}, i.loc);               \
    }                                                                                                     \
    template <ElementType T>                                                                              \
    Scalar<T> fn(const Array<T, 3>& a, const Index& i, const Index& j, const Index& k,                    \
                 const std::type_identity_t<Located<T>>& v) {                                             \
        return detail::atomic(detail::AtomicOp::code, a, {i.ref, j.ref, k.ref}, v.ref, {}, i.loc);        \
    }                                                                                                     \
    template <ElementType T>                                                                              \
    Scalar<T> fn(const Array<T, 4>& a, const Index& i, const Index& j, const Index& k, const Index& l,    \
                 const std::type_identity_t<Located<T>>& v) {                                             \
        return detail::atomic(detail::AtomicOp::code, a, {i.ref, j.ref, k.ref, l.ref}, v.ref, {}, i.loc); \
    }
/// Adds v to element a[i, ...] and returns its previous value. In a deterministic module a float
/// sum whose result is unused is exact, and `atomic_add(counter, i, n)` hands out slots in thread order.
///@{
WEFT_ATOMIC(atomic_add, Add)
///@}
/// Subtracts v from element a[i, ...] and returns its previous value (deterministic as atomic_add).
///@{
WEFT_ATOMIC(atomic_sub, Sub)
///@}
/// Sets element a[i, ...] to the smaller of it and v; returns its previous value. Deterministic
/// modules order floats totally (-0.0 < +0.0; a NaN wins).
///@{
WEFT_ATOMIC(atomic_min, Min)
///@}
/// Sets element a[i, ...] to the larger of it and v; returns its previous value (as atomic_min).
///@{
WEFT_ATOMIC(atomic_max, Max)
///@}
/// Stores v into element a[i, ...] and returns its previous value (integer arrays).
///@{
WEFT_ATOMIC(atomic_exch, Exch)
///@}
/// Bitwise-ands v into element a[i, ...] and returns its previous value (integer arrays).
///@{
WEFT_ATOMIC(atomic_and, And)
///@}
/// Bitwise-ors v into element a[i, ...] and returns its previous value (integer arrays).
///@{
WEFT_ATOMIC(atomic_or, Or)
///@}
/// Bitwise-xors v into element a[i, ...] and returns its previous value (integer arrays).
///@{
WEFT_ATOMIC(atomic_xor, Xor)
///@}
#undef WEFT_ATOMIC

/// atomic_cas(array, i, compare, value): stores `value` if the element equals `compare`.
///@{
template <ElementType T>
Scalar<T> atomic_cas(const Array<T, 1>& a, const Index& i, const std::type_identity_t<Located<T>>& compare,
                     const std::type_identity_t<Located<T>>& value) {
    return detail::atomic(detail::AtomicOp::Cas, a, {i.ref}, value.ref, compare.ref, i.loc);
}
template <ElementType T>
Scalar<T> atomic_cas(const Array<T, 2>& a, const Index& i, const Index& j,
                     const std::type_identity_t<Located<T>>& compare,
                     const std::type_identity_t<Located<T>>& value) {
    return detail::atomic(detail::AtomicOp::Cas, a, {i.ref, j.ref}, value.ref, compare.ref, i.loc);
}
///@}

}  // namespace weft
