// Elements of arrays of composites (weft::Array<vec3>, Array<mat33>, Array<quat>, Array<transform>):
// loaded whole, stored whole or by component, and atomics on a whole element or one component.
// Each component is one scalar IR access at a constant component index (docs/design/0015).
#pragma once

#include <array>
#include <utility>

#include "weft/atomics.hpp"
#include "weft/transform.hpp"

namespace weft {

namespace detail {

inline Place component_place(const Place& element, int component) {
    Place p = element;
    p.component += component;
    return p;
}

template <size_t N>
std::array<Ref, N> load_components(const Place& element, Loc loc) {
    std::array<Ref, N> r;
    for (size_t c = 0; c < N; ++c) r[c] = emit_load(component_place(element, static_cast<int>(c)), loc);
    return r;
}
template <size_t N>
void store_components(const Place& element, const std::array<Ref, N>& values, Loc loc) {
    for (size_t c = 0; c < N; ++c) emit_store(component_place(element, static_cast<int>(c)), values[c], loc);
}
/// Component by component, in order; returns the components' previous values.
template <size_t N>
std::array<Ref, N> atomic_components(AtomicOp op, const Place& element, const std::array<Ref, N>& values,
                                     Loc loc) {
    std::array<Ref, N> old;
    for (size_t c = 0; c < N; ++c)
        old[c] = emit_atomic(op, component_place(element, static_cast<int>(c)), values[c], {}, loc);
    return old;
}
template <size_t N>
std::array<Ref, N> own_components(const std::array<Ref, N>& values, Loc loc) {
    std::array<Ref, N> r;
    for (size_t c = 0; c < N; ++c) r[c] = own(values[c], loc);
    return r;
}

/// x, y, z, w of a vec or quat element: Elements sharing the loaded composite's registers, so that
/// `a[i].x = v` stores and `a[i].x += v` is an atomic on that component.
template <int N, ElementType T, class Base>
class NamedElements;
#define WEFT_NAMED_ELEMENT(c) Access::element<Element<T>>(component_place(place, c), r[c])
template <ElementType T, class Base>
class NamedElements<2, T, Base> : public Base {
protected:
    NamedElements(const Place& place, const std::array<Ref, 2>& r)
        : Base(FromRefs{}, r), x(WEFT_NAMED_ELEMENT(0)), y(WEFT_NAMED_ELEMENT(1)) {}
    Element<T>& named(int i) { return i == 0 ? x : y; }

public:
    Element<T> x, y;
};
template <ElementType T, class Base>
class NamedElements<3, T, Base> : public Base {
protected:
    NamedElements(const Place& place, const std::array<Ref, 3>& r)
        : Base(FromRefs{}, r), x(WEFT_NAMED_ELEMENT(0)), y(WEFT_NAMED_ELEMENT(1)), z(WEFT_NAMED_ELEMENT(2)) {}
    Element<T>& named(int i) { return i == 0 ? x : i == 1 ? y : z; }

public:
    Element<T> x, y, z;
};
template <ElementType T, class Base>
class NamedElements<4, T, Base> : public Base {
protected:
    NamedElements(const Place& place, const std::array<Ref, 4>& r)
        : Base(FromRefs{}, r),
          x(WEFT_NAMED_ELEMENT(0)),
          y(WEFT_NAMED_ELEMENT(1)),
          z(WEFT_NAMED_ELEMENT(2)),
          w(WEFT_NAMED_ELEMENT(3)) {}
    Element<T>& named(int i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }

public:
    Element<T> x, y, z, w;
};
#undef WEFT_NAMED_ELEMENT

/// What an element of V offers besides V itself: its components as elements of the array.
template <class V>
class ElementParts;

template <int N, ElementType T, class Base>
class IndexedElements : public NamedElements<N, T, Base> {
protected:
    IndexedElements(const Place& place, const std::array<Ref, N>& r, const char* what)
        : NamedElements<N, T, Base>(place, r), what_(what) {}

public:
    /// e[i]: component i as an element of the array (a[i][1] += v is an atomic on it); on a named
    /// element, the local component.
    Element<T>& operator[](const Component& i) & {
        check_component(i, N, what_, "components");
        return this->named(i.index);
    }
    Element<T> operator[](const Component& i) && {
        check_component(i, N, what_, "components");
        return this->named(i.index);
    }
    const Scalar<T>& operator[](const Component& i) const& { return Base::operator[](i); }

private:
    const char* what_;
};

template <int N, ElementType T>
class ElementParts<vec<N, T>> : public IndexedElements<N, T, vec<N, T>> {
protected:
    ElementParts(const Place& place, const std::array<Ref, N>& r)
        : IndexedElements<N, T, vec<N, T>>(place, r, "vector component") {}
};
template <ElementType T>
class ElementParts<quat_t<T>> : public IndexedElements<4, T, quat_t<T>> {
protected:
    ElementParts(const Place& place, const std::array<Ref, 4>& r)
        : IndexedElements<4, T, quat_t<T>>(place, r, "quaternion component") {}
};

}  // namespace detail

template <class V>
class CompositeElement;

namespace detail {

template <int R, int C, ElementType T>
class ElementParts<mat<R, C, T>> : public mat<R, C, T> {
protected:
    ElementParts(const Place& place, const std::array<Ref, R * C>& r)
        : mat<R, C, T>(FromRefs{}, r), place_(place) {}

public:
    /// m[r]: row r as an element of the array, so that a[i][r][c] += v is an atomic on one entry;
    /// on a named element, the local row.
    vec<C, T>& operator[](const Component& i) & { return mat<R, C, T>::operator[](i); }
    const vec<C, T>& operator[](const Component& i) const& { return mat<R, C, T>::operator[](i); }
    CompositeElement<vec<C, T>> operator[](const Component& i) && {
        const vec<C, T>& row = mat<R, C, T>::operator[](i);  // (checks i)
        return CompositeElement<vec<C, T>>(component_place(place_, i.index * C), row.refs());
    }

private:
    Place place_;
};

template <ElementType T>
class ElementParts<transform_t<T>> : public transform_t<T> {
protected:
    ElementParts(const Place& place, const std::array<Ref, 7>& r)
        : transform_t<T>(FromRefs{}, r),
          p(component_place(place, 0), {r[0], r[1], r[2]}),
          q(component_place(place, 3), {r[3], r[4], r[5], r[6]}) {}

public:
    /// The position and the rotation as elements of the array (a[i].p = v stores three components).
    CompositeElement<vec<3, T>> p;
    CompositeElement<quat_t<T>> q;
};

}  // namespace detail

/// An element of an array of composites: a V holding the element's loaded components (so
/// `auto p = a[i];` is a snapshot, as for scalars), which written as a temporary stores:
/// `a[i] = v` stores every component, `a[i] += v` / `a[i] -= v` are atomic adds / subs of every
/// component, `a[i].x = s` and `a[i][1] += s` (and `m[i][r][c]`, `t[i].p`) reach one component.
/// A named element (`auto p = a[i]; p.x = 1;`) is an ordinary local: writing it never writes the
/// array.
template <class V>
class CompositeElement : public detail::ElementParts<V> {
    using Parts = detail::ElementParts<V>;
    static constexpr size_t kComponents = static_cast<size_t>(Layout<V>::components);
    using Refs = std::array<detail::Ref, kComponents>;

public:
    /// Copies snapshot the components, as copies of V do.
    CompositeElement(const CompositeElement& other, std::source_location s = std::source_location::current())
        : Parts(other.place_, detail::own_components(other.refs(), detail::Loc::from(s))),
          place_(other.place_) {}

    /// `a[i] = v`: stores every component into the array.
    void operator=(const At<V>& v) && { detail::store_components(place_, v.value.refs(), v.loc); }
    /// `a[i] = b[j]`: stores the other element's components into the array.
    void operator=(const CompositeElement& v) && {
        detail::store_components(place_, v.refs(), detail::last_loc());
    }
    /// `a[i] += v`: an atomic add of every component, in component order.
    void operator+=(const At<V>& v) && {
        detail::atomic_components(detail::AtomicOp::Add, place_, v.value.refs(), v.loc);
    }
    /// `a[i] -= v`: an atomic subtract of every component, in component order.
    void operator-=(const At<V>& v) && {
        detail::atomic_components(detail::AtomicOp::Sub, place_, v.value.refs(), v.loc);
    }

    /// On a named element: assigns the local copy (the array is not written).
    CompositeElement& operator=(const At<V>& v) & {
        assign(v.value.refs(), v.loc);
        return *this;
    }
    /// On a named element: assigns the local copy (the array is not written).
    CompositeElement& operator=(const CompositeElement& v) & {
        assign(v.refs(), detail::last_loc());
        return *this;
    }
    /// On a named element: adds to the local copy, where V has a += (the array is not written).
    CompositeElement& operator+=(const At<V>& v) & requires requires(V& a, const At<V>& b) { a += b; }
    {
        V::operator+=(v);
        return *this;
    }
    /// On a named element: subtracts from the local copy, where V has a -= (the array is not written).
    CompositeElement& operator-=(const At<V>& v) & requires requires(V& a, const At<V>& b) { a -= b; }
    {
        V::operator-=(v);
        return *this;
    }
    /// Scaling has no atomic meaning: `a[i] *= s` does not compile (name the element first).
    ///@{
    template <class S>
    void operator*=(const S&) && = delete;
    template <class S>
    void operator/=(const S&) && = delete;
    ///@}
    /// On a named element: scales the local copy, where V has a *= (the array is not written).
    template <class S>
        CompositeElement& operator*=(const S& s) & requires requires(V& a, const S& b) {
        a *= b;
    }
    {
        V::operator*=(s);
        return *this;
    }
    /// On a named element: divides the local copy, where V has a /= (the array is not written).
    template <class S>
        CompositeElement& operator/=(const S& s) & requires requires(V& a, const S& b) {
        a /= b;
    }
    {
        V::operator/=(s);
        return *this;
    }

private:
    template <ArrayElement, int>
    friend class Array;
    template <class>
    friend class detail::ElementParts;
    CompositeElement(detail::Place place, detail::Loc loc)
        : CompositeElement(place, detail::load_components<kComponents>(place, loc)) {}
    /// A component range of a loaded element (a matrix row, a transform's p): its registers.
    CompositeElement(detail::Place place, const Refs& loaded)
        : Parts(place, loaded), place_(std::move(place)) {}

    void assign(const Refs& values, detail::Loc loc) {
        const Refs mine = this->refs();
        for (size_t c = 0; c < kComponents; ++c) detail::emit_assign(mine[c], values[c], loc);
    }

    detail::Place place_;
};

namespace detail {

template <class V>
V composite_atomic(AtomicOp op, Ref array, std::vector<Ref> index, const At<V>& v) {
    using T = typename Layout<V>::scalar;
    if ((op == AtomicOp::Min || op == AtomicOp::Max) && !is_float(dtype_of<T>))
        trace_fail(v.loc, std::string("atomic_") + op_name(op) +
                              " of an integer composite is not supported (the spec defines composite min "
                              "and max for float components); apply it to each component with scalar "
                              "atomics on a component view, or use a float composite");
    return V(FromRefs{}, atomic_components(op, Place{array, std::move(index), 0}, v.value.refs(), v.loc));
}

}  // namespace detail

#define WEFT_COMPOSITE_ATOMIC(fn, code)                                                                     \
    template <class V>                                                                                      \
    requires is_composite<V> V fn(const Array<V, 1>& a, const Index& i,                                     \
                                  const std::type_identity_t<At<V>>& v) {                                   \
        return detail::composite_atomic(detail::AtomicOp::code, detail::Access::ref(a), {i.ref}, v);        \
    }                                                                                                       \
    template <class V>                                                                                      \
    requires is_composite<V> V fn(const Array<V, 2>& a, const Index& i, const Index& j,                     \
                                  const std::type_identity_t<At<V>>& v) {                                   \
        return detail::composite_atomic(detail::AtomicOp::code, detail::Access::ref(a), {i.ref, j.ref}, v); \
    }                                                                                                       \
    template <class V>                                                                                      \
    requires is_composite<V> V fn(const Array<V, 3>& a, const Index& i, const Index& j, const Index& k,     \
                                  const std::type_identity_t<At<V>>& v) {                                   \
        return detail::composite_atomic(detail::AtomicOp::code, detail::Access::ref(a),                     \
                                        {i.ref, j.ref, k.ref}, v);                                          \
    }                                                                                                       \
    template <class V>                                                                                      \
    requires is_composite<V> V fn(const Array<V, 4>& a, const Index& i, const Index& j, const Index& k,     \
                                  const Index& l, const std::type_identity_t<At<V>>& v) {                   \
        return detail::composite_atomic(detail::AtomicOp::code, detail::Access::ref(a),                     \
                                        {i.ref, j.ref, k.ref, l.ref}, v);                                   \
    }
/// atomic_OP(array, i, [j, k, l,] value) on an array of composites: the atomic of every component,
/// in component order (min and max component-wise, for float components); returns the element's
/// previous value. Deterministic modules make each component's sum exact (docs/design/0015).
///@{
WEFT_COMPOSITE_ATOMIC(atomic_add, Add)
WEFT_COMPOSITE_ATOMIC(atomic_sub, Sub)
WEFT_COMPOSITE_ATOMIC(atomic_min, Min)
WEFT_COMPOSITE_ATOMIC(atomic_max, Max)
///@}
#undef WEFT_COMPOSITE_ATOMIC

}  // namespace weft
