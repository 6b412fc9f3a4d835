// Traced rigid transforms: weft::transform_t<T> (transform, transformd), a position p and a unit
// rotation q, with Warp's transform_point, transform_vector, transform_multiply, transform_inverse.
#pragma once

#include "weft/quat.hpp"

namespace weft {

/// The rigid motion x -> quat_rotate(q, x) + p. `p` and `q` are mutable members.
template <ElementType T>
class transform_t {
public:
    /// The components' scalar type.
    using value_type = T;

    /// The position (translation).
    vec<3, T> p;
    /// The rotation (a unit quaternion).
    quat_t<T> q;

    /// The transform with position `position` and rotation `rotation` (copied into its own locals).
    transform_t(const vec<3, T>& position, const quat_t<T>& rotation,
                std::source_location s = std::source_location::current())
        : p(position, s), q(rotation, s) {}
    /// A copy: fresh members equal to other's, traced at the caller's line.
    transform_t(const transform_t& other, std::source_location s = std::source_location::current())
        : p(other.p, s), q(other.q, s) {}
    /// Assigns other's p and q to this transform's.
    transform_t& operator=(const transform_t& other) {
        p = other.p;
        q = other.q;
        return *this;
    }

    /// a * b: b first, then a (transform_multiply).
    friend transform_t operator*(const At<transform_t>& a, const transform_t& b) {
        const auto loc = a.loc;
        const vec<3, T> turned = detail::rotate(a.value.q, b.p, false, loc);
        return transform_t(detail::FromRefs{}, At<vec<3, T>>(turned, loc) + a.value.p,
                           At<quat_t<T>>(a.value.q, loc) * b.q);
    }

    /// From freshly traced parts (used by the library's operators).
    transform_t(detail::FromRefs, const vec<3, T>& position, const quat_t<T>& rotation)
        : p(detail::FromRefs{}, position.refs()), q(detail::FromRefs{}, rotation.refs()) {}
    /// From freshly traced components in the packed order p.x, p.y, p.z, q.x, q.y, q.z, q.w.
    transform_t(detail::FromRefs, const std::array<detail::Ref, 7>& r)
        : p(detail::FromRefs{}, {r[0], r[1], r[2]}), q(detail::FromRefs{}, {r[3], r[4], r[5], r[6]}) {}
    /// The traced components in the packed order (used by the library's operators).
    std::array<detail::Ref, 7> refs() const {
        return {p.ref(0), p.ref(1), p.ref(2), q.ref(0), q.ref(1), q.ref(2), q.ref(3)};
    }
};

using transform = transform_t<float>;    ///< float components.
using transformf = transform;            ///< transform.
using transformd = transform_t<double>;  ///< double components.

/// The identity: position zero, rotation quat_identity().
template <ElementType T = float>
transform_t<T> transform_identity(std::source_location s = std::source_location::current()) {
    return transform_t<T>(detail::FromRefs{}, vec<3, T>(s), quat_identity<T>(s));
}

/// quat_rotate(t.q, point) + t.p.
template <ElementType T>
vec<3, T> transform_point(const transform_t<T>& t, const vec<3, T>& point,
                          std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return At<vec<3, T>>(detail::rotate(t.q, point, false, loc), loc) + t.p;
}
/// quat_rotate(t.q, v): a direction, so the position does not apply.
template <ElementType T>
vec<3, T> transform_vector(const transform_t<T>& t, const vec<3, T>& v,
                           std::source_location s = std::source_location::current()) {
    return detail::rotate(t.q, v, false, detail::Loc::from(s));
}
/// a * b: the motion b, then a.
template <ElementType T>
transform_t<T> transform_multiply(const transform_t<T>& a, const transform_t<T>& b,
                                  std::source_location s = std::source_location::current()) {
    return At<transform_t<T>>(a, s) * b;
}
/// The inverse motion: rotation conjugate(q) (q is a unit quaternion), position -rotate_inv(q, p).
template <ElementType T>
transform_t<T> transform_inverse(const transform_t<T>& t,
                                 std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return transform_t<T>(detail::FromRefs{}, -At<vec<3, T>>(detail::rotate(t.q, t.p, true, loc), loc),
                          quat_conjugate(t.q, s));
}

/// A copy of t.p.
template <ElementType T>
vec<3, T> transform_get_translation(const transform_t<T>& t,
                                    std::source_location s = std::source_location::current()) {
    return vec<3, T>(t.p, s);
}
/// A copy of t.q.
template <ElementType T>
quat_t<T> transform_get_rotation(const transform_t<T>& t,
                                 std::source_location s = std::source_location::current()) {
    return quat_t<T>(t.q, s);
}
/// Sets t.p = p.
template <ElementType T>
void transform_set_translation(transform_t<T>& t, const vec<3, T>& p) {
    t.p = p;
}
/// Sets t.q = q.
template <ElementType T>
void transform_set_rotation(transform_t<T>& t, const quat_t<T>& q) {
    t.q = q;
}

}  // namespace weft
