// Custom adjoints (Module::func_grad, weft::adjoint) and custom replays (Module::func_replay).
#include <gtest/gtest.h>

#include <random>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Float;
using weft::Int;
using weft::test::error_from;
using weft::test::exact_sum;
using weft::test::has;
using weft::test::same_bits;

weft::Device dev() {
    return weft::test::test_device();
}

// The spec's custom adjoint of a load: adjoint(values)[index] += adj_ret, in a GpuToGpu module.
TEST(CustomAdjoint, GatherGpuToGpuIsExact) {
    weft::Module m{"custom_gather", {.deterministic = Deterministic::GpuToGpu}};
    auto load_value =
        m.func("load_value", [](Array<float> values, Int index) { return values[index] * 1.0f; });
    // Deliberately not the true derivative (3x), so the test sees that the custom one is used.
    m.func_grad(load_value, [](Array<float> values, Int index, Float adj_ret) {
        weft::adjoint(values)[index] += adj_ret * 3.0f;
    });
    auto gather = m.kernel("gather", [&](Array<float> values, Array<int> indices, Array<float> out) {
        auto t = weft::tid();
        out[t] = load_value(values, indices[t]);
    });
    const int threads = 2048;
    std::mt19937 rng(1);
    std::vector<int> idx(threads);
    std::vector<float> og(threads);
    for (int t = 0; t < threads; ++t) {
        idx[t] = static_cast<int>(rng() % 16);
        og[t] = std::ldexp(static_cast<float>(rng() % 1000) - 500.0f, static_cast<int>(rng() % 40) - 20);
    }
    auto values = weft::zeros<float>(16, dev());
    auto indices = weft::from_vector(idx, dev());
    auto out = weft::zeros<float>(threads, dev());
    auto out_grad = weft::from_vector(og, dev());
    std::vector<std::vector<float>> contributions(16);
    for (int t = 0; t < threads; ++t) contributions[static_cast<size_t>(idx[t])].push_back(og[t] * 3.0f);
    // Three runs, then the mode off and on again: the custom adjoint is recompiled with it.
    for (Deterministic mode : {Deterministic::GpuToGpu, Deterministic::GpuToGpu, Deterministic::GpuToGpu,
                               Deterministic::NotGuaranteed, Deterministic::GpuToGpu}) {
        m.set_options({.deterministic = mode});
        auto g = weft::zeros<float>(16, dev());
        weft::launch_adjoint(gather, threads, {g, weft::AnyArray(), out_grad}, values, indices, out);
        const std::vector<float> got = g.to_vector();
        for (int s = 0; s < 16; ++s) {
            const float exact = exact_sum(0.0f, contributions[s]);
            if (mode == Deterministic::GpuToGpu)
                ASSERT_TRUE(same_bits(got[s], exact)) << s;
            else
                ASSERT_NEAR(got[s], exact, 1e-3f * std::abs(exact) + 1e-3f) << s;
        }
    }
}

// A custom adjoint that goes through a scratch array of its own: x^2 gives 6 at x = 3.
TEST(CustomAdjoint, WithAScratchStore) {
    weft::Module m{"custom_scratch_adjoint"};
    auto square = m.func("square", [](Array<float> x, Array<float> scratch, Int t) { return x[t] * x[t]; });
    m.func_grad(square, [](Array<float> x, Array<float> scratch, Int t, Float adj_ret) {
        scratch[t] = x[t] * 2.0f * adj_ret;
        weft::adjoint(x)[t] += scratch[t];
    });
    auto k = m.kernel("k", [&](Array<float> x, Array<float> scratch, Array<float> out) {
        out[weft::tid()] = square(x, scratch, weft::tid());
    });
    auto x = weft::full<float>(3, 3.0f, dev(), weft::requires_grad);
    auto scratch = weft::zeros<float>(3, dev());
    auto out = weft::zeros<float>(3, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, 3, x, scratch, out);
    tape.stop();
    tape.backward(out.slice(0, 0, 1));  // a one-element view: only out[0]'s gradient is 1
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{6, 0, 0}));
    EXPECT_EQ(scratch.to_vector(), (std::vector<float>{6, 0, 0}));
}

// bincount: out[bins[t]] += weights[t]; the custom adjoint reads out's gradient.
TEST(CustomAdjoint, BincountReadsTheOutputGradient) {
    weft::Module m{"custom_bincount"};
    auto count_into = m.func("count_into", [](Array<float> weights, Array<int> bins, Array<float> out,
                                              Int t) { out[bins[t]] += weights[t]; });
    m.func_grad(count_into, [](Array<float> weights, Array<int> bins, Array<float> out, Int t) {
        weft::adjoint(weights)[t] += weft::adjoint(out)[bins[t]] * 2.0f;  // twice the true derivative
    });
    auto bincount = m.kernel("bincount", [&](Array<float> weights, Array<int> bins, Array<float> out) {
        count_into(weights, bins, out, weft::tid());
    });
    auto weights = weft::ones<float>(6, dev(), weft::requires_grad);
    auto bins = weft::from_vector<int>({0, 1, 1, 2, 2, 2}, dev());
    auto out = weft::zeros<float>(3, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(bincount, 6, weights, bins, out);
    tape.stop();
    EXPECT_EQ(out.to_vector(), (std::vector<float>{1, 2, 3}));
    out.grad().copy_from_host(std::vector<float>{10, 20, 30}.data(), 3);
    tape.backward();
    EXPECT_EQ(weights.grad().to_vector(), (std::vector<float>{20, 40, 40, 60, 60, 60}));
    // Without a gradient for `out` the custom adjoint reads zero.
    auto w_grad = weft::zeros<float>(6, dev());
    weft::launch_adjoint(bincount, 6, {w_grad, weft::AnyArray(), weft::AnyArray()}, weights, bins, out);
    EXPECT_EQ(w_grad.to_vector(), std::vector<float>(6, 0.0f));
}

// x^2 written through a scratch array: the forward stores and reloads it, which a generated
// backward rejects; a custom replay recomputes it, and the gradient is 2x = 6 at x = 3.
TEST(CustomReplay, SquareThroughAScratchArray) {
    weft::Module m{"custom_scratch"};
    auto square = m.func("square", [](Array<float> x, Array<float> scratch, Int t) {
        scratch[t] = x[t] * x[t];
        return scratch[t] * 1.0f;
    });
    m.func_replay(square, [](Array<float> x, Array<float> scratch, Int t) { return x[t] * x[t]; });
    auto k = m.kernel("k", [&](Array<float> x, Array<float> scratch, Array<float> out) {
        auto t = weft::tid();
        out[t] = square(x, scratch, t);
    });
    auto x = weft::full<float>(2, 3.0f, dev(), weft::requires_grad);
    auto scratch = weft::zeros<float>(2, dev());
    auto out = weft::zeros<float>(2, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, 2, x, scratch, out);
    tape.stop();
    out.grad().fill_(1.0f);
    tape.backward();
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{6, 6}));
}

// The spec's supported path for slot allocation: the forward saves each slot, the custom replay
// reads it instead of allocating again; the gradient of a square written through a slot is 2x.
TEST(CustomReplay, SavedSlotsMakeSlotAllocationDifferentiable) {
    for (Deterministic mode : {Deterministic::NotGuaranteed, Deterministic::RunToRun}) {
        weft::Module m{"custom_slots", {.deterministic = mode}};
        auto reserve = m.func("reserve", [](Array<int> count, Array<int> slots, Int t) {
            auto slot = weft::atomic_add(count, 0, 1);
            slots[t] = slot;
            return slot;
        });
        m.func_replay(reserve, [](Array<int> count, Array<int> slots, Int t) { return slots[t] + 0; });
        auto compact =
            m.kernel("compact", [&](Array<float> x, Array<int> count, Array<int> slots, Array<float> out) {
                auto t = weft::tid();
                out[reserve(count, slots, t)] = x[t] * x[t];
            });
        auto x = weft::from_vector<float>({1, 2, 3, 4}, dev(), weft::requires_grad);
        auto count = weft::zeros<int>(1, dev());
        auto slots = weft::zeros<int>(4, dev());
        auto out = weft::zeros<float>(4, dev(), weft::requires_grad);
        weft::Tape tape;
        tape.start();
        weft::launch(compact, 4, x, count, slots, out);
        tape.stop();
        std::vector<float> weight = {1, 10, 100, 1000};  // by slot
        out.grad().copy_from_host(weight.data(), 4);
        tape.backward();
        const std::vector<int> s = slots.to_vector();
        const std::vector<float> g = x.grad().to_vector();
        for (int t = 0; t < 4; ++t) EXPECT_EQ(g[t], 2.0f * static_cast<float>(t + 1) * weight[s[t]]) << t;
    }
}

TEST(CustomAdjoint, Rejections) {
    weft::Module m{"custom_rejections"};
    auto f = m.func("f", [](Array<float> x, Int t) { return x[t] * 2.0f; });
    EXPECT_TRUE(
        has(error_from([&] { m.func_grad(f, [](Array<float> x, Int t) { (void)x, (void)t; }); }).message(),
            "must take the function's parameters, then the adjoint of its result"));
    EXPECT_TRUE(has(error_from([&] { m.func_replay(f, [](Array<float> x) { return x[0]; }); }).message(),
                    "must take the function's parameters and return what it returns"));
    // A consumed counter inside a custom adjoint is rejected before the backward launches.
    m.func_grad(f, [](Array<float> x, Int t, Float adj_ret) {
        (void)t;
        weft::adjoint(x)[0] += adj_ret;
    });
    auto g = m.func(
        "g", [](Array<float> x, Array<int> count, Int t) { return x[t] + weft::cast<float>(count[0]); });
    m.func_grad(g, [](Array<float> x, Array<int> count, Int t, Float adj_ret) {
        auto slot = weft::atomic_add(count, 0, 1);
        weft::adjoint(x)[slot] += adj_ret;
        (void)t;
    });
    auto k = m.kernel("k", [&](Array<float> x, Array<int> count, Array<float> out) {
        out[weft::tid()] = g(x, count, weft::tid()) + f(x, weft::tid());
    });
    auto x = weft::zeros<float>(2, dev(), weft::requires_grad);
    auto count = weft::zeros<int>(1, dev());
    auto out = weft::zeros<float>(2, dev(), weft::requires_grad);
    const weft::Error e = error_from([&] {
        weft::launch_adjoint(k, 2, {x.grad(), {}, out.grad()}, x, count, out);
    });
    EXPECT_TRUE(has(e.message(), "the custom adjoint 'g__grad' uses the result of atomic_add")) << e.what();
    EXPECT_TRUE(has(e.file(), "autodiff_custom_test.cpp"));
    EXPECT_EQ(x.grad().to_vector(), std::vector<float>(2, 0.0f));
    // A custom adjoint that stores to a gradient instead of accumulating into it.
    auto h = m.func("h", [](Array<float> x, Int t) { return x[t] * 1.0f; });
    m.func_grad(h, [](Array<float> x, Int t, Float adj_ret) { weft::adjoint(x)[t] = adj_ret; });
    auto uses_h =
        m.kernel("uses_h", [&](Array<float> x, Array<float> out) { out[weft::tid()] = h(x, weft::tid()); });
    const weft::Error stored = error_from([&] {
        weft::launch_adjoint(uses_h, 2, {x.grad(), out.grad()}, x, out);
    });
    EXPECT_TRUE(
        has(stored.message(), "stores to a gradient; accumulate into it with weft::adjoint(a)[i] += v"))
        << stored.what();
    // weft::adjoint outside a custom adjoint.
    auto bad = m.kernel("bad", [](Array<float> x) { weft::adjoint(x)[0] += 1.0f; });
    EXPECT_TRUE(has(error_from([&] { weft::launch(bad, 1, x); }).message(),
                    "weft::adjoint(array) is only available in a custom adjoint"));
}

}  // namespace
