// Quaternion and transform builtins in kernels against host references in double, and the
// composite builtins in a GpuToGpu module giving the GPU's bits on the CPU.
#include <gtest/gtest.h>

#include <cstring>
#include <weft/weft.hpp>

#include "support/composite_checks.hpp"
#include "support/composite_reference.hpp"

namespace {

using namespace weft::test;
namespace r = weft::test::ref;
using weft::quat_t;
using weft::vec;

// Unit quaternions at `from`, `from + 4`, ... (`count` of them), the rest uniform.
auto unit_quats(int from, int count) {
    return [from, count](std::mt19937& rng, r::V& in) {
        std::uniform_real_distribution<double> d(-2, 2);
        for (auto& x : in) x = d(rng);
        for (int q = 0; q < count; ++q) {
            const auto u = r::normalized(r::slice(in, from + 4 * q, 4));
            for (int i = 0; i < 4; ++i) in[from + 4 * q + i] = u[i];
        }
    };
}

template <class T>
std::vector<Check<T>> quat_checks() {
    std::vector<Check<T>> c;
    c.push_back({"quat_mul_add_scale", 9, 16,
                 [](const Io<T>& io) {
                     const auto p = io.q(0), q = io.q(4);
                     io.put(0, p * q);
                     io.put(4, p + q);
                     io.put(8, -p - q * io(8));
                     io.put(12, io(8) * p / io(8));
                 },
                 [](const r::V& in) {
                     const auto p = r::slice(in, 0, 4), q = r::slice(in, 4, 4);
                     return r::cat(r::cat(r::qmul(p, q), r::add(p, q)),
                                   r::cat(r::sub(r::scale(p, -1), r::scale(q, in[8])), p));
                 }});
    c.push_back({"quat_conjugate_inverse_identity_length", 4, 14,
                 [](const Io<T>& io) {
                     const auto q = io.q(0);
                     io.put(0, weft::quat_conjugate(q));
                     io.put(4, weft::quat_inverse(q));
                     io.put(8, weft::quat_identity<T>());
                     io.put(12, weft::length(q));
                     io.put(13, weft::normalize(q).w);
                 },
                 [](const r::V& in) {
                     const auto q = r::slice(in, 0, 4);
                     const double n = r::dot(q, q);
                     return r::cat(r::cat(r::qconj(q), r::scale(r::qconj(q), 1 / n)),
                                   {0, 0, 0, 1, std::sqrt(n), q[3] / std::sqrt(n)});
                 }});
    c.push_back({"quat_rotate_and_inverse", 7, 6,
                 [](const Io<T>& io) {
                     const auto q = io.q(0);
                     const auto v = io.template v<3>(4);
                     io.put(0, weft::quat_rotate(q, v));
                     io.put(3, weft::quat_rotate_inv(q, v));
                 },
                 [](const r::V& in) {
                     const auto q = r::slice(in, 0, 4), v = r::slice(in, 4, 3);
                     return r::cat(r::qrotate(q, v), r::qrotate(r::qconj(q), v));
                 },
                 unit_quats(0, 1)});
    c.push_back({"quat_axis_angle", 4, 4,
                 [](const Io<T>& io) { io.put(0, weft::quat_from_axis_angle(io.template v<3>(0), io(3))); },
                 [](const r::V& in) {
                     const double h = in[3] / 2;
                     return r::cat(r::scale(r::slice(in, 0, 3), std::sin(h)), {std::cos(h)});
                 },
                 [](std::mt19937& rng, r::V& in) {
                     uniform_inputs<T>(rng, in);
                     const auto axis = r::normalized(r::slice(in, 0, 3));
                     for (int i = 0; i < 3; ++i) in[i] = axis[i];
                     in[3] *= 25;  // angles in [-50, 50]: every quadrant of the half angle
                 }});
    c.push_back({"quat_to_and_from_matrix", 4, 9 + 4,
                 [](const Io<T>& io) {
                     const auto q = io.q(0);
                     const auto m = weft::quat_to_matrix(q);
                     io.put(0, m);
                     // q and -q are the same rotation: report the one on q's side.
                     const auto back = weft::quat_from_matrix(m);
                     io.put(9, weft::select(weft::dot(back, q) < T(0), -back, back));
                 },
                 [](const r::V& in) {
                     const auto q = r::slice(in, 0, 4);
                     return r::cat(r::qmatrix(q), q);
                 },
                 unit_quats(0, 1)});
    c.push_back({"quat_from_matrix_every_case", 9, 4,
                 [](const Io<T>& io) {
                     const auto back = weft::quat_from_matrix(io.template mx<3, 3>(0));
                     io.put(0, weft::select(back.w < T(0), -back, back));
                 },
                 [](const r::V& in) {
                     // The input is the matrix of q (see below); the reference is q with w >= 0.
                     return r::V(in.begin() + 9, in.begin() + 13);
                 }});
    c.push_back({"quat_slerp", 9, 4,
                 [](const Io<T>& io) { io.put(0, weft::quat_slerp(io.q(0), io.q(4), io(8))); },
                 [](const r::V& in) {
                     const auto a = r::slice(in, 0, 4);
                     auto b = r::slice(in, 4, 4);
                     double d = r::dot(a, b);
                     if (d < 0) b = r::scale(b, -1), d = -d;
                     const double theta = std::acos(std::min(d, 1.0)), t = in[8];
                     if (std::sin(theta) == 0) return r::add(r::scale(a, 1 - t), r::scale(b, t));
                     return r::add(r::scale(a, std::sin((1 - t) * theta) / std::sin(theta)),
                                   r::scale(b, std::sin(t * theta) / std::sin(theta)));
                 },
                 [](std::mt19937& rng, r::V& in) {
                     unit_quats(0, 2)(rng, in);
                     std::uniform_real_distribution<double> d(0, 1);
                     in[8] = d(rng);
                     if (std::uniform_int_distribution<int>(0, 3)(rng) == 0)  // nearby and equal pairs
                         for (int i = 0; i < 4; ++i) in[4 + i] = in[i] * (i == 0 ? 1.0 : 1 + 1e-3 * d(rng));
                 }});
    // quat_from_matrix_every_case takes the matrix of a unit quaternion and the quaternion itself,
    // chosen so that each of w, x, y and z is sometimes the largest.
    c[5].k = 13;
    c[5].body = [](const Io<T>& io) {
        const auto back = weft::quat_from_matrix(io.template mx<3, 3>(0));
        const auto q = io.q(9);
        io.put(0, weft::select(weft::dot(back, q) < T(0), -back, back));
    };
    c[5].inputs = [](std::mt19937& rng, r::V& in) {
        std::uniform_real_distribution<double> d(-1, 1);
        r::V q(4);
        for (auto& x : q) x = d(rng);
        q[std::uniform_int_distribution<int>(0, 3)(rng)] *= 4;
        q = r::normalized(q);
        const auto m = r::qmatrix(q);
        for (int i = 0; i < 9; ++i) in[i] = m[i];
        for (int i = 0; i < 4; ++i) in[9 + i] = q[i];
    };
    c[5].reference = [](const r::V& in) { return r::slice(in, 9, 4); };
    c.push_back(
        {"transform_point_vector_multiply_inverse", 7 + 7 + 3, 3 + 3 + 7 + 7 + 3,
         [](const Io<T>& io) {
             const weft::transform_t<T> a(io.template v<3>(0), io.q(3));
             const weft::transform_t<T> b(io.template v<3>(7), io.q(10));
             const auto v = io.template v<3>(14);
             io.put(0, weft::transform_point(a, v));
             io.put(3, weft::transform_vector(a, v));
             const auto ab = a * b;
             io.put(6, ab.p);
             io.put(9, ab.q);
             const auto inv = weft::transform_inverse(weft::transform_multiply(a, b));
             io.put(13, weft::transform_get_translation(inv));
             io.put(16, weft::transform_get_rotation(inv));
             // inverse(a) undoes a.
             io.put(20, weft::transform_point(weft::transform_inverse(a), weft::transform_point(a, v)));
         },
         [](const r::V& in) {
             const auto ap = r::slice(in, 0, 3), aq = r::slice(in, 3, 4);
             const auto bp = r::slice(in, 7, 3), bq = r::slice(in, 10, 4);
             const auto v = r::slice(in, 14, 3);
             const auto abp = r::add(r::qrotate(aq, bp), ap), abq = r::qmul(aq, bq);
             const auto iq = r::qconj(abq);
             const auto ip = r::scale(r::qrotate(iq, abp), -1);
             return r::cat(r::cat(r::cat(r::add(r::qrotate(aq, v), ap), r::qrotate(aq, v)), r::cat(abp, abq)),
                           r::cat(r::cat(ip, iq), v));
         },
         unit_quats(3, 1)});
    // Both transforms need unit rotations.
    c.back().inputs = [](std::mt19937& rng, r::V& in) {
        unit_quats(3, 1)(rng, in);
        const auto u = r::normalized(r::slice(in, 10, 4));
        for (int i = 0; i < 4; ++i) in[10 + i] = u[i];
    };
    c.push_back({"transform_set_identity", 7, 7 + 7,
                 [](const Io<T>& io) {
                     auto t = weft::transform_identity<T>();
                     io.put(0, t.p);
                     io.put(3, t.q);
                     weft::transform_set_translation(t, io.template v<3>(0));
                     weft::transform_set_rotation(t, io.q(3));
                     io.put(7, t.p);
                     io.put(10, t.q);
                 },
                 [](const r::V& in) {
                     return r::cat({0, 0, 0, 0, 0, 0, 1}, in);
                 }});
    return c;
}

TEST(QuatTransform, Float32) {
    run_checks<float>("quat_f32", quat_checks<float>(), 2e-5);
}

TEST(QuatTransform, Float64) {
    run_checks<double>("quat_f64", quat_checks<double>(), 1e-12);
}

// In a GpuToGpu module the composite builtins (built from + - * / sqrt floor min max abs and
// select, never the device's sin or cos) give the same bits on the CPU as on the GPU.
TEST(QuatTransform, GpuToGpuCpuEqualsGpu) {
    if (test_device().is_cpu()) GTEST_SKIP() << "compares the GPU with the CPU; runs under the gpu label";
    weft::Module m{"composite_gpu_to_gpu", {.deterministic = weft::Deterministic::GpuToGpu}};
    constexpr int k = 16 + 4 + 3 + 1, outputs = 16 + 1 + 4 + 9 + 4 + 3 + 3 + 3 + 4 + 4;
    auto kernel = m.kernel("composites", {"in", "out"}, [](weft::Array<float> in, weft::Array<float> out) {
        const Io<float> io{in, out, weft::tid(), k, outputs};
        const auto a = io.mx<4, 4>(0);
        const auto q = io.q(16);
        const auto v = io.v<3>(20);
        io.put(0, weft::inverse(a) * a);
        io.put(16, weft::determinant(a));
        io.put(17, q * weft::quat_inverse(q));
        io.put(21, weft::quat_to_matrix(weft::normalize(q)));
        io.put(30, weft::quat_from_matrix(weft::quat_to_matrix(weft::normalize(q))));
        io.put(34, weft::quat_rotate(q, weft::cross(v, weft::normalize(v))));
        const weft::transform t(v, weft::normalize(q));
        io.put(37, weft::transform_point(weft::transform_inverse(t * t), v));
        io.put(40, weft::abs(weft::min(v, -v)) / weft::length(v));
        const auto turn = weft::quat_from_axis_angle(weft::normalize(v), io(23) * 10.0f);
        io.put(43, turn);
        io.put(47, weft::quat_slerp(weft::normalize(q), turn, weft::abs(io(23)) / 3.0f));
    });
    const int threads = 256;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-3, 3);
    std::vector<float> host(threads * k);
    for (auto& x : host) x = d(rng);
    auto run = [&](weft::Device dev) {
        auto out = weft::zeros<float>(threads * outputs, dev);
        weft::launch(kernel, threads, weft::from_vector(host, dev), out);
        return out.to_vector();
    };
    const auto gpu = run(test_device());
    const auto cpu = run(weft::device("cpu"));
    ASSERT_EQ(gpu.size(), cpu.size());
    for (size_t i = 0; i < gpu.size(); ++i)
        EXPECT_EQ(std::memcmp(&gpu[i], &cpu[i], sizeof(float)), 0)
            << "output " << i << ": gpu " << gpu[i] << ", cpu " << cpu[i];
}

}  // namespace
