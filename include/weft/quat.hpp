// Traced quaternions: weft::quat_t<T> (quat, quatd) stored x, y, z, w, with the rotation
// builtins of Warp (quat_rotate, quat_from_axis_angle, quat_slerp, ...), expanded into scalar IR.
#pragma once

#include "weft/detail/sin_cos.hpp"
#include "weft/mat.hpp"

namespace weft {

/// A quaternion x i + y j + z k + w, with the Hamilton product as `*`, + and -, and scalar * and
/// /. Components are mutable locals, as a vec's are. dot, length, length_sq and normalize treat it
/// as a 4-vector.
template <ElementType T>
class quat_t : public detail::VecComponents<4, T> {
    using Vec = vec<4, T>;

public:
    /// The components' scalar type.
    using value_type = T;

    /// The zero quaternion (quat_identity() is the identity rotation).
    quat_t(std::source_location s = std::source_location::current())
        : quat_t(detail::FromRefs{}, Vec(s).refs()) {}
    /// From components x, y, z (the vector part) and w (the real part).
    quat_t(const Located<T>& x, const Located<T>& y, const Located<T>& z, const Located<T>& w)
        : quat_t(detail::FromRefs{}, Vec(x, y, z, w).refs()) {}
    /// A copy: fresh components (mutable locals) equal to other's, traced at the caller's line.
    quat_t(const quat_t& other, std::source_location s = std::source_location::current())
        : quat_t(detail::FromRefs{}, Vec(other.view(), s).refs()) {}
    /// The quaternion with components v.x, v.y, v.z, v.w.
    explicit quat_t(const Vec& v, std::source_location s = std::source_location::current())
        : quat_t(detail::FromRefs{}, Vec(v, s).refs()) {}
    /// Built from freshly traced components x, y, z, w (used by the library's operators).
    quat_t(detail::FromRefs, const std::array<detail::Ref, 4>& refs) : detail::VecComponents<4, T>(refs) {}

    /// Assigns other's components to this quaternion's, at the line traced last.
    quat_t& operator=(const quat_t& other) {
        const auto loc = detail::last_loc();
        for (int i = 0; i < 4; ++i) detail::emit_assign(ref(i), other.ref(i), loc);
        return *this;
    }
    /// q[i]: component i (a checked C++ integer; 0 is x, 3 is w).
    Scalar<T>& operator[](const Component& i) {
        detail::check_component(i, 4, "quaternion component", "components");
        return this->at(i.index);
    }
    /// q[i], read only.
    const Scalar<T>& operator[](const Component& i) const {
        detail::check_component(i, 4, "quaternion component", "components");
        return this->at(i.index);
    }
    /// The traced value of component i, unchecked (used by the library's operators).
    detail::Ref ref(int i) const { return detail::Access::ref(this->at(i)); }
    /// The traced values of x, y, z, w (used by the library's operators).
    std::array<detail::Ref, 4> refs() const { return {ref(0), ref(1), ref(2), ref(3)}; }
    /// The components as a vec4 that shares them (read-only use inside the library).
    Vec view() const { return Vec(detail::FromRefs{}, refs()); }
    /// A quaternion whose component i is f(i), computed for i = 0 to 3 in order.
    template <class F>
    static quat_t map(F&& f) {
        return quat_t(detail::FromRefs{}, {f(0), f(1), f(2), f(3)});
    }

    /// The Hamilton product: rotating by `b`, then by `a`.
    friend quat_t operator*(const At<quat_t>& a, const quat_t& b) {
        using namespace detail;
        const auto& p = a.value;
        const Loc loc = a.loc;
        auto m = [&](int i, int j) { return mul(p.ref(i), b.ref(j), loc); };
        // x = pw bx + px bw + py bz - pz by, and cyclically for y and z.
        auto part = [&](int i) {
            const int j = (i + 1) % 3, k = (i + 2) % 3;
            return sub(add(add(m(3, i), m(i, 3), loc), m(j, k), loc), m(k, j), loc);
        };
        return quat_t(FromRefs{}, {part(0), part(1), part(2),
                                   sub(sub(sub(m(3, 3), m(0, 0), loc), m(1, 1), loc), m(2, 2), loc)});
    }
    /// a + b, component by component.
    friend quat_t operator+(const At<quat_t>& a, const quat_t& b) {
        return map([&](int i) { return detail::add(a.value.ref(i), b.ref(i), a.loc); });
    }
    /// a - b, component by component.
    friend quat_t operator-(const At<quat_t>& a, const quat_t& b) {
        return map([&](int i) { return detail::sub(a.value.ref(i), b.ref(i), a.loc); });
    }
    /// Every component negated.
    friend quat_t operator-(const At<quat_t>& a) {
        return map([&](int i) { return detail::neg(a.value.ref(i), a.loc); });
    }
    /// Every component times the scalar s.
    friend quat_t operator*(const At<quat_t>& a, const Located<T>& s) {
        return map([&](int i) { return detail::mul(a.value.ref(i), s.ref, a.loc); });
    }
    /// The scalar s times every component.
    friend quat_t operator*(const Located<T>& s, const quat_t& a) {
        return map([&](int i) { return detail::mul(s.ref, a.ref(i), s.loc); });
    }
    /// Every component divided by the scalar s.
    friend quat_t operator/(const At<quat_t>& a, const Located<T>& s) {
        return map([&](int i) { return detail::div(a.value.ref(i), s.ref, a.loc); });
    }
};

/// select(cond, a, b) of quaternions: both are evaluated; the result picks one.
template <ElementType T>
quat_t<T> select(const Located<bool>& cond, const quat_t<T>& if_true, const quat_t<T>& if_false,
                 std::source_location s = std::source_location::current()) {
    return quat_t<T>(detail::FromRefs{}, select(cond, if_true.view(), if_false.view(), s).refs());
}

/// The 4-vector dot product x*x' + y*y' + z*z' + w*w'.
template <ElementType T>
Scalar<T> dot(const quat_t<T>& a, const quat_t<T>& b,
              std::source_location s = std::source_location::current()) {
    return dot(a.view(), b.view(), s);
}
/// dot(a, a).
template <ElementType T>
Scalar<T> length_sq(const quat_t<T>& a, std::source_location s = std::source_location::current()) {
    return dot(a.view(), a.view(), s);
}
/// The 4-vector length, sqrt(dot(a, a)).
template <ElementType T>
Scalar<T> length(const quat_t<T>& a, std::source_location s = std::source_location::current()) {
    return length(a.view(), s);
}
/// a / length(a) (the zero quaternion stays zero, as normalize of a vec).
template <ElementType T>
quat_t<T> normalize(const quat_t<T>& a, std::source_location s = std::source_location::current()) {
    return quat_t<T>(detail::FromRefs{}, normalize(a.view(), s).refs());
}

using quat = quat_t<float>;    ///< float components.
using quatf = quat;            ///< quat.
using quatd = quat_t<double>;  ///< double components.

/// The identity rotation (0, 0, 0, 1).
template <ElementType T = float>
quat_t<T> quat_identity(std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return quat_t<T>(detail::FromRefs{}, {detail::constant<T>(0, loc), detail::constant<T>(0, loc),
                                          detail::constant<T>(0, loc), detail::constant<T>(1, loc)});
}

/// (-x, -y, -z, w).
template <ElementType T>
quat_t<T> quat_conjugate(const quat_t<T>& q, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return quat_t<T>(detail::FromRefs{}, {detail::neg(q.ref(0), loc), detail::neg(q.ref(1), loc),
                                          detail::neg(q.ref(2), loc), detail::own(q.ref(3), loc)});
}

/// The multiplicative inverse, conjugate / |q|^2 (Warp's quat_inverse is the conjugate alone,
/// which equals this for unit quaternions).
template <ElementType T>
quat_t<T> quat_inverse(const quat_t<T>& q, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    const detail::Ref n = detail::dot_refs(q.refs(), q.refs(), loc);
    const quat_t<T> c = quat_conjugate(q, s);
    return quat_t<T>::map([&](int i) { return detail::div(c.ref(i), n, loc); });
}

namespace detail {

/// v (2w^2 - 1) + sign * 2w (u x v) + 2 u (u . v), with u = (x, y, z): the rotation of v by the
/// unit quaternion q (sign = +1) or by its inverse (sign = -1).
template <ElementType T>
vec<3, T> rotate(const quat_t<T>& q, const vec<3, T>& v, bool inverse, Loc loc) {
    const std::array<Ref, 3> u = {q.ref(0), q.ref(1), q.ref(2)};
    const Ref w = q.ref(3);
    const Ref two = constant<T>(2, loc);
    const Ref a = sub(mul(mul(two, w, loc), w, loc), constant<T>(1, loc), loc);
    const Ref b = mul(two, w, loc);
    const Ref c = mul(two, dot_refs(u, v.refs(), loc), loc);
    auto cross_i = [&](int i) {
        const int j = (i + 1) % 3, k = (i + 2) % 3;
        return sub(mul(u[j], v.ref(k), loc), mul(u[k], v.ref(j), loc), loc);
    };
    return vec<3, T>::map([&](int i) {
        const Ref turned = mul(b, cross_i(i), loc);
        const Ref r =
            inverse ? sub(mul(v.ref(i), a, loc), turned, loc) : add(mul(v.ref(i), a, loc), turned, loc);
        return add(r, mul(u[i], c, loc), loc);
    });
}

}  // namespace detail

/// v rotated by the unit quaternion q: q v q*.
template <ElementType T>
vec<3, T> quat_rotate(const quat_t<T>& q, const vec<3, T>& v,
                      std::source_location s = std::source_location::current()) {
    return detail::rotate(q, v, false, detail::Loc::from(s));
}
/// v rotated by the inverse of the unit quaternion q: q* v q.
template <ElementType T>
vec<3, T> quat_rotate_inv(const quat_t<T>& q, const vec<3, T>& v,
                          std::source_location s = std::source_location::current()) {
    return detail::rotate(q, v, true, detail::Loc::from(s));
}

/// The rotation by `angle` radians about the unit vector `axis`.
template <ElementType T>
quat_t<T> quat_from_axis_angle(const vec<3, T>& axis, const detail::LocatedOf<T>& angle,
                               std::source_location s = std::source_location::current()) {
    using namespace detail;
    const auto loc = Loc::from(s);
    const auto [sin_half, cos_half] = sin_cos<T>(mul(angle.ref, constant<T>(0.5, loc), loc), loc);
    return quat_t<T>(FromRefs{}, {mul(axis.ref(0), sin_half, loc), mul(axis.ref(1), sin_half, loc),
                                  mul(axis.ref(2), sin_half, loc), own(cos_half, loc)});
}

/// The rotation matrix of the unit quaternion q (R v == quat_rotate(q, v)).
template <ElementType T>
mat<3, 3, T> quat_to_matrix(const quat_t<T>& q, std::source_location s = std::source_location::current()) {
    using namespace detail;
    const auto loc = Loc::from(s);
    const Ref x = q.ref(0), y = q.ref(1), z = q.ref(2), w = q.ref(3);
    const Ref one = constant<T>(1, loc), two = constant<T>(2, loc);
    auto twice = [&](Ref a, Ref b) { return mul(two, mul(a, b, loc), loc); };
    // 1 - 2(a^2 + b^2)
    auto diagonal = [&](Ref a, Ref b) {
        return sub(one, mul(two, add(mul(a, a, loc), mul(b, b, loc), loc), loc), loc);
    };
    return mat<3, 3, T>(
        FromRefs{}, {diagonal(y, z), sub(twice(x, y), twice(z, w), loc), add(twice(x, z), twice(y, w), loc),
                     add(twice(x, y), twice(z, w), loc), diagonal(x, z), sub(twice(y, z), twice(x, w), loc),
                     sub(twice(x, z), twice(y, w), loc), add(twice(y, z), twice(x, w), loc), diagonal(x, y)});
}

}  // namespace weft
