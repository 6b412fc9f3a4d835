// Traced arrays: kernel parameters weft::Array<T, N> and their elements.
#pragma once

#include <array>
#include <type_traits>

#include "weft/layout.hpp"
#include "weft/scalar.hpp"

namespace weft {

/// An element of an array of composites (weft/composite_array.hpp).
template <class V>
class CompositeElement;

/// An array index: any traced integer, or an integer literal, with the user's source position.
struct Index {
    /// The traced index value.
    detail::Ref ref;
    /// The user's source position, for the IR and for errors.
    detail::Loc loc;

    /// A traced integer (of any width or signedness, not bool).
    template <ElementType T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
        Index(const Scalar<T>& value, std::source_location s = std::source_location::current())
        : ref(detail::Access::ref(value)), loc(detail::Loc::from(s)) {}
    /// An integer literal (an int64 constant).
    template <class U>
    requires(std::is_integral_v<U> && !std::is_same_v<U, bool>)
        Index(U literal, std::source_location s = std::source_location::current())
        : ref(detail::emit_const(DType::Int64, detail::literal_bits(static_cast<int64_t>(literal)),
                                 detail::Loc::from(s))),
          loc(detail::Loc::from(s)) {}
};

/// An element of a traced array. Reading it loads at once, so `auto v = a[i];` is a snapshot,
/// as in the spec's examples. Written as a temporary, `a[i] = v` stores and `a[i] += v` /
/// `a[i] -= v` are atomic add / sub. A named element (`auto v = a[i]; v = 2;`) is an ordinary
/// local variable: assignment to it never writes the array.
template <ElementType T>
class Element : public Scalar<T> {
public:
    /// Copies snapshot the value, as Scalar copies do.
    Element(const Element&) = default;

    /// `a[i] = v`: stores v into the array.
    void operator=(const Located<T>& value) && { detail::emit_store(place_, value.ref, value.loc); }
    /// `a[i] = b[j]`: stores the other element's value into the array.
    void operator=(const Element& value) && {
        detail::emit_store(place_, detail::Access::ref(value), detail::last_loc());
    }
    /// `a[i] += v`: an atomic add into the array (the exact sum, in a deterministic module).
    void operator+=(const Located<T>& value) && {
        detail::emit_atomic(detail::AtomicOp::Add, place_, value.ref, {}, value.loc);
    }
    /// `a[i] -= v`: an atomic subtract from the array.
    void operator-=(const Located<T>& value) && {
        detail::emit_atomic(detail::AtomicOp::Sub, place_, value.ref, {}, value.loc);
    }

    /// On a named element: assigns the local copy (the array is not written).
    Element& operator=(const Located<T>& value) & {
        Scalar<T>::operator=(value);
        return *this;
    }
    /// On a named element: assigns the local copy (the array is not written).
    Element& operator=(const Element& value) & {
        Scalar<T>::operator=(value);
        return *this;
    }
    /// On a named element: adds to the local copy (the array is not written).
    Element& operator+=(const Located<T>& value) & {
        Scalar<T>::operator+=(value);
        return *this;
    }
    /// On a named element: subtracts from the local copy (the array is not written).
    Element& operator-=(const Located<T>& value) & {
        Scalar<T>::operator-=(value);
        return *this;
    }

    // Only += and -= have an atomic meaning on an array element (the spec's shorthands);
    // `a[i] *= v` and the like do not compile. Write `a[i] = a[i] * v` (not atomic), or name
    // the element first to change a local copy.
#define WEFT_LOCAL_ONLY(op)                               \
    void operator op(const Located<T>& value)&& = delete; \
    Element& operator op(const Located<T>& value)& {      \
        Scalar<T>::operator op(value);                    \
        return *this;                                     \
    }
    /// On a named element: `*=`, `/=`, `%=`, `&=`, `|=`, `^=`, `<<=`, `>>=` update the local copy;
    /// on a temporary (`a[i] *= v`) they do not compile.
    ///@{
    WEFT_LOCAL_ONLY(*=)
    WEFT_LOCAL_ONLY(/=)
    WEFT_LOCAL_ONLY(%=)
    WEFT_LOCAL_ONLY(&=)
    WEFT_LOCAL_ONLY(|=)
    WEFT_LOCAL_ONLY(^=)
    WEFT_LOCAL_ONLY(<<=)
    WEFT_LOCAL_ONLY(>>=)
    ///@}
#undef WEFT_LOCAL_ONLY

private:
    template <ArrayElement, int>
    friend class Array;
    friend struct detail::Access;
    Element(detail::Place place, detail::Loc loc)
        : Scalar<T>(detail::emit_load(place, loc), typename Scalar<T>::FromRef{}), place_(std::move(place)) {}
    /// A component of a loaded composite element: the same register as the composite's component.
    Element(detail::Place place, detail::Ref loaded)
        : Scalar<T>(loaded, typename Scalar<T>::FromRef{}), place_(std::move(place)) {}

    detail::Place place_;
};

namespace detail {
/// What indexing an array of E gives: an Element of a scalar, a CompositeElement of a composite.
template <class E>
struct ElementOf {
    using type = CompositeElement<E>;
};
template <ElementType T>
struct ElementOf<T> {
    using type = Element<T>;
};
}  // namespace detail

/// A kernel or function parameter that is an N-dimensional array of E (1 <= N <= 4): a scalar
/// type, or a composite (weft::vec3, mat33, quat, transform, ...: weft/layout.hpp) whose elements
/// load and store whole (`vec3 p = a[i]; a[i] = p;`) or by component (`a[i].x = v`).
/// Index with a[i] (1-D) or a(i, j, ...) (any N). Shapes are read with a.shape(d).
template <ArrayElement E, int N = 1>
class Array {
    static_assert(N >= 1 && N <= 4, "weft::Array has 1 to 4 dimensions");
    using Elem = typename detail::ElementOf<E>::type;

public:
    /// The element type E.
    using value_type = E;
    /// N, the number of dimensions.
    static constexpr int ndim = N;

    /// a[i]: element i of a 1-D array (negative i counts from the end).
    Elem operator[](const Index& i) const requires(N == 1) { return element({i.ref}, i.loc); }
    /// On an array of 2 or more dimensions, a[i] is the (N-1)-D view of the same memory with
    /// dimension 0 fixed at i (a row of a 2-D array); a[i][j] == a(i, j). Like every kernel
    /// index, a negative i counts from the end: grid[-1] is the last row.
    Array<E, N - 1> operator[](const Index& i) const requires(N >= 2) {
        return detail::Access::wrap<Array<E, N - 1>>(detail::emit_view(ref_, i.ref, i.loc));
    }
    /// a(i): element i of a 1-D array, as a[i].
    Elem operator()(const Index& i) const requires(N == 1) { return element({i.ref}, i.loc); }
    /// a(i, j): the element at row i, column j of a 2-D array.
    Elem operator()(const Index& i, const Index& j) const requires(N == 2) {
        return element({i.ref, j.ref}, i.loc);
    }
    /// a(i, j, k): an element of a 3-D array.
    Elem operator()(const Index& i, const Index& j, const Index& k) const requires(N == 3) {
        return element({i.ref, j.ref, k.ref}, i.loc);
    }
    /// a(i, j, k, l): an element of a 4-D array.
    Elem operator()(const Index& i, const Index& j, const Index& k, const Index& l) const requires(N == 4) {
        return element({i.ref, j.ref, k.ref, l.ref}, i.loc);
    }

    /// The extent of dimension `d` (an int32 value).
    Int shape(int d, std::source_location s = std::source_location::current()) const {
        return detail::Access::wrap<Int>(detail::emit_shape(ref_, d, detail::Loc::from(s)));
    }

private:
    struct FromRef {};
    Array(detail::Ref ref, FromRef) : ref_(ref) {}
    Elem element(std::vector<detail::Ref> index, detail::Loc loc) const {
        return Elem(detail::Place{ref_, std::move(index), 0}, loc);
    }
    detail::Ref ref_;
    friend struct detail::Access;
};

namespace detail {

template <class X>
struct IsArray : std::false_type {};
template <ArrayElement E, int N>
struct IsArray<Array<E, N>> : std::true_type {};

}  // namespace detail

}  // namespace weft
