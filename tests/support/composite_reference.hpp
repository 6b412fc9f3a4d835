// Host references in double for composite-value tests: vectors, row-major matrices, quaternions
// (x, y, z, w), written independently of the kernel-side formulas.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace weft::test::ref {

using V = std::vector<double>;

inline V slice(const V& in, int from, int n) {
    return V(in.begin() + from, in.begin() + from + n);
}
inline V cat(V a, const V& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}
inline double dot(const V& a, const V& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}
inline V cross(const V& a, const V& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline V scale(V a, double s) {
    for (auto& x : a) x *= s;
    return a;
}
inline V add(V a, const V& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
}
inline V sub(V a, const V& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] -= b[i];
    return a;
}

// Row-major r x c matrices.
inline V matmul(const V& a, const V& b, int r, int k, int c) {
    V out(size_t(r) * c, 0.0);
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j)
            for (int l = 0; l < k; ++l) out[i * c + j] += a[i * k + l] * b[l * c + j];
    return out;
}
inline V transpose(const V& a, int r, int c) {
    V out(a.size());
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j) out[j * r + i] = a[i * c + j];
    return out;
}
// Gauss-Jordan elimination with partial pivoting: {determinant, inverse}.
inline std::pair<double, V> det_inverse(V a, int n) {
    V inv(size_t(n) * n, 0.0);
    for (int i = 0; i < n; ++i) inv[i * n + i] = 1;
    double det = 1;
    for (int col = 0; col < n; ++col) {
        int pivot = col;
        for (int r = col + 1; r < n; ++r)
            if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
        if (pivot != col) {
            for (int j = 0; j < n; ++j) {
                std::swap(a[col * n + j], a[pivot * n + j]);
                std::swap(inv[col * n + j], inv[pivot * n + j]);
            }
            det = -det;
        }
        const double p = a[col * n + col];
        det *= p;
        for (int j = 0; j < n; ++j) {
            a[col * n + j] /= p;
            inv[col * n + j] /= p;
        }
        for (int r = 0; r < n; ++r) {
            if (r == col) continue;
            const double f = a[r * n + col];
            for (int j = 0; j < n; ++j) {
                a[r * n + j] -= f * a[col * n + j];
                inv[r * n + j] -= f * inv[col * n + j];
            }
        }
    }
    return {det, inv};
}

inline V qmul(const V& p, const V& q) {
    // (pw + pv)(qw + qv) = pw qw - pv.qv + pw qv + qw pv + pv x qv
    const V pv = slice(p, 0, 3), qv = slice(q, 0, 3);
    const V v = add(add(scale(qv, p[3]), scale(pv, q[3])), cross(pv, qv));
    return {v[0], v[1], v[2], p[3] * q[3] - dot(pv, qv)};
}
inline V qconj(const V& q) {
    return {-q[0], -q[1], -q[2], q[3]};
}
// q (v, 0) q^-1 for any nonzero q.
inline V qrotate(const V& q, const V& v) {
    const double n = dot(q, q);
    const V r = qmul(qmul(q, {v[0], v[1], v[2], 0}), scale(qconj(q), 1 / n));
    return slice(r, 0, 3);
}
// The matrix whose column j is the rotation of basis vector j.
inline V qmatrix(const V& q) {
    V m(9);
    for (int j = 0; j < 3; ++j) {
        V e(3, 0.0);
        e[j] = 1;
        const V c = qrotate(q, e);
        for (int i = 0; i < 3; ++i) m[i * 3 + j] = c[i];
    }
    return m;
}
inline V normalized(const V& v) {
    return scale(v, 1 / std::sqrt(dot(v, v)));
}

}  // namespace weft::test::ref
