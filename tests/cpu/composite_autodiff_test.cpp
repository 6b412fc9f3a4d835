// Reverse-mode autodiff of composite values and structs: gradients of vec3d / mat33d / quatd /
// transformd arrays through the builtins against float64 central differences, gradients of a
// WEFT_STRUCT's array fields (directly and through a weft::func taking the struct), deterministic
// backward passes of composite scatters and gathers (bit for bit, the exact sum per component),
// and a custom adjoint of a function with composite arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/composite_bits.hpp"
#include "support/errors.hpp"
#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::test::bits;

using weft::Array;
using weft::ArrayField;
using weft::Deterministic;
using weft::Field;
using weft::host_side;
using weft::kernel_side;
using weft::test::exact_sum;
using weft::test::same_bits;
using weft::test::test_device;

// The scalar components of a vector of host composites, in the packed order, and back.
template <class H>
std::vector<double> flat(const std::vector<H>& v) {
    std::vector<double> c(v.size() * sizeof(H) / sizeof(double));
    std::memcpy(c.data(), v.data(), c.size() * sizeof(double));
    return c;
}
template <class H>
void set_component(std::vector<H>& v, size_t k, double value) {
    std::memcpy(reinterpret_cast<char*>(v.data()) + k * sizeof(double), &value, sizeof(double));
}

// Compares `grad` (the adjoint's gradient of the host values `x`) with central differences of
// `loss()`, which reads `x`, component by component.
template <class H>
void expect_central_differences(std::vector<H>& x, const std::vector<H>& grad,
                                const std::function<double()>& loss, const std::string& what, double h = 1e-6,
                                double tolerance = 1e-6) {
    const std::vector<double> at = flat(x);
    const std::vector<double> g = flat(grad);
    ASSERT_EQ(g.size(), at.size()) << what;
    for (size_t k = 0; k < at.size(); ++k) {
        set_component(x, k, at[k] + h);
        const double plus = loss();
        set_component(x, k, at[k] - h);
        const double minus = loss();
        set_component(x, k, at[k]);
        const double fd = (plus - minus) / (2 * h);
        EXPECT_NEAR(g[k], fd, tolerance * std::max(1.0, std::abs(fd)))
            << "d loss / d " << what << " component " << k << " (element " << k / (sizeof(H) / sizeof(double))
            << ")";
    }
}

double unit(std::mt19937_64& rng) {
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
}

// ---------------------------------------------------------------------------------------------
// Composite arrays through the builtins.

TEST(CompositeAutodiff, BuiltinsOfCompositeArraysMatchCentralDifferences) {
    const auto dev = test_device();
    weft::Module m{"composite_ad_builtins"};
    auto k = m.kernel("k", [](Array<weft::vec3d> a, Array<weft::vec3d> b, Array<weft::mat33d> r,
                              Array<weft::quatd> q, Array<weft::transformd> t, Array<double> loss) {
        auto i = weft::tid();
        const weft::vec3d u = weft::normalize(a[i]);
        const weft::vec3d c = weft::cross(u, b[i]);
        const weft::vec3d rc = r[i] * c;
        const weft::vec3d s = weft::quat_rotate(weft::normalize(q[i]), rc);
        const weft::vec3d p = weft::transform_point(t[i], s);
        loss[0] += weft::dot(p, a[i]) + 0.5 * weft::dot(p, p) + weft::dot(u, b[i]) * weft::length(rc);
    });
    std::mt19937_64 rng(3);
    const int n = 3;
    std::vector<weft::host::vec3d> ha(n), hb(n);
    std::vector<weft::host::mat33d> hr(n);
    std::vector<weft::host::quatd> hq(n);
    std::vector<weft::host::transformd> ht(n);
    for (int i = 0; i < n; ++i) {
        ha[i] = {unit(rng) + 2.0, unit(rng), unit(rng)};
        hb[i] = {unit(rng), unit(rng), unit(rng)};
        for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 3; ++col) hr[i][row][col] = unit(rng) + (row == col ? 1.5 : 0.0);
        hq[i] = {unit(rng), unit(rng), unit(rng), unit(rng) + 2.0};
        ht[i].p = {unit(rng), unit(rng), unit(rng)};
        ht[i].q = {unit(rng) * 0.3, unit(rng) * 0.3, unit(rng) * 0.3,
                   1.0};  // not unit: every component counts
    }
    auto loss_of = [&] {
        auto out = weft::zeros<double>(1, dev);
        weft::launch(k, n, weft::from_vector<weft::vec3d>(ha, dev), weft::from_vector<weft::vec3d>(hb, dev),
                     weft::from_vector<weft::mat33d>(hr, dev), weft::from_vector<weft::quatd>(hq, dev),
                     weft::from_vector<weft::transformd>(ht, dev), out);
        return out.to_vector()[0];
    };

    auto a = weft::from_vector<weft::vec3d>(ha, dev, weft::requires_grad);
    auto b = weft::from_vector<weft::vec3d>(hb, dev, weft::requires_grad);
    auto r = weft::from_vector<weft::mat33d>(hr, dev, weft::requires_grad);
    auto q = weft::from_vector<weft::quatd>(hq, dev, weft::requires_grad);
    auto t = weft::from_vector<weft::transformd>(ht, dev, weft::requires_grad);
    auto loss = weft::zeros<double>(1, dev, weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, n, a, b, r, q, t, loss);
    tape.stop();
    tape.backward(loss);
    EXPECT_NEAR(loss.to_vector()[0], loss_of(), 1e-12);

    // Each gradient is a composite array of its array's type.
    const weft::DeviceArray<weft::mat33d> rg = r.grad();
    const weft::DeviceArray<weft::transformd> tg = t.grad();
    EXPECT_EQ(rg.components(), 9);
    EXPECT_EQ(tg.components(), 7);
    expect_central_differences(ha, a.grad().to_vector(), loss_of, "a");
    expect_central_differences(hb, b.grad().to_vector(), loss_of, "b");
    expect_central_differences(hr, rg.to_vector(), loss_of, "r");
    expect_central_differences(hq, q.grad().to_vector(), loss_of, "q");
    expect_central_differences(ht, tg.to_vector(), loss_of, "t");
}

// ---------------------------------------------------------------------------------------------
// Structs: the gradients of a struct's array fields.

template <class Side = host_side>
struct Body {
    ArrayField<Side, weft::vec3d> pos;
    ArrayField<Side, weft::vec3d> vel;
    Field<Side, double> dt;
    Field<Side, weft::vec3d> gravity;
    ArrayField<Side, weft::quatd> rot;
};
WEFT_STRUCT(Body, pos, vel, dt, gravity, rot)

// The energy of body i after one step: the same expression in the kernel and in the function.
weft::Double step_energy(const Body<kernel_side>& body, const weft::Int& i) {
    const weft::vec3d v = body.vel[i] + body.gravity * body.dt;
    const weft::vec3d p = body.pos[i] + weft::quat_rotate(weft::normalize(body.rot[i]), v) * body.dt;
    return weft::dot(p, p) + weft::length(weft::cross(p, v));
}

TEST(CompositeAutodiff, GradientsOfStructArrayFieldsDirectlyAndThroughAFunction) {
    const auto dev = test_device();
    weft::Module m{"composite_ad_struct"};
    auto energy = m.func("energy", [](Body<kernel_side> body, weft::Int i) { return step_energy(body, i); });
    auto direct = m.kernel("direct", [](Body<kernel_side> body, Array<double> loss) {
        loss[0] += step_energy(body, weft::tid());
    });
    auto through = m.kernel("through", [energy](Body<kernel_side> body, Array<double> loss) {
        loss[0] += energy(body, weft::tid());
    });
    std::mt19937_64 rng(5);
    const int n = 4;
    std::vector<weft::host::vec3d> hp(n), hv(n);
    std::vector<weft::host::quatd> hq(n);
    for (int i = 0; i < n; ++i) {
        hp[i] = {unit(rng), unit(rng) + 1.0, unit(rng)};
        hv[i] = {unit(rng), unit(rng), unit(rng)};
        hq[i] = {unit(rng) * 0.5, unit(rng) * 0.5, unit(rng) * 0.5, 1.0};
    }
    const double dt = 0.125;
    const weft::host::vec3d gravity{0.0, -9.8, 0.5};
    for (int which = 0; which < 2; ++which) {
        SCOPED_TRACE(which == 0 ? "in the kernel" : "through a weft::func");
        auto run = [&](const Body<>& body, const weft::DeviceArray<double>& loss) {
            if (which == 0)
                weft::launch(direct, n, body, loss);
            else
                weft::launch(through, n, body, loss);
        };
        auto loss_of = [&] {
            Body<> body{.pos = weft::from_vector<weft::vec3d>(hp, dev),
                        .vel = weft::from_vector<weft::vec3d>(hv, dev),
                        .dt = dt,
                        .gravity = gravity,
                        .rot = weft::from_vector<weft::quatd>(hq, dev)};
            auto loss = weft::zeros<double>(1, dev);
            run(body, loss);
            return loss.to_vector()[0];
        };
        Body<> body{.pos = weft::from_vector<weft::vec3d>(hp, dev),
                    .vel = weft::from_vector<weft::vec3d>(hv, dev),
                    .dt = dt,
                    .gravity = gravity,
                    .rot = weft::from_vector<weft::quatd>(hq, dev)};
        body.pos.requires_grad_();
        body.vel.requires_grad_();
        body.rot.requires_grad_();
        auto loss = weft::zeros<double>(1, dev, weft::requires_grad);
        weft::Tape tape;
        tape.start();
        run(body, loss);
        tape.stop();
        tape.backward(loss);
        expect_central_differences(hp, body.pos.grad().to_vector(), loss_of, "body.pos");
        expect_central_differences(hv, body.vel.grad().to_vector(), loss_of, "body.vel");
        expect_central_differences(hq, body.rot.grad().to_vector(), loss_of, "body.rot");
        // A field without a gradient receives nothing and stops nothing.
        tape.zero();
        Body<> partial = body;
        partial.vel = weft::from_vector<weft::vec3d>(hv, dev);  // no requires_grad
        auto loss2 = weft::zeros<double>(1, dev, weft::requires_grad);
        weft::Tape tape2;
        tape2.start();
        run(partial, loss2);
        tape2.stop();
        tape2.backward(loss2);
        expect_central_differences(hp, body.pos.grad().to_vector(), loss_of,
                                   "body.pos (vel without gradient)");
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic backward passes of composite scatters and gathers.

std::vector<weft::host::vec3f> random_vec3(std::mt19937_64& rng, int n, int min_exp, int max_exp) {
    std::vector<weft::host::vec3f> v(static_cast<size_t>(n));
    for (auto& e : v)
        for (int c = 0; c < 3; ++c) e[c] = weft::test::random_value<float>(rng, min_exp, max_exp);
    return v;
}
// Forward: out[idx[i]] += cw_mul(x[i], p[0]). Backward: x.grad()[i] = cw_mul(out.grad()[idx[i]],
// p[0]) (one product each) and p.grad()[0] = the sum over i of cw_mul(x[i], out.grad()[idx[i]]):
// a scatter of every thread into one element, the exact sum per component.
TEST(CompositeAutodiff, DeterministicBackwardOfAVec3ScatterIsExactAndRepeats) {
    const auto dev = test_device();
    const int threads = 3000, outputs = 23;
    std::mt19937_64 rng(17);
    std::vector<int> idx(threads);
    for (int& i : idx) i = static_cast<int>(rng() % outputs);
    const auto hx = random_vec3(rng, threads, -12, 12);
    const auto hp = random_vec3(rng, 1, -2, 2);
    const auto hg = random_vec3(rng, outputs, -12, 12);
    std::vector<weft::host::vec3f> want_x(threads);
    weft::host::vec3f want_p;
    for (int c = 0; c < 3; ++c) {
        std::vector<float> contributions;
        for (int i = 0; i < threads; ++i) {
            want_x[i][c] = hg[idx[i]][c] * hp[0][c];
            contributions.push_back(hx[i][c] * hg[idx[i]][c]);
        }
        want_p[c] = exact_sum(0.0f, contributions);
    }
    for (Deterministic mode : {Deterministic::RunToRun, Deterministic::GpuToGpu}) {
        for (int workers : {1, 3}) {
            SCOPED_TRACE(std::string(mode == Deterministic::RunToRun ? "RunToRun" : "GpuToGpu") +
                         " workers " + std::to_string(workers));
            weft::Module m{"composite_ad_scatter", {.deterministic = mode, .cpu_threads = workers}};
            auto k = m.kernel(
                "k", [](Array<int> idx, Array<weft::vec3> x, Array<weft::vec3> p, Array<weft::vec3> out) {
                    auto i = weft::tid();
                    out[idx[i]] += weft::cw_mul(x[i], p[0]);
                });
            std::vector<uint32_t> first;
            for (int run = 0; run < 3; ++run) {
                auto x = weft::from_vector<weft::vec3>(hx, dev, weft::requires_grad);
                auto p = weft::from_vector<weft::vec3>(hp, dev, weft::requires_grad);
                auto out = weft::zeros<weft::vec3>(outputs, dev, weft::requires_grad);
                weft::Tape tape;
                tape.start();
                weft::launch(k, threads, weft::from_vector(idx, dev), x, p, out);
                tape.stop();
                out.grad().copy_from_host(hg.data(), hg.size());
                tape.backward();
                const auto gx = x.grad().to_vector();
                const auto gp = p.grad().to_vector();
                EXPECT_EQ(bits(gx), bits(want_x)) << "run " << run;
                for (int c = 0; c < 3; ++c)
                    EXPECT_TRUE(same_bits(gp[0][c], want_p[c]))
                        << "run " << run << " component " << c << ": " << gp[0][c] << " vs " << want_p[c];
                std::vector<uint32_t> all = bits(gx);
                for (uint32_t b : bits(gp)) all.push_back(b);
                if (run == 0)
                    first = all;
                else
                    EXPECT_EQ(all, first) << "run " << run << " differs from run 0";
            }
        }
    }
}

// Forward: y[i] = x[idx[i]] * w, a gather. Backward: x.grad()[idx[i]] += y.grad()[i] * w, a
// scatter: each component of each element the exact sum of its contributions (w a power of two,
// so every contribution is exact).
TEST(CompositeAutodiff, DeterministicBackwardOfAVec3GatherIsTheExactSumPerComponent) {
    const auto dev = test_device();
    const int threads = 4000, inputs = 31;
    std::mt19937_64 rng(29);
    std::vector<int> idx(threads);
    for (int& i : idx) i = static_cast<int>(rng() % inputs);
    const auto hx = random_vec3(rng, inputs, -4, 4);
    const auto hy = random_vec3(rng, threads, -20, 20);  // y's gradient: a wide range of exponents
    const float w = 0.5f;
    std::vector<weft::host::vec3f> want(inputs);
    for (int j = 0; j < inputs; ++j)
        for (int c = 0; c < 3; ++c) {
            std::vector<float> contributions;
            for (int i = 0; i < threads; ++i)
                if (idx[i] == j) contributions.push_back(hy[i][c] * w);
            want[j][c] = exact_sum(0.0f, contributions);
        }
    for (Deterministic mode : {Deterministic::RunToRun, Deterministic::GpuToGpu}) {
        SCOPED_TRACE(mode == Deterministic::RunToRun ? "RunToRun" : "GpuToGpu");
        weft::Module m{"composite_ad_gather", {.deterministic = mode}};
        auto k = m.kernel("k", [](Array<int> idx, Array<weft::vec3> x, weft::Float w, Array<weft::vec3> y) {
            auto i = weft::tid();
            y[i] = x[idx[i]] * w;
        });
        for (int run = 0; run < 3; ++run) {
            auto x = weft::from_vector<weft::vec3>(hx, dev, weft::requires_grad);
            auto y = weft::zeros<weft::vec3>(threads, dev, weft::requires_grad);
            weft::Tape tape;
            tape.start();
            weft::launch(k, threads, weft::from_vector(idx, dev), x, w, y);
            tape.stop();
            y.grad().copy_from_host(hy.data(), hy.size());
            tape.backward();
            EXPECT_EQ(bits(x.grad().to_vector()), bits(want)) << "run " << run;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A custom adjoint of a function with composite arguments.

// f(a, arr, i) = dot(a, arr[i]); the true d f / d arr[i] is a * adj_ret, the custom adjoint gives
// 3 a * adj_ret to arr[i] and 1 (every component) to arr[i + 1], so the test sees it is used.
TEST(CompositeAutodiff, CustomAdjointOfAFunctionWithCompositeArguments) {
    const auto dev = test_device();
    for (Deterministic mode : {Deterministic::NotGuaranteed, Deterministic::RunToRun}) {
        SCOPED_TRACE(mode == Deterministic::RunToRun ? "RunToRun" : "NotGuaranteed");
        weft::Module m{"composite_ad_custom", {.deterministic = mode}};
        auto f = m.func(
            "f", [](weft::vec3 a, Array<weft::vec3> arr, weft::Int i) { return weft::dot(a, arr[i]); });
        m.func_grad(f, [](weft::vec3 a, Array<weft::vec3> arr, weft::Int i, weft::Float adj_ret) {
            weft::adjoint(arr)[i] += a * (adj_ret * 3.0f);
            weft::adjoint(arr)[i + 1].y += 1.0f;  // one component of the composite gradient
        });
        auto k = m.kernel("k", [f](Array<weft::vec3> v, Array<weft::vec3> arr, Array<float> out) {
            auto i = weft::tid();
            out[i] = f(v[i], arr, i % 2);
        });
        const int n = 6;
        std::vector<weft::host::vec3f> hv(n);
        for (int i = 0; i < n; ++i) hv[i] = {float(i + 1), float(2 * i), -float(i)};
        auto v = weft::from_vector<weft::vec3>(hv, dev, weft::requires_grad);
        auto arr = weft::from_vector<weft::vec3>({{1, 2, 3}, {4, 5, 6}, {0, 0, 0}}, dev, weft::requires_grad);
        auto out = weft::zeros<float>(n, dev, weft::requires_grad);
        weft::Tape tape;
        tape.start();
        weft::launch(k, n, v, arr, out);
        tape.stop();
        const std::vector<float> og{1, 2, 3, 4, 5, 6};
        out.grad().copy_from_host(og.data(), og.size());
        tape.backward();
        std::vector<weft::host::vec3f> want(3);
        for (int i = 0; i < n; ++i) {
            for (int c = 0; c < 3; ++c) want[i % 2][c] += hv[i][c] * (og[i] * 3.0f);
            want[i % 2 + 1].y += 1.0f;
        }
        EXPECT_EQ(arr.grad().to_vector(), want);
        // A custom adjoint gives gradients to array parameters only: `a`, a value, gets none.
        EXPECT_EQ(v.grad().to_vector(), std::vector<weft::host::vec3f>(n));
        // The forward still computes f's body.
        EXPECT_EQ(out.to_vector()[1], 2.0f * 4 + 2.0f * 5 - 1.0f * 6);
    }
}

// A custom adjoint of a function taking a struct accumulates into the gradient of a struct's
// array field (deliberately 2x the true derivative of |pos_i|^2); a manual adjoint launch takes one
// gradient per leaf of the struct (none for its scalar and composite fields).
TEST(CompositeAutodiff, CustomAdjointIntoAStructArrayField) {
    const auto dev = test_device();
    weft::Module m{"composite_ad_custom_struct", {.deterministic = Deterministic::RunToRun}};
    auto f = m.func("f", [](Body<kernel_side> body, weft::Int i) {
        const weft::vec3d p = body.pos[i];
        return weft::dot(p, p) * body.dt;
    });
    m.func_grad(f, [](Body<kernel_side> body, weft::Int i, weft::Double adj_ret) {
        weft::adjoint(body.pos)[i] += body.pos[i] * (4.0 * body.dt * adj_ret);
        weft::adjoint(body.rot)[0].w += adj_ret;
    });
    auto k =
        m.kernel("k", [f](Body<kernel_side> body, Array<double> loss) { loss[0] += f(body, weft::tid()); });
    const int n = 5;
    std::vector<weft::host::vec3d> hp(n);
    for (int i = 0; i < n; ++i) hp[i] = {double(i), 1.0, -0.5 * i};
    Body<> body{.pos = weft::from_vector<weft::vec3d>(hp, dev, weft::requires_grad),
                .vel = weft::zeros<weft::vec3d>(n, dev),
                .dt = 0.5,
                .rot = weft::zeros<weft::quatd>(1, dev, weft::requires_grad)};
    auto loss = weft::zeros<double>(1, dev, weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, n, body, loss);
    tape.stop();
    tape.backward(loss);
    std::vector<weft::host::vec3d> want(n);
    for (int i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) want[i][c] = hp[i][c] * (4.0 * 0.5 * 1.0);
    EXPECT_EQ(body.pos.grad().to_vector(), want);
    EXPECT_EQ(body.rot.grad().to_vector(), (std::vector<weft::host::quatd>{{0, 0, 0, double(n)}}));

    // The same backward by hand: leaves pos, vel, dt, gravity[0..2], rot, then loss.
    auto pos_grad = weft::zeros<weft::vec3d>(n, dev);
    auto rot_grad = weft::zeros<weft::quatd>(1, dev);
    auto loss_grad = weft::full<double>(1, 2.0, dev);
    const weft::AnyArray none;
    weft::launch_adjoint(k, n, {pos_grad, none, none, none, none, none, rot_grad, loss_grad}, body, loss);
    for (auto& w : want)
        for (int c = 0; c < 3; ++c) w[c] *= 2.0;
    EXPECT_EQ(pos_grad.to_vector(), want);
    EXPECT_EQ(rot_grad.to_vector(), (std::vector<weft::host::quatd>{{0, 0, 0, 2.0 * n}}));
}

// A component view's gradient is that component of the composite array's gradient.
TEST(CompositeAutodiff, GradientOfAComponentViewIsThatComponent) {
    const auto dev = test_device();
    weft::Module m{"composite_ad_component"};
    auto sq = m.kernel("sq", [](Array<float> c, Array<float> loss) {
        auto i = weft::tid();
        loss[0] += c[i] * c[i];
    });
    auto v = weft::from_vector<weft::vec3>({{1, 2, 3}, {4, 5, 6}}, dev, weft::requires_grad);
    auto loss = weft::zeros<float>(1, dev, weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(sq, 2, v.component(1), loss);
    tape.stop();
    tape.backward(loss);
    EXPECT_EQ(v.grad().to_vector(), (std::vector<weft::host::vec3f>{{0, 4, 0}, {0, 10, 0}}));
    EXPECT_EQ(v.component(1).grad().to_vector(), (std::vector<float>{4, 10}));
    EXPECT_EQ(v.grad().component(1).to_vector(), (std::vector<float>{4, 10}));
}

// A transposed 2-D composite array: the gradient lands in the base's layout.
TEST(CompositeAutodiff, GradientThroughATransposedTwoDimensionalView) {
    const auto dev = test_device();
    weft::Module m{"composite_ad_transposed", {.deterministic = Deterministic::RunToRun}};
    auto k = m.kernel("k", [](Array<weft::vec3d, 2> x, Array<double> loss) {
        auto i = weft::tid();
        weft::for_(0, x.shape(1), [&](weft::Int j) {
            weft::vec3d p = x(i, j);
            loss[0] += weft::dot(p, p) + p.x * weft::cast<double>(i);
        });
    });
    std::vector<weft::host::vec3d> h;
    for (int e = 0; e < 6; ++e) h.push_back({double(e), 1.0 + e, -2.0 * e});
    auto x = weft::from_vector<weft::vec3d>(h, weft::Shape{2, 3}, dev);
    x.requires_grad_();
    auto loss = weft::zeros<double>(1, dev, weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, 3, x.transpose(), loss);
    tape.stop();
    tape.backward(loss);
    auto g = x.grad().to_vector();
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
            auto e = h[r * 3 + c];
            weft::host::vec3d want{2 * e.x + c, 2 * e.y, 2 * e.z};
            EXPECT_EQ(g[r * 3 + c], want) << r << " " << c;
        }
}

// A manual adjoint launch checks a composite gradient's component count and shape.
TEST(CompositeAutodiff, ManualAdjointChecksCompositeGradients) {
    const auto dev = test_device();
    weft::Module m{"composite_ad_wrong_grad"};
    auto k = m.kernel(
        "k", [](Array<weft::vec3> x, Array<float> loss) { loss[0] += weft::length_sq(x[weft::tid()]); });
    auto x = weft::zeros<weft::vec3>(2, dev);
    auto loss = weft::zeros<float>(1, dev);
    auto g4 = weft::zeros<weft::vec4>(2, dev);
    auto lg = weft::ones<float>(1, dev);
    const weft::Error four = weft::test::error_from([&] { weft::launch_adjoint(k, 2, {g4, lg}, x, loss); });
    EXPECT_TRUE(weft::test::has(four.message(), "must be an array of float32 x 3 of shape (2)"))
        << four.message();
    EXPECT_TRUE(weft::test::has(four.message(), "got one of float32 x 4")) << four.message();
    auto g3 = weft::zeros<weft::vec3>(3, dev);
    const weft::Error longer = weft::test::error_from([&] { weft::launch_adjoint(k, 2, {g3, lg}, x, loss); });
    EXPECT_TRUE(weft::test::has(longer.message(), "got one of float32 x 3 of shape (3)")) << longer.message();
}

}  // namespace
