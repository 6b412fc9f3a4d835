// Traced vectors: weft::vec<N, T> (vec2, vec3, vec4, vec3d, vec3i, ...), an aggregate of traced
// scalars whose operators expand into scalar IR while tracing (docs/design/0015).
#pragma once

#include <array>
#include <type_traits>
#include <utility>

#include "weft/detail/composite.hpp"

namespace weft {

namespace detail {

template <ElementType T, size_t N, size_t... I>
std::array<Scalar<T>, N> scalars(const std::array<Ref, N>& refs, std::index_sequence<I...>) {
    return {scalar<T>(refs[I])...};
}

/// The components of a vec: named x, y, z, w for 2 to 4 components, c[i] otherwise.
template <int N, ElementType T>
struct VecComponents {
    std::array<Scalar<T>, N> c;
    Scalar<T>& at(int i) { return c[i]; }
    const Scalar<T>& at(int i) const { return c[i]; }

protected:
    explicit VecComponents(const std::array<Ref, N>& r) : c(scalars<T>(r, std::make_index_sequence<N>{})) {}
};
template <ElementType T>
struct VecComponents<2, T> {
    Scalar<T> x, y;
    Scalar<T>& at(int i) { return i == 0 ? x : y; }
    const Scalar<T>& at(int i) const { return i == 0 ? x : y; }

protected:
    explicit VecComponents(const std::array<Ref, 2>& r) : x(scalar<T>(r[0])), y(scalar<T>(r[1])) {}
};
template <ElementType T>
struct VecComponents<3, T> {
    Scalar<T> x, y, z;
    Scalar<T>& at(int i) { return i == 0 ? x : i == 1 ? y : z; }
    const Scalar<T>& at(int i) const { return i == 0 ? x : i == 1 ? y : z; }

protected:
    explicit VecComponents(const std::array<Ref, 3>& r)
        : x(scalar<T>(r[0])), y(scalar<T>(r[1])), z(scalar<T>(r[2])) {}
};
template <ElementType T>
struct VecComponents<4, T> {
    Scalar<T> x, y, z, w;
    Scalar<T>& at(int i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
    const Scalar<T>& at(int i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }

protected:
    explicit VecComponents(const std::array<Ref, 4>& r)
        : x(scalar<T>(r[0])), y(scalar<T>(r[1])), z(scalar<T>(r[2])), w(scalar<T>(r[3])) {}
};

}  // namespace detail

/// A vector of N traced scalars of element type T. Components are mutable locals: `v.x = 1.0f`,
/// `v[2] += a`, `v = v + w` and `v += w` work inside if_ and for_ bodies like scalar locals.
/// Vectors of different lengths or element types do not mix: such code does not compile.
template <int N, ElementType T>
class vec : public detail::VecComponents<N, T> {
    static_assert(N >= 1, "a weft::vec has at least one component");
    using Base = detail::VecComponents<N, T>;

public:
    /// The components' scalar type.
    using value_type = T;
    /// N, the number of components.
    static constexpr int size = N;

    /// A zero vector.
    vec(std::source_location s = std::source_location::current())
        : vec(detail::FromRefs{},
              fill_refs(detail::constant<T>(0, detail::Loc::from(s)), detail::Loc::from(s))) {}
    /// Every component set to `fill`.
    explicit vec(const Located<T>& fill) : vec(detail::FromRefs{}, fill_refs(fill.ref, fill.loc)) {}
    /// From components: vec2(x, y), vec3(x, y, z), vec4(x, y, z, w).
    ///@{
    vec(const Located<T>& a, const Located<T>& b) requires(N == 2)
        : vec(detail::FromRefs{}, {detail::own(a.ref, a.loc), detail::own(b.ref, a.loc)}) {}
    vec(const Located<T>& a, const Located<T>& b, const Located<T>& c) requires(N == 3)
        : vec(detail::FromRefs{},
              {detail::own(a.ref, a.loc), detail::own(b.ref, a.loc), detail::own(c.ref, a.loc)}) {}
    vec(const Located<T>& a, const Located<T>& b, const Located<T>& c, const Located<T>& d) requires(N == 4)
        : vec(detail::FromRefs{}, {detail::own(a.ref, a.loc), detail::own(b.ref, a.loc),
                                   detail::own(c.ref, a.loc), detail::own(d.ref, a.loc)}) {}
    ///@}
    /// Copies snapshot every component, as scalar copies do.
    vec(const vec& other, std::source_location s = std::source_location::current())
        : vec(detail::FromRefs{}, copy_refs(other, detail::Loc::from(s))) {}
    /// An explicit conversion between element types casts each component.
    template <ElementType U>
    requires(!std::is_same_v<U, T>) explicit vec(const vec<N, U>& other,
                                                 std::source_location s = std::source_location::current())
        : vec(detail::FromRefs{}, cast_refs(other, detail::Loc::from(s))) {}
    /// Built from freshly traced component values (used by the library's operators).
    vec(detail::FromRefs, const std::array<detail::Ref, N>& refs) : Base(refs) {}

    /// Assigns other's components to this vector's (the locals change; see the class comment).
    vec& operator=(const vec& other) {
        assign(other, detail::last_loc());
        return *this;
    }

    /// v[i]: component i (a checked C++ integer). A traced index is not supported.
    Scalar<T>& operator[](const Component& i) {
        detail::check_component(i, N, "vector component", "components");
        return this->at(i.index);
    }
    /// v[i], read only.
    const Scalar<T>& operator[](const Component& i) const {
        detail::check_component(i, N, "vector component", "components");
        return this->at(i.index);
    }

    /// The traced value of component i, unchecked (used by the library's operators).
    detail::Ref ref(int i) const { return detail::Access::ref(this->at(i)); }
    /// The traced values of the components in order (used by the library's operators).
    std::array<detail::Ref, N> refs() const {
        std::array<detail::Ref, N> r;
        for (int i = 0; i < N; ++i) r[i] = ref(i);
        return r;
    }

    /// a + b, component by component.
    friend vec operator+(const At<vec>& a, const vec& b) { return zip(a, b, detail::add); }
    /// a - b, component by component.
    friend vec operator-(const At<vec>& a, const vec& b) { return zip(a, b, detail::sub); }
    /// Every component negated.
    friend vec operator-(const At<vec>& a) {
        return map([&](int i) { return detail::neg(a.value.ref(i), a.loc); });
    }
    /// Every component times the scalar s.
    friend vec operator*(const At<vec>& a, const Located<T>& s) {
        return map([&](int i) { return detail::mul(a.value.ref(i), s.ref, a.loc); });
    }
    /// The scalar s times every component.
    friend vec operator*(const Located<T>& s, const vec& a) {
        return map([&](int i) { return detail::mul(s.ref, a.ref(i), s.loc); });
    }
    /// Every component divided by the scalar s.
    friend vec operator/(const At<vec>& a, const Located<T>& s) {
        return map([&](int i) { return detail::div(a.value.ref(i), s.ref, a.loc); });
    }

    /// Adds b component by component.
    vec& operator+=(const At<vec>& b) { return update(b, detail::add); }
    /// Subtracts b component by component.
    vec& operator-=(const At<vec>& b) { return update(b, detail::sub); }
    /// Multiplies every component by the scalar s.
    vec& operator*=(const Located<T>& s) {
        for (int i = 0; i < N; ++i) detail::emit_assign(ref(i), detail::mul(ref(i), s.ref, s.loc), s.loc);
        return *this;
    }
    /// Divides every component by the scalar s.
    vec& operator/=(const Located<T>& s) {
        for (int i = 0; i < N; ++i) detail::emit_assign(ref(i), detail::div(ref(i), s.ref, s.loc), s.loc);
        return *this;
    }

    /// A vector whose component i is f(i), computed for i = 0, 1, ... in order.
    template <class F>
    static vec map(F&& f) {
        std::array<detail::Ref, N> r;
        for (int i = 0; i < N; ++i) r[i] = f(i);
        return vec(detail::FromRefs{}, r);
    }

private:
    template <class Op>
    static vec zip(const At<vec>& a, const vec& b, Op op) {
        return map([&](int i) { return op(a.value.ref(i), b.ref(i), a.loc); });
    }
    template <class Op>
    vec& update(const At<vec>& b, Op op) {
        for (int i = 0; i < N; ++i) detail::emit_assign(ref(i), op(ref(i), b.value.ref(i), b.loc), b.loc);
        return *this;
    }
    void assign(const vec& other, detail::Loc loc) {
        for (int i = 0; i < N; ++i) detail::emit_assign(ref(i), other.ref(i), loc);
    }
    static std::array<detail::Ref, N> fill_refs(detail::Ref value, detail::Loc loc) {
        std::array<detail::Ref, N> r;
        for (int i = 0; i < N; ++i) r[i] = detail::own(value, loc);
        return r;
    }
    static std::array<detail::Ref, N> copy_refs(const vec& other, detail::Loc loc) {
        std::array<detail::Ref, N> r;
        for (int i = 0; i < N; ++i) r[i] = detail::own(other.ref(i), loc);
        return r;
    }
    template <ElementType U>
    static std::array<detail::Ref, N> cast_refs(const vec<N, U>& other, detail::Loc loc) {
        std::array<detail::Ref, N> r;
        for (int i = 0; i < N; ++i) r[i] = detail::emit_cast(dtype_of<T>, other.ref(i), loc);
        return r;
    }
};

/// Component I, checked at compile time: weft::get<3>(v) on a vec3 does not compile.
template <int I, int N, ElementType T>
requires(I >= 0 && I < N) Scalar<T>
&get(vec<N, T>& v) {
    return v.at(I);
}
/// Component I, read only.
template <int I, int N, ElementType T>
requires(I >= 0 && I < N) const Scalar<T>& get(const vec<N, T>& v) {
    return v.at(I);
}

using vec2 = vec<2, float>;     ///< Two float components.
using vec3 = vec<3, float>;     ///< Three float components.
using vec4 = vec<4, float>;     ///< Four float components.
using vec2f = vec2;             ///< vec2.
using vec3f = vec3;             ///< vec3.
using vec4f = vec4;             ///< vec4.
using vec2d = vec<2, double>;   ///< Two double components.
using vec3d = vec<3, double>;   ///< Three double components.
using vec4d = vec<4, double>;   ///< Four double components.
using vec2i = vec<2, int32_t>;  ///< Two int32_t components.
using vec3i = vec<3, int32_t>;  ///< Three int32_t components.
using vec4i = vec<4, int32_t>;  ///< Four int32_t components.

/// Component-wise product and quotient (Warp's cw_mul / cw_div; `*` of two vectors is not
/// defined, so a dot product is never written by accident).
///@{
template <int N, ElementType T>
vec<N, T> cw_mul(const vec<N, T>& a, const vec<N, T>& b,
                 std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return vec<N, T>::map([&](int i) { return detail::mul(a.ref(i), b.ref(i), loc); });
}
template <int N, ElementType T>
vec<N, T> cw_div(const vec<N, T>& a, const vec<N, T>& b,
                 std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return vec<N, T>::map([&](int i) { return detail::div(a.ref(i), b.ref(i), loc); });
}
///@}

#define WEFT_VEC_BINARY(fn, code)                                                                         \
    template <int N, ElementType T>                                                                       \
    vec<N, T> fn(const vec<N, T>& a, const vec<N, T>& b,                                                  \
                 std::source_location s = std::source_location::current()) {                              \
        const auto loc = detail::Loc::from(s);                                                            \
        return vec<N, T>::map(                                                                            \
            [&](int i) { return detail::emit_binary(detail::BinaryOp::code, a.ref(i), b.ref(i), loc); }); \
    }
/// Component-wise min and max (IEEE minNum/maxNum for floats, as the scalar builtins).
///@{
WEFT_VEC_BINARY(min, Min)
WEFT_VEC_BINARY(max, Max)
///@}
#undef WEFT_VEC_BINARY

/// Component-wise |a|.
template <int N, ElementType T>
vec<N, T> abs(const vec<N, T>& a, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return vec<N, T>::map([&](int i) { return detail::emit_math(detail::MathOp::Abs, a.ref(i), loc); });
}

/// select(cond, a, b) component-wise: both vectors are evaluated; the result picks one.
template <int N, ElementType T>
vec<N, T> select(const Located<bool>& cond, const vec<N, T>& if_true, const vec<N, T>& if_false,
                 std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return vec<N, T>::map(
        [&](int i) { return detail::emit_select(cond.ref, if_true.ref(i), if_false.ref(i), loc); });
}

/// a.x*b.x + a.y*b.y + ..., summed in component order.
template <int N, ElementType T>
Scalar<T> dot(const vec<N, T>& a, const vec<N, T>& b,
              std::source_location s = std::source_location::current()) {
    return detail::scalar<T>(detail::dot_refs(a.refs(), b.refs(), detail::Loc::from(s)));
}

/// The cross product a x b (vec3 only).
template <ElementType T>
vec<3, T> cross(const vec<3, T>& a, const vec<3, T>& b,
                std::source_location s = std::source_location::current()) {
    using namespace detail;
    const auto loc = Loc::from(s);
    auto term = [&](int i, int j) {
        return sub(mul(a.ref(i), b.ref(j), loc), mul(a.ref(j), b.ref(i), loc), loc);
    };
    return vec<3, T>(FromRefs{}, {term(1, 2), term(2, 0), term(0, 1)});
}

/// dot(a, a), the squared length.
template <int N, ElementType T>
Scalar<T> length_sq(const vec<N, T>& a, std::source_location s = std::source_location::current()) {
    return dot(a, a, s);
}
/// The Euclidean length, sqrt(dot(a, a)) (float vectors only).
template <int N, ElementType T>
requires(!std::is_integral_v<T>) Scalar<T> length(const vec<N, T>& a,
                                                  std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return detail::scalar<T>(detail::sqrt(detail::dot_refs(a.refs(), a.refs(), loc), loc));
}
/// a / length(a); the zero vector stays zero (as in Warp).
template <int N, ElementType T>
requires(!std::is_integral_v<T>) vec<N, T> normalize(
    const vec<N, T>& a, std::source_location s = std::source_location::current()) {
    using namespace detail;
    const auto loc = Loc::from(s);
    const Ref len = sqrt(dot_refs(a.refs(), a.refs(), loc), loc);
    const Ref zero = constant<T>(0, loc);
    const Ref positive = emit_binary(BinaryOp::Gt, len, zero, loc);
    return vec<N, T>::map([&](int i) { return emit_select(positive, div(a.ref(i), len, loc), zero, loc); });
}

}  // namespace weft
