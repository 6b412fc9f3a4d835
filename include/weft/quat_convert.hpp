// Quaternions from rotation matrices and spherical interpolation (quat_from_matrix, quat_slerp).
#pragma once

#include "weft/detail/sin_cos.hpp"
#include "weft/quat.hpp"

namespace weft {

namespace detail {

/// asin(z) for 0 <= z <= 0.5 by its Taylor series z * sum c_k z^(2k), c_k = (2k)! / (4^k (k!)^2
/// (2k + 1)), with enough terms for T's precision (the first term left out is below half an ulp
/// at z = 0.5), evaluated by Horner's rule.
template <ElementType T>
Ref asin_series(Ref z, Loc loc) {
    constexpr int terms = sizeof(T) <= 2 ? 7 : sizeof(T) <= 4 ? 13 : 27;
    std::array<double, terms> c{};
    c[0] = 1;
    for (int k = 1; k < terms; ++k)
        c[k] = c[k - 1] * (2.0 * k - 1) * (2.0 * k - 1) / (2.0 * k * (2.0 * k + 1));
    const Ref z2 = mul(z, z, loc);
    Ref p = constant<T>(c[terms - 1], loc);
    for (int k = terms - 2; k >= 0; --k) p = add(mul(p, z2, loc), constant<T>(c[k], loc), loc);
    return mul(z, p, loc);
}

/// acos(x) for 0 <= x <= 1 from + - * / and sqrt only: pi/2 - asin(x) up to x = 0.5, else
/// 2 asin(sqrt((1 - x) / 2)), which stays accurate near x = 1.
template <ElementType T>
Ref acos_unit(Ref x, Loc loc) {
    const Ref half = constant<T>(0.5, loc);
    const Ref small = emit_binary(BinaryOp::Le, x, half, loc);
    const Ref far = sqrt(mul(sub(constant<T>(1, loc), x, loc), half, loc), loc);
    const Ref a = asin_series<T>(emit_select(small, x, far, loc), loc);
    return emit_select(small, sub(constant<T>(1.5707963267948966, loc), a, loc), add(a, a, loc), loc);
}

}  // namespace detail

/// The unit quaternion of the rotation matrix `m` (Shepperd's method: the largest of w, x, y, z
/// is found from the diagonal and the rest from it; every case is computed and one selected).
template <ElementType T>
quat_t<T> quat_from_matrix(const mat<3, 3, T>& m, std::source_location s = std::source_location::current()) {
    using namespace detail;
    const auto loc = Loc::from(s);
    auto a = [&](int i, int j) { return m.ref(i, j); };
    const Ref one = constant<T>(1, loc), two = constant<T>(2, loc), quarter = constant<T>(0.25, loc);
    // Case `big` (3 = w, else the axis) from its scale S = 2 sqrt(1 + d) with d from the diagonal.
    auto candidate = [&](int big, Ref d) {
        const Ref scale = mul(sqrt(add(one, d, loc), loc), two, loc);
        auto over = [&](Ref v) { return div(v, scale, loc); };
        const Ref wx = sub(a(2, 1), a(1, 2), loc), wy = sub(a(0, 2), a(2, 0), loc),
                  wz = sub(a(1, 0), a(0, 1), loc);
        const Ref xy = add(a(0, 1), a(1, 0), loc), xz = add(a(0, 2), a(2, 0), loc),
                  yz = add(a(1, 2), a(2, 1), loc);
        const Ref q = mul(quarter, scale, loc);
        switch (big) {
            case 3: return std::array<Ref, 4>{over(wx), over(wy), over(wz), q};
            case 0: return std::array<Ref, 4>{q, over(xy), over(xz), over(wx)};
            case 1: return std::array<Ref, 4>{over(xy), q, over(yz), over(wy)};
            default: return std::array<Ref, 4>{over(xz), over(yz), q, over(wz)};
        }
    };
    const Ref trace = add(add(a(0, 0), a(1, 1), loc), a(2, 2), loc);
    const auto qw = candidate(3, trace);
    const auto qx = candidate(0, sub(sub(a(0, 0), a(1, 1), loc), a(2, 2), loc));
    const auto qy = candidate(1, sub(sub(a(1, 1), a(0, 0), loc), a(2, 2), loc));
    const auto qz = candidate(2, sub(sub(a(2, 2), a(0, 0), loc), a(1, 1), loc));
    const Ref zero = constant<T>(0, loc);
    const Ref use_w = emit_binary(BinaryOp::Gt, trace, zero, loc);
    const Ref use_x = emit_binary(BinaryOp::And, emit_binary(BinaryOp::Gt, a(0, 0), a(1, 1), loc),
                                  emit_binary(BinaryOp::Gt, a(0, 0), a(2, 2), loc), loc);
    const Ref use_y = emit_binary(BinaryOp::Gt, a(1, 1), a(2, 2), loc);
    return quat_t<T>::map([&](int i) {
        const Ref yz = emit_select(use_y, qy[i], qz[i], loc);
        return emit_select(use_w, qw[i], emit_select(use_x, qx[i], yz, loc), loc);
    });
}

/// Spherical linear interpolation from q0 (t = 0) to q1 (t = 1) along the shorter arc (q1 is
/// negated when dot(q0, q1) < 0, as in GLM and Eigen). acos and sin are built of + - * /, sqrt
/// and floor, so the bits are the same on every device.
template <ElementType T>
quat_t<T> quat_slerp(const quat_t<T>& q0, const quat_t<T>& q1, const detail::LocatedOf<T>& t,
                     std::source_location s = std::source_location::current()) {
    using namespace detail;
    const auto loc = Loc::from(s);
    const Ref zero = constant<T>(0, loc), one = constant<T>(1, loc);
    const Ref d = dot_refs(q0.refs(), q1.refs(), loc);
    const Ref flip = emit_binary(BinaryOp::Lt, d, zero, loc);
    const Ref cos_theta = emit_binary(BinaryOp::Min, emit_select(flip, neg(d, loc), d, loc), one, loc);
    const Ref theta = acos_unit<T>(cos_theta, loc);
    const Ref sin_theta = sin_cos<T>(theta, loc).first;
    const Ref one_minus_t = sub(one, t.ref, loc);
    const Ref moving = emit_binary(BinaryOp::Gt, sin_theta, zero, loc);
    auto weight = [&](Ref f) {
        const Ref w = div(sin_cos<T>(mul(f, theta, loc), loc).first, sin_theta, loc);
        return emit_select(moving, w, f, loc);  // equal quaternions: plain interpolation
    };
    const Ref w0 = weight(one_minus_t), w1 = weight(t.ref);
    return quat_t<T>::map([&](int i) {
        const Ref b = emit_select(flip, neg(q1.ref(i), loc), q1.ref(i), loc);
        return add(mul(w0, q0.ref(i), loc), mul(w1, b, loc), loc);
    });
}

}  // namespace weft
