// Determinants and inverses of 2x2, 3x3 and 4x4 traced matrices, by cofactors in a fixed order.
#pragma once

#include "weft/mat.hpp"

namespace weft {

namespace detail {

/// The scalar steps of one cofactor formula, all at the user's line.
struct Cofactors {
    Loc loc;
    Ref mul(Ref a, Ref b) const { return detail::mul(a, b, loc); }
    /// a*d - b*c
    Ref det2(Ref a, Ref b, Ref c, Ref d) const { return sub(mul(a, d), mul(b, c), loc); }
    /// x*p - y*q + z*r
    Ref alt3(Ref x, Ref p, Ref y, Ref q, Ref z, Ref r) const {
        return add(sub(mul(x, p), mul(y, q), loc), mul(z, r), loc);
    }
};

/// The 2x2 minors of a 4x4 matrix's top two rows (s) and bottom two rows (c): its determinant and
/// its inverse share them, so an inverse computes them once.
struct Minors4 {
    Ref s0, s1, s2, s3, s4, s5, c0, c1, c2, c3, c4, c5;  // computed in this order
    template <class At>
    Minors4(const Cofactors& f, At a)
        : s0(f.det2(a(0, 0), a(0, 1), a(1, 0), a(1, 1))),
          s1(f.det2(a(0, 0), a(0, 2), a(1, 0), a(1, 2))),
          s2(f.det2(a(0, 0), a(0, 3), a(1, 0), a(1, 3))),
          s3(f.det2(a(0, 1), a(0, 2), a(1, 1), a(1, 2))),
          s4(f.det2(a(0, 1), a(0, 3), a(1, 1), a(1, 3))),
          s5(f.det2(a(0, 2), a(0, 3), a(1, 2), a(1, 3))),
          c0(f.det2(a(2, 0), a(2, 1), a(3, 0), a(3, 1))),
          c1(f.det2(a(2, 0), a(2, 2), a(3, 0), a(3, 2))),
          c2(f.det2(a(2, 0), a(2, 3), a(3, 0), a(3, 3))),
          c3(f.det2(a(2, 1), a(2, 2), a(3, 1), a(3, 2))),
          c4(f.det2(a(2, 1), a(2, 3), a(3, 1), a(3, 3))),
          c5(f.det2(a(2, 2), a(2, 3), a(3, 2), a(3, 3))) {}
    Ref determinant(const Cofactors& f) const {
        const Ref first = f.alt3(s0, c5, s1, c4, s2, c3);
        const Ref second = f.alt3(s3, c2, s4, c1, s5, c0);
        return add(first, second, f.loc);
    }
};

}  // namespace detail

/// The determinant of a 2 x 2, 3 x 3 or 4 x 4 matrix, by cofactors in a fixed order.
template <int N, ElementType T>
requires(N >= 2 && N <= 4) Scalar<T> determinant(const mat<N, N, T>& m,
                                                 std::source_location s = std::source_location::current()) {
    const detail::Cofactors f{detail::Loc::from(s)};
    auto a = [&](int i, int j) { return m.ref(i, j); };
    if constexpr (N == 2) {
        return detail::scalar<T>(f.det2(a(0, 0), a(0, 1), a(1, 0), a(1, 1)));
    } else if constexpr (N == 3) {
        return detail::scalar<T>(f.alt3(a(0, 0), f.det2(a(1, 1), a(1, 2), a(2, 1), a(2, 2)), a(0, 1),
                                        f.det2(a(1, 0), a(1, 2), a(2, 0), a(2, 2)), a(0, 2),
                                        f.det2(a(1, 0), a(1, 1), a(2, 0), a(2, 1))));
    } else {
        return detail::scalar<T>(detail::Minors4(f, a).determinant(f));
    }
}

/// The inverse matrix (adjugate / determinant). A singular matrix gives non-finite entries.
template <int N, ElementType T>
requires(N >= 2 && N <= 4 && !std::is_integral_v<T>) mat<N, N, T> inverse(
    const mat<N, N, T>& m, std::source_location s = std::source_location::current()) {
    using detail::Ref;
    const detail::Cofactors f{detail::Loc::from(s)};
    const auto loc = f.loc;
    auto a = [&](int i, int j) { return m.ref(i, j); };
    std::array<Ref, N * N> adj;
    Ref det;
    if constexpr (N < 4) det = detail::Access::ref(determinant(m, s));
    if constexpr (N == 2) {
        adj = {detail::own(a(1, 1), loc), detail::neg(a(0, 1), loc), detail::neg(a(1, 0), loc),
               detail::own(a(0, 0), loc)};
    } else if constexpr (N == 3) {
        adj = {f.det2(a(1, 1), a(1, 2), a(2, 1), a(2, 2)), f.det2(a(0, 2), a(0, 1), a(2, 2), a(2, 1)),
               f.det2(a(0, 1), a(0, 2), a(1, 1), a(1, 2)), f.det2(a(1, 2), a(1, 0), a(2, 2), a(2, 0)),
               f.det2(a(0, 0), a(0, 2), a(2, 0), a(2, 2)), f.det2(a(0, 2), a(0, 0), a(1, 2), a(1, 0)),
               f.det2(a(1, 0), a(1, 1), a(2, 0), a(2, 1)), f.det2(a(0, 1), a(0, 0), a(2, 1), a(2, 0)),
               f.det2(a(0, 0), a(0, 1), a(1, 0), a(1, 1))};
    } else {
        const detail::Minors4 minors(f, a);
        det = minors.determinant(f);
        const auto& [s0, s1, s2, s3, s4, s5, c0, c1, c2, c3, c4, c5] = minors;
        auto pos = [&](Ref x, Ref p, Ref y, Ref q, Ref z, Ref r) { return f.alt3(x, p, y, q, z, r); };
        auto negated = [&](Ref x, Ref p, Ref y, Ref q, Ref z, Ref r) {
            return detail::neg(f.alt3(x, p, y, q, z, r), loc);
        };
        adj = {pos(a(1, 1), c5, a(1, 2), c4, a(1, 3), c3),     negated(a(0, 1), c5, a(0, 2), c4, a(0, 3), c3),
               pos(a(3, 1), s5, a(3, 2), s4, a(3, 3), s3),     negated(a(2, 1), s5, a(2, 2), s4, a(2, 3), s3),
               negated(a(1, 0), c5, a(1, 2), c2, a(1, 3), c1), pos(a(0, 0), c5, a(0, 2), c2, a(0, 3), c1),
               negated(a(3, 0), s5, a(3, 2), s2, a(3, 3), s1), pos(a(2, 0), s5, a(2, 2), s2, a(2, 3), s1),
               pos(a(1, 0), c4, a(1, 1), c2, a(1, 3), c0),     negated(a(0, 0), c4, a(0, 1), c2, a(0, 3), c0),
               pos(a(3, 0), s4, a(3, 1), s2, a(3, 3), s0),     negated(a(2, 0), s4, a(2, 1), s2, a(2, 3), s0),
               negated(a(1, 0), c3, a(1, 1), c1, a(1, 2), c0), pos(a(0, 0), c3, a(0, 1), c1, a(0, 2), c0),
               negated(a(3, 0), s3, a(3, 1), s1, a(3, 2), s0), pos(a(2, 0), s3, a(2, 1), s1, a(2, 2), s0)};
    }
    std::array<Ref, N * N> out;
    for (int k = 0; k < N * N; ++k) out[k] = detail::div(adj[k], det, loc);
    return mat<N, N, T>(detail::FromRefs{}, out);
}

}  // namespace weft
