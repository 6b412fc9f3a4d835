// Vector and matrix operators and builtins in kernels, on float32, float64 and int32, against
// host references in double (exact for int32).
#include <gtest/gtest.h>

#include <weft/weft.hpp>

#include "support/composite_checks.hpp"
#include "support/composite_reference.hpp"

namespace {

using namespace weft::test;
namespace r = weft::test::ref;
using weft::mat;
using weft::vec;

template <class T>
using V3 = vec<3, T>;

// Operators and builtins defined for every element type.
template <class T>
std::vector<Check<T>> vector_checks() {
    std::vector<Check<T>> c;
    c.push_back({"vec_add_sub_neg", 6, 9,
                 [](const Io<T>& io) {
                     const auto a = io.template v<3>(0), b = io.template v<3>(3);
                     io.put(0, a + b);
                     io.put(3, a - b);
                     io.put(6, -a);
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 3), b = r::slice(in, 3, 3);
                     return r::cat(r::cat(r::add(a, b), r::sub(a, b)), r::scale(a, -1));
                 }});
    c.push_back({"vec_scalar_mul", 5, 8,
                 [](const Io<T>& io) {
                     const auto a = io.template v<4>(0);
                     io.put(0, a * io(4));
                     io.put(4, io(4) * a);
                 },
                 [](const r::V& in) {
                     const auto a = r::scale(r::slice(in, 0, 4), in[4]);
                     return r::cat(a, a);
                 }});
    c.push_back({"vec_dot_length_sq_cw", 4, 6,
                 [](const Io<T>& io) {
                     const auto a = io.template v<2>(0), b = io.template v<2>(2);
                     io.put(0, weft::dot(a, b));
                     io.put(1, weft::length_sq(a));
                     io.put(2, weft::cw_mul(a, b));
                     io.put(4, weft::min(a, b).x);
                     io.put(5, weft::max(a, b).y);
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 2), b = r::slice(in, 2, 2);
                     return r::V{r::dot(a, b), r::dot(a, a),         a[0] * b[0],
                                 a[1] * b[1],  std::min(a[0], b[0]), std::max(a[1], b[1])};
                 }});
    c.push_back({"vec_cross_abs_index", 6, 7,
                 [](const Io<T>& io) {
                     const auto a = io.template v<3>(0), b = io.template v<3>(3);
                     io.put(0, weft::cross(a, b));
                     io.put(3, weft::abs(a));
                     io.put(6, a[1] + weft::get<2>(b) + b.z);
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 3), b = r::slice(in, 3, 3);
                     return r::cat(r::cat(r::cross(a, b), {std::abs(a[0]), std::abs(a[1]), std::abs(a[2])}),
                                   {a[1] + 2 * b[2]});
                 }});
    c.push_back({"mat_vec_products", 9 + 3, 6,
                 [](const Io<T>& io) {
                     const auto m = io.template mx<3, 3>(0);
                     const auto v = io.template v<3>(9);
                     io.put(0, m * v);
                     io.put(3, v * m);
                 },
                 [](const r::V& in) {
                     const auto m = r::slice(in, 0, 9), v = r::slice(in, 9, 3);
                     return r::cat(r::matmul(m, v, 3, 3, 1), r::matmul(v, m, 1, 3, 3));
                 }});
    c.push_back({"mat_mat_product_rectangular", 6 + 6, 4 + 9,
                 [](const Io<T>& io) {
                     const auto a = io.template mx<2, 3>(0);
                     const auto b = io.template mx<3, 2>(6);
                     io.put(0, a * b);
                     io.put(4, b * a);
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 6), b = r::slice(in, 6, 6);
                     return r::cat(r::matmul(a, b, 2, 3, 2), r::matmul(b, a, 3, 2, 3));
                 }});
    c.push_back({"mat_add_sub_scale_transpose", 8 + 1, 8 * 3 + 8,
                 [](const Io<T>& io) {
                     const auto a = io.template mx<2, 4>(0);
                     const auto s = io(8);
                     io.put(0, a + a * s);
                     io.put(8, s * a - a);
                     io.put(16, -a);
                     io.put(24, weft::transpose(a));
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 8);
                     const double s = in[8];
                     return r::cat(r::cat(r::cat(r::add(a, r::scale(a, s)), r::sub(r::scale(a, s), a)),
                                          r::scale(a, -1)),
                                   r::transpose(a, 2, 4));
                 }});
    c.push_back({"mat_outer_trace_diag_identity", 3 + 3, 9 + 1 + 9 + 16,
                 [](const Io<T>& io) {
                     const auto a = io.template v<3>(0), b = io.template v<3>(3);
                     const auto o = weft::outer(a, b);
                     io.put(0, o);
                     io.put(9, weft::trace(o));
                     io.put(10, weft::diag(a));
                     io.put(19, weft::identity<4, T>());
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 3), b = r::slice(in, 3, 3);
                     r::V o = r::matmul(a, b, 3, 1, 3), d(9, 0.0), id(16, 0.0);
                     for (int i = 0; i < 3; ++i) d[i * 4] = a[i];
                     for (int i = 0; i < 4; ++i) id[i * 5] = 1;
                     return r::cat(r::cat(r::cat(o, {o[0] + o[4] + o[8]}), d), id);
                 }});
    c.push_back({"mat_determinants", 4 + 9 + 16, 3,
                 [](const Io<T>& io) {
                     io.put(0, weft::determinant(io.template mx<2, 2>(0)));
                     io.put(1, weft::determinant(io.template mx<3, 3>(4)));
                     io.put(2, weft::determinant(io.template mx<4, 4>(13)));
                 },
                 [](const r::V& in) {
                     return r::V{r::det_inverse(r::slice(in, 0, 4), 2).first,
                                 r::det_inverse(r::slice(in, 4, 9), 3).first,
                                 r::det_inverse(r::slice(in, 13, 16), 4).first};
                 }});
    return c;
}

// Inverses, lengths and normalize (floating-point element types only).
template <class T>
std::vector<Check<T>> float_checks() {
    std::vector<Check<T>> c = vector_checks<T>();
    c.push_back({"vec_length_normalize_div", 4, 1 + 3 + 3 + 3,
                 [](const Io<T>& io) {
                     const auto a = io.template v<3>(0);
                     io.put(0, weft::length(a));
                     io.put(1, weft::normalize(a));
                     io.put(4, a / io(3));
                     io.put(7, weft::normalize(V3<T>()));  // the zero vector stays zero
                 },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 3);
                     return r::cat(
                         r::cat(r::cat({std::sqrt(r::dot(a, a))}, r::normalized(a)), r::scale(a, 1 / in[3])),
                         {0, 0, 0});
                 }});
    // Diagonally dominant matrices, so the inverses are well conditioned.
    auto dominant = [](int n, int from) {
        return [n, from](std::mt19937& rng, r::V& in) {
            uniform_inputs<T>(rng, in);
            for (int i = 0; i < n; ++i) in[from + i * n + i] += 6;
        };
    };
    c.push_back({"mat_inverse_2", 4, 4,
                 [](const Io<T>& io) { io.put(0, weft::inverse(io.template mx<2, 2>(0))); },
                 [](const r::V& in) { return r::det_inverse(in, 2).second; }, dominant(2, 0)});
    c.push_back({"mat_inverse_3", 9, 9,
                 [](const Io<T>& io) { io.put(0, weft::inverse(io.template mx<3, 3>(0))); },
                 [](const r::V& in) { return r::det_inverse(in, 3).second; }, dominant(3, 0)});
    c.push_back({"mat_inverse_4", 16, 16,
                 [](const Io<T>& io) { io.put(0, weft::inverse(io.template mx<4, 4>(0))); },
                 [](const r::V& in) { return r::det_inverse(in, 4).second; }, dominant(4, 0)});
    return c;
}

// Integer vectors: the same operators, and integer division by a nonzero scalar.
std::vector<Check<int32_t>> int_checks() {
    std::vector<Check<int32_t>> c = vector_checks<int32_t>();
    c.push_back({"vec_int_div", 5, 4, [](const Io<int32_t>& io) { io.put(0, io.template v<4>(0) / io(4)); },
                 [](const r::V& in) {
                     r::V out;
                     for (int i = 0; i < 4; ++i) out.push_back(double(int(in[i]) / int(in[4])));
                     return out;
                 },
                 [](std::mt19937& rng, r::V& in) {
                     uniform_inputs<int32_t>(rng, in);
                     if (in[4] == 0) in[4] = 3;
                 }});
    return c;
}

TEST(VecMath, Float32) {
    run_checks<float>("vec_math_f32", float_checks<float>(), 2e-5);
}

TEST(VecMath, Float64) {
    run_checks<double>("vec_math_f64", float_checks<double>(), 1e-12);
}

TEST(VecMath, Int32IsExact) {
    run_checks<int32_t>("vec_math_i32", int_checks(), 0);
}

}  // namespace
