// Traced matrices: weft::mat<R, C, T> (mat22, mat33, mat44, mat33d, ...), R rows of vec<C, T>,
// with products, transpose, determinant and inverse expanded into scalar IR (docs/design/0015).
#pragma once

#include <array>
#include <utility>

#include "weft/vec.hpp"

namespace weft {

namespace detail {

template <ElementType T, int R, int C, size_t... I>
std::array<vec<C, T>, R> rows_of(const std::array<Ref, R * C>& refs, std::index_sequence<I...>) {
    auto row = [&](size_t i) {
        std::array<Ref, C> r;
        for (int j = 0; j < C; ++j) r[j] = refs[i * C + j];
        return r;
    };
    return {vec<C, T>(FromRefs{}, row(I))...};
}

template <class... L>
auto owned(Loc loc, const L&... located) {
    return std::array<Ref, sizeof...(L)>{own(located.ref, loc)...};
}

}  // namespace detail

/// An R x C matrix of traced scalars, stored as rows: m[i] is row i (a vec<C, T>), m[i][j] the
/// entry in row i and column j. Entries are mutable locals, as a vec's components are.
template <int R, int C, ElementType T>
class mat {
    static_assert(R >= 1 && C >= 1, "a weft::mat has at least one row and one column");

public:
    /// The entries' scalar type.
    using value_type = T;
    /// A row: vec<C, T>.
    using row_type = vec<C, T>;
    /// R, the number of rows.
    static constexpr int rows = R;
    /// C, the number of columns.
    static constexpr int cols = C;

    /// A zero matrix.
    mat(std::source_location s = std::source_location::current())
        : mat(detail::FromRefs{},
              fill_refs(detail::constant<T>(0, detail::Loc::from(s)), detail::Loc::from(s))) {}
    /// From entries in row order: mat22(m00, m01, m10, m11), mat33 (9 entries), mat44 (16).
    ///@{
    mat(const Located<T>& a, const Located<T>& b, const Located<T>& c,
        const Located<T>& d) requires(R* C == 4)
        : mat(detail::FromRefs{}, detail::owned(a.loc, a, b, c, d)) {}
    mat(const Located<T>& a, const Located<T>& b, const Located<T>& c, const Located<T>& d,
        const Located<T>& e, const Located<T>& f, const Located<T>& g, const Located<T>& h,
        const Located<T>& i) requires(R* C == 9)
        : mat(detail::FromRefs{}, detail::owned(a.loc, a, b, c, d, e, f, g, h, i)) {}
    mat(const Located<T>& a, const Located<T>& b, const Located<T>& c, const Located<T>& d,
        const Located<T>& e, const Located<T>& f, const Located<T>& g, const Located<T>& h,
        const Located<T>& i, const Located<T>& j, const Located<T>& k, const Located<T>& l,
        const Located<T>& m, const Located<T>& n, const Located<T>& o,
        const Located<T>& p) requires(R* C == 16)
        : mat(detail::FromRefs{}, detail::owned(a.loc, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)) {}
    ///@}
    /// From rows.
    ///@{
    mat(const At<row_type>& r0, const row_type& r1) requires(R == 2)
        : mat(detail::FromRefs{}, rows_refs(r0.loc, {&r0.value, &r1})) {}
    mat(const At<row_type>& r0, const row_type& r1, const row_type& r2) requires(R == 3)
        : mat(detail::FromRefs{}, rows_refs(r0.loc, {&r0.value, &r1, &r2})) {}
    mat(const At<row_type>& r0, const row_type& r1, const row_type& r2, const row_type& r3) requires(R == 4)
        : mat(detail::FromRefs{}, rows_refs(r0.loc, {&r0.value, &r1, &r2, &r3})) {}
    ///@}
    /// A copy: fresh entries (mutable locals) equal to other's, traced at the caller's line.
    mat(const mat& other, std::source_location s = std::source_location::current())
        : mat(detail::FromRefs{},
              map_refs([&](int i, int j) { return detail::own(other.ref(i, j), detail::Loc::from(s)); })) {}
    /// Built from freshly traced entries in row order (used by the library's operators).
    mat(detail::FromRefs, const std::array<detail::Ref, R * C>& refs)
        : rows_(detail::rows_of<T, R, C>(refs, std::make_index_sequence<R>{})) {}

    /// Assigns other's entries to this matrix's, row by row.
    mat& operator=(const mat& other) {
        for (int i = 0; i < R; ++i) rows_[i] = other.rows_[i];
        return *this;
    }

    /// m[i]: row i (a checked C++ integer), so m[i][j] is one entry.
    row_type& operator[](const Component& i) {
        detail::check_component(i, R, "matrix row", "rows");
        return rows_[i.index];
    }
    /// m[i], read only.
    const row_type& operator[](const Component& i) const {
        detail::check_component(i, R, "matrix row", "rows");
        return rows_[i.index];
    }
    /// The traced value of entry (i, j), unchecked (used by the library's operators).
    detail::Ref ref(int i, int j) const { return rows_[i].ref(j); }
    /// The entries in row order (the packed layout of weft/layout.hpp).
    std::array<detail::Ref, R * C> refs() const {
        std::array<detail::Ref, R * C> r;
        for (int i = 0; i < R; ++i)
            for (int j = 0; j < C; ++j) r[i * C + j] = ref(i, j);
        return r;
    }

    /// A matrix whose entry (i, j) is f(i, j), computed in row order.
    template <class F>
    static mat map(F&& f) {
        return mat(detail::FromRefs{}, map_refs(f));
    }

    /// a + b, entry by entry.
    friend mat operator+(const At<mat>& a, const mat& b) {
        return map([&](int i, int j) { return detail::add(a.value.ref(i, j), b.ref(i, j), a.loc); });
    }
    /// a - b, entry by entry.
    friend mat operator-(const At<mat>& a, const mat& b) {
        return map([&](int i, int j) { return detail::sub(a.value.ref(i, j), b.ref(i, j), a.loc); });
    }
    /// Every entry negated.
    friend mat operator-(const At<mat>& a) {
        return map([&](int i, int j) { return detail::neg(a.value.ref(i, j), a.loc); });
    }
    /// Every entry times the scalar s.
    friend mat operator*(const At<mat>& a, const Located<T>& s) {
        return map([&](int i, int j) { return detail::mul(a.value.ref(i, j), s.ref, a.loc); });
    }
    /// The scalar s times every entry.
    friend mat operator*(const Located<T>& s, const mat& a) {
        return map([&](int i, int j) { return detail::mul(s.ref, a.ref(i, j), s.loc); });
    }
    /// Every entry divided by the scalar s.
    friend mat operator/(const At<mat>& a, const Located<T>& s) {
        return map([&](int i, int j) { return detail::div(a.value.ref(i, j), s.ref, a.loc); });
    }
    /// Matrix times column vector: an R-vector (each entry a dot product in column order).
    friend vec<R, T> operator*(const At<mat>& m, const vec<C, T>& v) {
        return vec<R, T>::map(
            [&](int i) { return detail::dot_refs(m.value.rows_[i].refs(), v.refs(), m.loc); });
    }
    /// Row vector times matrix: v^T m, a C-vector.
    friend vec<C, T> operator*(const At<vec<R, T>>& v, const mat& m) {
        return vec<C, T>::map([&](int j) { return detail::dot_refs(v.value.refs(), m.column(j), v.loc); });
    }
    /// Matrix product: the inner dimensions must agree, or the code does not compile.
    template <int K>
    friend mat<R, K, T> operator*(const At<mat>& a, const mat<C, K, T>& b) {
        return mat<R, K, T>::map(
            [&](int i, int j) { return detail::dot_refs(a.value.rows_[i].refs(), b.column(j), a.loc); });
    }

    /// Adds b entry by entry.
    mat& operator+=(const At<mat>& b) {
        for (int i = 0; i < R; ++i) rows_[i] += At<row_type>(b.value.rows_[i], b.loc);
        return *this;
    }
    /// Subtracts b entry by entry.
    mat& operator-=(const At<mat>& b) {
        for (int i = 0; i < R; ++i) rows_[i] -= At<row_type>(b.value.rows_[i], b.loc);
        return *this;
    }
    /// Multiplies every entry by the scalar s.
    mat& operator*=(const Located<T>& s) {
        for (int i = 0; i < R; ++i) rows_[i] *= s;
        return *this;
    }
    /// Divides every entry by the scalar s.
    mat& operator/=(const Located<T>& s) {
        for (int i = 0; i < R; ++i) rows_[i] /= s;
        return *this;
    }

    /// The traced values of column j, top to bottom, unchecked (used by the library's operators).
    std::array<detail::Ref, R> column(int j) const {
        std::array<detail::Ref, R> c;
        for (int i = 0; i < R; ++i) c[i] = ref(i, j);
        return c;
    }

private:
    template <class F>
    static std::array<detail::Ref, R * C> map_refs(F&& f) {
        std::array<detail::Ref, R * C> r;
        for (int i = 0; i < R; ++i)
            for (int j = 0; j < C; ++j) r[i * C + j] = f(i, j);
        return r;
    }
    static std::array<detail::Ref, R * C> fill_refs(detail::Ref value, detail::Loc loc) {
        return map_refs([&](int, int) { return detail::own(value, loc); });
    }
    static std::array<detail::Ref, R * C> rows_refs(detail::Loc loc, std::array<const row_type*, R> rows) {
        return map_refs([&](int i, int j) { return detail::own(rows[i]->ref(j), loc); });
    }

    std::array<row_type, R> rows_;
    template <int, int, ElementType>
    friend class mat;
};

using mat22 = mat<2, 2, float>;    ///< 2 x 2 float.
using mat33 = mat<3, 3, float>;    ///< 3 x 3 float.
using mat44 = mat<4, 4, float>;    ///< 4 x 4 float.
using mat22f = mat22;              ///< mat22.
using mat33f = mat33;              ///< mat33.
using mat44f = mat44;              ///< mat44.
using mat22d = mat<2, 2, double>;  ///< 2 x 2 double.
using mat33d = mat<3, 3, double>;  ///< 3 x 3 double.
using mat44d = mat<4, 4, double>;  ///< 4 x 4 double.

/// The N x N identity matrix: weft::identity<3>() (float) or weft::identity<3, double>().
template <int N, ElementType T = float>
mat<N, N, T> identity(std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<N, N, T>::map([&](int i, int j) { return detail::constant<T>(i == j ? 1 : 0, loc); });
}

/// The diagonal matrix with `d` on its diagonal.
template <int N, ElementType T>
mat<N, N, T> diag(const vec<N, T>& d, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<N, N, T>::map(
        [&](int i, int j) { return i == j ? detail::own(d.ref(i), loc) : detail::constant<T>(0, loc); });
}

/// The transpose: the C x R matrix whose entry (i, j) is m's (j, i).
template <int R, int C, ElementType T>
mat<C, R, T> transpose(const mat<R, C, T>& m, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<C, R, T>::map([&](int i, int j) { return detail::own(m.ref(j, i), loc); });
}

/// The outer product a b^T: entry (i, j) is a[i] * b[j].
template <int R, int C, ElementType T>
mat<R, C, T> outer(const vec<R, T>& a, const vec<C, T>& b,
                   std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<R, C, T>::map([&](int i, int j) { return detail::mul(a.ref(i), b.ref(j), loc); });
}

/// The sum of the diagonal entries, added in order.
template <int N, ElementType T>
Scalar<T> trace(const mat<N, N, T>& m, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    detail::Ref sum = detail::own(m.ref(0, 0), loc);
    for (int i = 1; i < N; ++i) sum = detail::add(sum, m.ref(i, i), loc);
    return detail::scalar<T>(sum);
}

///@{
/// Component-wise product, min, max and abs of matrices.
template <int R, int C, ElementType T>
mat<R, C, T> cw_mul(const mat<R, C, T>& a, const mat<R, C, T>& b,
                    std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<R, C, T>::map([&](int i, int j) { return detail::mul(a.ref(i, j), b.ref(i, j), loc); });
}
template <int R, int C, ElementType T>
mat<R, C, T> min(const mat<R, C, T>& a, const mat<R, C, T>& b,
                 std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<R, C, T>::map([&](int i, int j) {
        return detail::emit_binary(detail::BinaryOp::Min, a.ref(i, j), b.ref(i, j), loc);
    });
}
template <int R, int C, ElementType T>
mat<R, C, T> max(const mat<R, C, T>& a, const mat<R, C, T>& b,
                 std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<R, C, T>::map([&](int i, int j) {
        return detail::emit_binary(detail::BinaryOp::Max, a.ref(i, j), b.ref(i, j), loc);
    });
}
template <int R, int C, ElementType T>
mat<R, C, T> abs(const mat<R, C, T>& a, std::source_location s = std::source_location::current()) {
    const auto loc = detail::Loc::from(s);
    return mat<R, C, T>::map(
        [&](int i, int j) { return detail::emit_math(detail::MathOp::Abs, a.ref(i, j), loc); });
}
///@}

}  // namespace weft
