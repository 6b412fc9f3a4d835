// Generated adjoints against central finite differences (float64): every differentiable builtin
// and every control-flow form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include <weft/weft.hpp>

#include "support/gradient_check.hpp"

namespace {

using weft::Array;
using weft::Double;
using weft::Int;
using weft::test::check_gradient;

weft::Module& module() {
    static weft::Module m{"autodiff_gradients"};
    return m;
}

using D = Array<double>;

const std::vector<double> kPositive = {0.7, 1.3, 2.1, 0.4, 1.9, 0.9};
const std::vector<double> kMixed = {-0.7, 1.3, -2.1, 0.4, 1.9, -0.9};

TEST(AutodiffBuiltins, Arithmetic) {
    static auto k = module().kernel("arith", [](D x, D out) {
        auto t = weft::tid();
        Double a = x[2 * t];
        Double b = x[2 * t + 1];
        out[4 * t] = a * b + a / b - b;
        out[4 * t + 1] = -a * a * 3.0;
        out[4 * t + 2] = (a - b) / (a * b);
        out[4 * t + 3] = weft::pow(a, b) + weft::pow(b, 2.0);
    });
    check_gradient(k, 3, kPositive, 12, 1e-5);
}

TEST(AutodiffBuiltins, MathFunctions) {
    static auto k = module().kernel("math", [](D x, D out) {
        auto t = weft::tid();
        Double a = x[t];
        out[8 * t] = weft::sin(a);
        out[8 * t + 1] = weft::cos(a);
        out[8 * t + 2] = weft::exp(a);
        out[8 * t + 3] = weft::log(a * a + 1.0);
        out[8 * t + 4] = weft::sqrt(a * a + 0.5);
        out[8 * t + 5] = weft::abs(a) * 2.0;
        out[8 * t + 6] = weft::floor(a) + weft::ceil(a) * a;  // floor, ceil: zero derivative
        out[8 * t + 7] = (a * 3.0) % 1.1;
    });
    check_gradient(k, 6, kMixed, 48, 1e-5);
}

// The adjoints of sin and cos against their closed forms over many inputs, a guard independent of
// the finite differences above (issue 32, item 19: a cos adjoint of flipped sign was caught by one
// test only): d/dx (cos x + 2 sin x) = -sin x + 2 cos x, to a few ulps, at 4,096 inputs.
TEST(AutodiffBuiltins, SinAndCosAdjointsAreTheirClosedFormsAtManyInputs) {
    static auto k = module().kernel("trig_sum", {"x", "out"}, [](D x, D out) {
        auto t = weft::tid();
        out[t] = weft::cos(x[t]) + 2.0 * weft::sin(x[t]);
    });
    const weft::Device dev = weft::test::test_device();
    const int n = 4096;
    std::vector<double> hx(n);
    for (int i = 0; i < n; ++i) hx[i] = -10.0 + 20.0 * (i + 0.5) / n;
    auto x = weft::from_vector(hx, dev, weft::requires_grad);
    auto out = weft::zeros<double>(n, dev, weft::requires_grad);
    weft::Tape tape;
    {
        const weft::TapeRecording recording(tape);
        weft::launch(k, n, x, out);
    }
    tape.backward({{out, weft::ones_like(out)}});
    const std::vector<double> g = x.grad().to_vector();
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        const double want = -std::sin(hx[i]) + 2.0 * std::cos(hx[i]);
        if (!(std::abs(g[i] - want) <= 1e-12 * (1.0 + std::abs(want)))) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << "of " << n << " gradients";
}

TEST(AutodiffBuiltins, MinMaxSelectClamp) {
    static auto k = module().kernel("choose", [](D x, D out) {
        auto t = weft::tid();
        Double a = x[2 * t];
        Double b = x[2 * t + 1];
        out[4 * t] = weft::min(a, b) * 2.0;
        out[4 * t + 1] = weft::max(a, b) * a;
        out[4 * t + 2] = weft::select(a > b, a * a, b * 3.0);
        out[4 * t + 3] = weft::clamp(a * b, -1.0, 1.0);
    });
    check_gradient(k, 3, kMixed, 12);
}

// Through float32 and back: the derivative is exact, the differences only to float precision.
TEST(AutodiffBuiltins, Casts) {
    static auto k = module().kernel("casts", [](D x, D out) {
        auto t = weft::tid();
        weft::Float f = weft::cast<float>(x[t]);
        out[t] = weft::cast<double>(f * f * 2.0f) + weft::cast<double>(weft::cast<int32_t>(x[t] * 10.0));
    });
    check_gradient(k, 6, {-0.71, 1.33, -2.13, 0.45, 1.91, -0.93}, 6, 1e-3, 1e-3);
}

TEST(AutodiffControlFlow, IfElse) {
    static auto k = module().kernel("branches", [](D x, D out) {
        auto t = weft::tid();
        Double a = x[t];
        Double y = a;
        weft::if_(
            a > 0.0, [&] { y = a * a; },
            [&] {
                y = y * 3.0;
                weft::if_(a < -1.0, [&] { y = y * a; });
            });
        out[t] = y + a;
    });
    check_gradient(k, 6, kMixed, 6);
}

TEST(AutodiffControlFlow, ForWithConstantBoundsAndAccumulation) {
    static auto k = module().kernel("sum_squares", [](D x, D out) {
        Double total = 0.0;
        weft::for_(6, [&](Int i) {
            Double v = x[i];
            total += v * v * x[(i + 1) % 6];
        });
        out[0] = total;
    });
    check_gradient(k, 1, kMixed, 1);
}

TEST(AutodiffControlFlow, ForWithDataDependentBoundsAndCarriedProduct) {
    static auto k = module().kernel("product", [](D x, D out) {
        auto t = weft::tid();
        Int n = weft::cast<int32_t>(weft::floor(x[0] * 0.0)) + 2 + t;  // 2 + t factors
        Double p = 1.0;
        weft::for_(1, n + 1, [&](Int i) { p = p * x[i] + x[i]; });  // p read across iterations
        out[t] = p;
    });
    check_gradient(k, 4, kPositive, 4);
}

TEST(AutodiffControlFlow, WhileLoop) {
    static auto k = module().kernel("repeat", [](D x, D out) {
        auto t = weft::tid();
        Double v = x[t];
        Int steps = 0;
        weft::while_([&] { return v < 10.0; },
                     [&] {
                         v = v * (x[t] + 1.0);
                         steps += 1;
                     });
        out[t] = v + weft::cast<double>(steps);
    });
    check_gradient(k, 6, kPositive, 6);
}

// A loop of more than 2^31 - 1 iterations is swept whole (issue 32, item 8: its 32-bit trip count
// wrapped, the reverse sweep ran no iteration, and d/dx was 0 for 6). The index of each iteration
// is found again from the 64-bit count, so the last three, which add, are the ones swept as such.
TEST(AutodiffControlFlow, ALoopOfMoreThan2To31IterationsIsSweptWhole) {
    static auto k = module().kernel("long_loop", {"x", "out"}, [](D x, D out) {
        Double acc = 0.0;
        weft::for_(std::numeric_limits<int32_t>::min(), 3, [&](Int i) {  // 2^31 + 3 iterations
            weft::if_(i >= 0, [&] { acc += x[0] * weft::cast<double>(i + 1); });
        });
        out[0] = acc;
    });
    const weft::Device dev = weft::test::test_device();
    // The count and the sweep are the same IR on every device; one GPU thread takes a minute
    // (an H200) for the three passes over 2^31 iterations, against half a second on a CPU.
    if (dev.is_cuda()) GTEST_SKIP() << "CPU only: a GPU thread takes a minute over 2^31 iterations";
    auto x = weft::from_vector<double>({0.25}, dev, weft::requires_grad);
    auto out = weft::zeros<double>(1, dev, weft::requires_grad);
    weft::Tape tape;
    {
        const weft::TapeRecording recording(tape);
        weft::launch(k, 1, x, out);
    }
    EXPECT_EQ(out.to_vector(), std::vector<double>{0.25 * 6});
    tape.backward(out);
    EXPECT_EQ(x.grad().to_vector(), std::vector<double>{1 + 2 + 3});
}

// A loop of a million iterations that carries its product is swept from checkpoints (issue 32,
// item 15: every swept iteration replayed the ones before it, so the backward pass of 16k
// iterations took a second, of 80k eight, and of a million would take twenty minutes):
// p = x0 q^n, d/dx0 = q^n, d/dq = n x0 q^(n-1).
TEST(AutodiffControlFlow, ALongLoopCarryingItsStateIsSweptInLinearTime) {
    static auto k = module().kernel("long_product", {"x", "out"}, [](D x, D out) {
        Double p = x[0];
        weft::for_(1000000, [&](Int) { p = p * x[1]; });
        out[0] = p;
    });
    const weft::Device dev = weft::test::test_device();
    const double x0 = 0.75, q = 1.0 + 1e-6, n = 1000000;
    auto x = weft::from_vector<double>({x0, q}, dev, weft::requires_grad);
    auto out = weft::zeros<double>(1, dev, weft::requires_grad);
    weft::Tape tape;
    {
        const weft::TapeRecording recording(tape);
        weft::launch(k, 1, x, out);
    }
    tape.backward(out);
    const std::vector<double> g = x.grad().to_vector();
    EXPECT_NEAR(g[0], std::pow(q, n), 1e-8 * std::pow(q, n));
    EXPECT_NEAR(g[1], n * x0 * std::pow(q, n - 1), 1e-8 * n * x0 * std::pow(q, n - 1));
}

// The gradients of loops swept from checkpoints are the same bits however many checkpoints the
// launch's memory holds: here 4,096 threads of a 2-D launch (each its own column of the scratch),
// a while_ carrying an int and a float, swept with one checkpoint for each iteration (the default
// memory) and with 8 per level (1 MB: both levels strided, each iteration replayed from the
// nearest checkpoint of the second), against the closed form x0 q^n.
TEST(AutodiffControlFlow, CheckpointedLoopsGiveTheSameBitsWhateverTheirMemory) {
    static auto k =
        module().kernel("while_product", {"x", "q", "n", "out"}, [](D x, D q, Array<int32_t> n, D out) {
            auto [i, j] = weft::tid<2>();
            auto t = i * 64 + j;
            Double p = x[t];
            Int step = 0;
            weft::while_([&] { return step < n[t]; },
                         [&] {
                             p = p * q[t];
                             step += 1;
                         });
            out[t] = p;
        });
    const weft::Device dev = weft::test::test_device();
    const int threads = 64 * 64;
    std::vector<double> hx(threads), hq(threads);
    std::vector<int32_t> hn(threads);
    for (int t = 0; t < threads; ++t) {
        hx[t] = 0.5 + 0.001 * t;
        hq[t] = 1.0 + 1e-4 * (t % 7);
        hn[t] = 900 + t % 300;  // 900..1,199 iterations: past 16^2 checkpoints
    }
    const auto gradients = [&](const char* megabytes) {
        if (megabytes)
            setenv("WEFT_ADJOINT_CHECKPOINT_MB", megabytes, 1);
        else
            unsetenv("WEFT_ADJOINT_CHECKPOINT_MB");
        auto x = weft::from_vector(hx, dev, weft::requires_grad);
        auto q = weft::from_vector(hq, dev, weft::requires_grad);
        auto out = weft::zeros<double>(threads, dev, weft::requires_grad);
        weft::Tape tape;
        {
            const weft::TapeRecording recording(tape);
            weft::launch(k, {64, 64}, x, q, weft::from_vector(hn, dev), out);
        }
        tape.backward({{out, weft::ones_like(out)}});
        unsetenv("WEFT_ADJOINT_CHECKPOINT_MB");
        std::vector<double> g = x.grad().to_vector();
        const std::vector<double> gq = q.grad().to_vector();
        g.insert(g.end(), gq.begin(), gq.end());
        return g;
    };
    const std::vector<double> roomy = gradients(nullptr), tight = gradients("1");
    int wrong = 0;
    for (int t = 0; t < threads; ++t) {
        const double want_x = std::pow(hq[t], hn[t]);
        const double want_q = hn[t] * hx[t] * std::pow(hq[t], hn[t] - 1);
        wrong += !(std::abs(roomy[t] - want_x) <= 1e-10 * want_x);
        wrong += !(std::abs(roomy[threads + t] - want_q) <= 1e-10 * want_q);
    }
    EXPECT_EQ(wrong, 0) << "of " << 2 * threads << " gradients";
    EXPECT_EQ(roomy, tight) << "the same bits with 16 checkpoints per level as with one per iteration";
}

TEST(AutodiffControlFlow, BreakContinueReturn) {
    static auto k = module().kernel("exits", [](D x, D out) {
        auto t = weft::tid();
        weft::if_(t >= 5, [&] { weft::return_(); });
        Double acc = 0.0;
        weft::for_(6, [&](Int i) {
            weft::if_(i == t, [&] { weft::continue_(); });
            weft::if_(acc > 3.0, [&] { weft::break_(); });
            acc += x[i] * x[t];
        });
        out[t] = acc;
    });
    check_gradient(k, 6, kPositive, 6);
}

TEST(AutodiffControlFlow, WeftFunctionCalls) {
    static auto f = module().func("smooth_step", [](Double a, Double b) {
        weft::if_(a > b, [&] { weft::return_(a * b); });
        Double r = a * a;
        return r - b;
    });
    static auto k = module().kernel("calls", [](D x, D out) {
        auto t = weft::tid();
        out[t] = f(x[t], x[(t + 1) % 6]) * 2.0;
    });
    check_gradient(k, 6, kMixed, 6);
}

TEST(AutodiffLoadsStores, GatherScatterAndAtomics) {
    static auto k = module().kernel("moves", [](D x, D out) {
        auto t = weft::tid();
        out[(t * 5) % 6] = x[t] * 2.0;              // a store through a permutation
        out[6] += x[t] * x[t];                      // atomic add
        out[7] -= x[(t + 2) % 6];                   // atomic sub
        weft::atomic_add(out, 8, weft::sin(x[t]));  // the function form
    });
    check_gradient(k, 6, kMixed, 9);
}

// Composite values trace to scalars, so their builtins are differentiated through the scalar rules.
TEST(AutodiffComposites, Vec3Builtins) {
    static auto k = module().kernel("vectors", [](D x, D out) {
        const weft::vec3d a(x[0], x[1], x[2]);
        const weft::vec3d b(x[3], x[4], x[5]);
        const weft::vec3d c = weft::cross(a, b);
        out[0] = weft::dot(c, a + b * 2.0);
        out[1] = weft::length(a - b);
        const weft::vec3d n = weft::normalize(b);
        out[2] = n.x * 3.0 + n.y - n.z;
    });
    check_gradient(k, 1, kMixed, 3);
}

}  // namespace
