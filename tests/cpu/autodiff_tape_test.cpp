// The tape (record, backward, zero, reset), manual adjoint launches, and what a backward rejects.
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Float;
using weft::test::error_from;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

weft::Module& module() {
    static weft::Module m{"autodiff_tape"};
    return m;
}

// y[t] = x[t] * x[t]; loss += y[t] (two kernels, so the tape chains them).
auto& square() {
    static auto k = module().kernel("square", {"x", "y"}, [](Array<float> x, Array<float> y) {
        auto t = weft::tid();
        y[t] = x[t] * x[t];
    });
    return k;
}
auto& total() {
    static auto k =
        module().kernel("total", [](Array<float> y, Array<float> loss) { loss[0] += y[weft::tid()] * 0.5f; });
    return k;
}

TEST(Tape, BackwardFromAScalarLossRunsTheAdjointsInReverseOrder) {
    auto x = weft::from_vector<float>({1, 2, 3, -4}, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(4, dev(), weft::requires_grad);
    auto loss = weft::zeros<float>(1, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(square(), 4, x, y);
    weft::launch(total(), 4, y, loss);
    tape.stop();
    EXPECT_EQ(tape.size(), 2u);
    EXPECT_EQ(loss.to_vector()[0], 0.5f * (1 + 4 + 9 + 16));
    tape.backward(loss);
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{1, 2, 3, -4}));  // d(x^2 / 2)/dx
    EXPECT_EQ(y.grad().to_vector(), std::vector<float>(4, 0.5f));
    tape.zero();
    EXPECT_EQ(x.grad().to_vector(), std::vector<float>(4, 0.0f));
    EXPECT_EQ(loss.grad().to_vector(), std::vector<float>(1, 0.0f));
    tape.reset();
    EXPECT_EQ(tape.size(), 0u);
    weft::launch(square(), 4, x, y);  // not recording
    EXPECT_EQ(tape.size(), 0u);
}

// A backward pass replays each recorded launch's inputs as they are at backward(), so inputs
// written after the launch that read them would give wrong gradients (issue 32, item 4): the
// same array as the read and the written argument (19 instead of 7), an input overwritten by a
// later launch or from the host (1 instead of 6). backward refuses, naming the array, the
// launch that read it and the write, and changes no gradient.
TEST(Tape, InputsWrittenAfterTheLaunchThatReadThemAreRefused) {
    const auto refused = [](weft::Tape& tape, const std::string& writer) {
        const weft::Error e = error_from([&] { tape.backward(); });
        EXPECT_TRUE(has(e.message(), "the launch of 'square' read its argument 'x', which was written after"))
            << e.message();
        EXPECT_TRUE(has(e.message(), writer)) << e.message();
    };
    {  // in place: x is also the written argument
        auto x = weft::from_vector<float>({1, 2}, dev(), weft::requires_grad);
        weft::Tape tape;
        tape.start();
        const int line = __LINE__ + 1;
        weft::launch(square(), 2, x, x);
        tape.stop();
        x.grad().fill_(1.0f);
        const weft::Error e = error_from([&] { tape.backward(); });
        EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
        refused(tape, "by that same launch, through its argument 'y'");
        EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{1, 1})) << "no gradient changed";
    }
    {  // overwritten by a later launch
        auto x = weft::from_vector<float>({1, 2}, dev(), weft::requires_grad);
        auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
        auto other = weft::from_vector<float>({5, 6}, dev());
        weft::Tape tape;
        tape.start();
        weft::launch(square(), 2, x, y);
        const int line = __LINE__ + 1;
        weft::launch(square(), 2, other, x);
        tape.stop();
        refused(tape, "the launch of 'square' at " + std::string(__FILE__) + ":" + std::to_string(line) +
                          ", through its argument 'y'");
    }
    {  // overwritten from the host, after recording
        auto x = weft::from_vector<float>({1, 2}, dev(), weft::requires_grad);
        auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
        weft::Tape tape;
        tape.start();
        weft::launch(square(), 2, x, y);
        tape.stop();
        x.fill_(3.0f);
        refused(tape, "a host write");
        // Recorded again from the new values, it runs.
        tape.reset();
        tape.start();
        weft::launch(square(), 2, x, y);
        tape.stop();
        y.grad().fill_(1.0f);
        tape.backward();
        EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{6, 6}));
    }
}

// The scoped recording stops at the end of its scope, also when an exception leaves it, and
// leaves a tape that was recording already recording.
TEST(Tape, ARecordingScopeStopsTheTapeOnExitAndOnAnException) {
    auto x = weft::from_vector<float>({1, 2, 3, -4}, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(4, dev(), weft::requires_grad);
    weft::Tape tape;
    {
        auto recording = tape.record();
        EXPECT_TRUE(tape.recording());
        weft::launch(square(), 4, x, y);
    }
    EXPECT_FALSE(tape.recording());
    EXPECT_EQ(tape.size(), 1u);
    weft::launch(square(), 4, x, y);  // after the scope: not recorded
    EXPECT_EQ(tape.size(), 1u);

    const weft::Error e = error_from([&] {
        weft::TapeRecording recording(tape);
        weft::launch(square(), 0, x, y);  // an empty grid: a weft::Error leaves the scope
    });
    EXPECT_TRUE(has(e.message(), "launch dimension 0 is 0")) << e.message();
    EXPECT_FALSE(tape.recording()) << "an exception stops the recording too";

    tape.start();
    { auto inner = tape.record(); }
    EXPECT_TRUE(tape.recording()) << "a scope that did not start the tape does not stop it";
    tape.stop();
}

// backward from given output gradients (the spec's backward(grads={y: g})), with ones_like.
TEST(Tape, BackwardFromOutputGradientPairs) {
    auto x = weft::from_vector<float>({1, 2, 3, -4}, weft::Shape{4}, dev(), weft::requires_grad);
    EXPECT_TRUE(x.requires_grad());
    auto y = weft::zeros<float>(4, dev(), weft::requires_grad);
    weft::Tape tape;
    {
        auto recording = tape.record();
        weft::launch(square(), 4, x, y);
    }
    tape.backward({{y, weft::ones_like(y)}});
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{2, 4, 6, -8}));  // 2 x * 1
    tape.zero();
    tape.backward({{y, weft::from_vector<float>({1, 0, 0.5f, 2}, dev())}});
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{2, 0, 3, -16}));
    EXPECT_EQ(weft::zeros_like(y).to_vector(), std::vector<float>(4, 0.0f));

    // A gradient of another shape, or an output without a gradient, changes nothing.
    int line = __LINE__ + 1;
    weft::Error e = error_from([&] { tape.backward({{y, weft::ones<float>({2, 2}, dev())}}); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "differs from its output in element type or shape")) << e.message();
    auto plain = weft::zeros<float>(4, dev());
    e = error_from([&] { tape.backward({{y, weft::ones_like(y)}, {plain, weft::ones_like(plain)}}); });
    EXPECT_TRUE(has(e.message(), "an output has no gradient")) << e.message();
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{2, 0, 3, -16}));
}

// A recorded launch made while the tape records is on the tape (its gradient was 0 before);
// a graph launch cannot be, so it is refused (issue 25, item 2).
TEST(Tape, RecordedLaunchesAreRecordedAndGraphLaunchesRefused) {
    auto x = weft::from_vector<float>({1, 2, 3, -4}, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(4, dev(), weft::requires_grad);
    auto loss = weft::zeros<float>(1, dev(), weft::requires_grad);
    weft::RecordedLaunch squares(square(), 4, x, y);
    weft::Graph graph = weft::capture(dev(), [&] { weft::launch(total(), 4, y, loss); });
    weft::Tape tape;
    tape.start();
    squares.launch();
    weft::launch(total(), 4, y, loss);
    const weft::Error e = error_from([&] { graph.launch(); });
    tape.stop();
    EXPECT_TRUE(has(e.message(), "Graph::launch while a weft::Tape records")) << e.message();
    EXPECT_EQ(tape.size(), 2u);
    tape.backward(loss);
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{1, 2, 3, -4}));
    graph.launch();  // not recording: fine
    weft::synchronize(dev());
}

// A chain of three launches differentiated by the tape against its closed form at many inputs, a
// guard independent of the two-launch test above (issue 32, item 19: a backward that replayed the
// forward kernels, or ran the adjoints first to last, was caught by one test only). Run first to
// last, the first adjoint would find no gradient yet and give 0.
TEST(Tape, AChainOfThreeLaunchesHasTheGradientOfItsClosedForm) {
    static auto scale = module().kernel("chain_scale", {"x", "y"}, [](Array<double> x, Array<double> y) {
        auto t = weft::tid();
        y[t] = x[t] * 3.0;
    });
    static auto wave = module().kernel("chain_sin", {"y", "z"}, [](Array<double> y, Array<double> z) {
        auto t = weft::tid();
        z[t] = weft::sin(y[t]);
    });
    static auto squares =
        module().kernel("chain_squares", {"z", "loss"}, [](Array<double> z, Array<double> loss) {
            auto t = weft::tid();
            weft::atomic_add(loss, 0, z[t] * z[t]);
        });
    const int n = 1000;
    std::vector<double> hx(n);
    for (int i = 0; i < n; ++i) hx[i] = std::cos(0.37 * i) * 2.0;
    auto x = weft::from_vector(hx, dev(), weft::requires_grad);
    auto y = weft::zeros<double>(n, dev(), weft::requires_grad);
    auto z = weft::zeros<double>(n, dev(), weft::requires_grad);
    auto loss = weft::zeros<double>(1, dev(), weft::requires_grad);
    weft::Tape tape;
    {
        const weft::TapeRecording recording(tape);
        weft::launch(scale, n, x, y);
        weft::launch(wave, n, y, z);
        weft::launch(squares, n, z, loss);
    }
    tape.backward(loss);
    const std::vector<double> g = x.grad().to_vector();
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        const double want = 6.0 * std::sin(3.0 * hx[i]) * std::cos(3.0 * hx[i]);  // d sin^2(3x)/dx
        if (!(std::abs(g[i] - want) <= 1e-12 * (1.0 + std::abs(want)))) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << "of " << n << " gradients";
}

// A backward captured into a graph runs at each replay, not while capturing, and its replays add
// what as many direct backward passes add (issue 32, item 3: it ran once while capturing and its
// replays added nothing). The loss's seed is part of the graph.
// The kernels have a module of their own, compiled with its adjoints only inside the capture.
TEST(Tape, ACapturedBackwardAddsAtEveryReplayWhatDirectPassesAdd) {
    weft::Module m{"autodiff_tape_captured"};
    const auto square = m.kernel("square", {"x", "y"}, [](Array<float> x, Array<float> y) {
        auto t = weft::tid();
        y[t] = x[t] * x[t];
    });
    const auto total = m.kernel("total", {"y", "loss"}, [](Array<float> y, Array<float> loss) {
        weft::atomic_add(loss, 0, y[weft::tid()] * 0.5f);
    });
    const auto record = [&](weft::Tape& tape, const weft::AnyArray& x, const weft::AnyArray& y,
                            const weft::AnyArray& loss) {
        const weft::TapeRecording recording(tape);
        weft::launch(square, 4, x, y);
        weft::launch(total, 4, y, loss);
    };
    const std::vector<float> inputs{1, 2, 3, -4};
    auto x = weft::from_vector<float>(inputs, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(4, dev(), weft::requires_grad);
    auto loss = weft::zeros<float>(1, dev(), weft::requires_grad);
    weft::Tape tape;
    record(tape, x, y, loss);
    weft::Graph graph = weft::capture(dev(), [&] { tape.backward(loss); });
    EXPECT_EQ(x.grad().to_vector(), std::vector<float>(4, 0.0f));  // nothing ran while capturing
    EXPECT_EQ(loss.grad().to_vector(), std::vector<float>{0.0f});

    auto x2 = weft::from_vector<float>(inputs, dev(), weft::requires_grad);
    auto y2 = weft::zeros<float>(4, dev(), weft::requires_grad);
    auto loss2 = weft::zeros<float>(1, dev(), weft::requires_grad);
    weft::Tape direct;
    record(direct, x2, y2, loss2);
    for (int replay = 1; replay <= 3; ++replay) {
        graph.launch();
        direct.backward(loss2);
        EXPECT_EQ(x.grad().to_vector(), x2.grad().to_vector()) << "replay " << replay;
        EXPECT_EQ(y.grad().to_vector(), y2.grad().to_vector()) << "replay " << replay;
    }
    // The seed sets the loss's gradient to one at each replay (the adjoints add into the others).
    EXPECT_EQ(loss.grad().to_vector(), std::vector<float>{1.0f});
    EXPECT_EQ(y.grad().to_vector(), std::vector<float>(4, 1.5f));  // 0.5 per replay
    EXPECT_NE(x.grad().to_vector(), std::vector<float>(4, 0.0f));
}

// A whole training step captured (zero the gradients, forward, backward from a float64 loss) gives
// at each replay the gradient one direct step gives.
TEST(Tape, ACapturedStepOfZeroForwardAndBackwardGivesTheSameGradientAtEveryReplay) {
    static auto cube = module().kernel("cube", {"x", "loss"}, [](Array<float> x, Array<double> loss) {
        auto t = weft::tid();
        weft::atomic_add(loss, 0, weft::cast<double>(x[t] * x[t] * x[t]));
    });
    auto x = weft::from_vector<float>({1, 2, 3, -4}, dev(), weft::requires_grad);
    auto loss = weft::zeros<double>(1, dev(), weft::requires_grad);
    weft::Tape tape;
    weft::Graph graph = weft::capture(dev(), [&] {
        loss.zero_();
        {
            const weft::TapeRecording recording(tape);
            weft::launch(cube, 4, x, loss);
        }
        tape.zero();
        tape.backward(loss);
    });
    for (int replay = 1; replay <= 3; ++replay) {
        graph.launch();
        EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{3, 12, 27, 48})) << "replay " << replay;
        EXPECT_EQ(loss.to_vector(), std::vector<double>{1 + 8 + 27 - 64}) << "replay " << replay;
    }
}

// A tape records on one thread at a time: start() on a second thread is refused (eight threads
// recording into one tape crashed before; issue 25, item 9).
TEST(Tape, ASecondThreadCannotRecordIntoATapeThatRecords) {
    weft::Tape tape;
    tape.start();
    std::string refused;
    std::thread other([&] {
        try {
            tape.start();
        } catch (const weft::Error& e) {
            refused = e.message();
        }
    });
    other.join();
    EXPECT_TRUE(has(refused, "recording on another thread")) << refused;
    tape.stop();
    std::thread after([&] {  // once stopped here, another thread may record
        tape.start();
        auto x = weft::from_vector<float>({1, 2}, dev(), weft::requires_grad);
        auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
        weft::launch(square(), 2, x, y);
        tape.stop();
    });
    after.join();
    EXPECT_EQ(tape.size(), 1u);
}

// A tape destroyed while another thread records: that thread's next launch is a weft::Error
// and runs nothing, the one after it runs unrecorded (it crashed before; issue 25, item 10).
TEST(Tape, DestroyingATapeWhileAnotherThreadRecordsIsAnErrorThere) {
    auto tape = std::make_unique<weft::Tape>();
    auto x = weft::from_vector<float>({1, 2}, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
    std::mutex m;
    std::condition_variable cv;
    int step = 0;
    std::string error;
    std::vector<float> after_error, after_next;
    std::thread recorder([&] {
        tape->start();
        {
            std::unique_lock lock(m);
            step = 1;
            cv.notify_all();
            cv.wait(lock, [&] { return step == 2; });
        }
        try {
            weft::launch(square(), 2, x, y);
        } catch (const weft::Error& e) {
            error = e.message();
        }
        after_error = y.to_vector();
        weft::launch(square(), 2, x, y);
        after_next = y.to_vector();
    });
    {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return step == 1; });
        tape.reset();
        step = 2;
        cv.notify_all();
    }
    recorder.join();
    EXPECT_TRUE(has(error, "destroyed by another thread before stop()")) << error;
    EXPECT_EQ(after_error, (std::vector<float>{0, 0})) << "the refused launch ran nothing";
    EXPECT_EQ(after_next, (std::vector<float>{1, 4}));
}

TEST(Tape, BackwardFromGivenOutputGradients) {
    auto x = weft::from_vector<float>({1, 2, 3, -4}, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(4, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(square(), 4, x, y);
    tape.stop();
    y.grad().copy_from_host(std::vector<float>{1, 0, 2, 1}.data(), 4);
    tape.backward();
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{2, 0, 12, -8}));
}

TEST(Tape, LaunchesOfModulesWithoutBackwardAreNotRecorded) {
    static auto k =
        weft::unique_kernel("no_backward", {.enable_backward = false},
                            [](Array<float> x, Array<float> y) { y[weft::tid()] = x[weft::tid()]; });
    auto x = weft::zeros<float>(2, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, 2, x, y);
    weft::launch(square(), 2, x, y);
    tape.stop();
    EXPECT_EQ(tape.size(), 1u);
    const weft::Error e = error_from([&] { weft::launch_adjoint(k, 2, {x.grad(), y.grad()}, x, y); });
    EXPECT_TRUE(has(e.message(), "enable_backward = false")) << e.what();
}

TEST(Tape, OneTapeRecordsPerThread) {
    weft::Tape a, b;
    a.start();
    EXPECT_TRUE(has(error_from([&] { b.start(); }).message(), "another weft::Tape is recording"));
    a.stop();
    b.start();
    EXPECT_TRUE(b.recording());
}

TEST(AdjointLaunch, AMissingInputGradientIsSkippedAndTheOthersAreExact) {
    static auto k = module().kernel("weighted", [](Array<float> a, Array<float> b, Array<float> out) {
        auto t = weft::tid();
        out[t] = a[t] * b[t] * 2.0f;
    });
    auto a = weft::from_vector<float>({1, 2, 3}, dev());
    auto b = weft::from_vector<float>({4, 5, 6}, dev());
    auto out = weft::zeros<float>(3, dev());
    auto b_grad = weft::zeros<float>(3, dev());
    auto out_grad = weft::ones<float>(3, dev());
    weft::launch_adjoint(k, 3, {weft::AnyArray(), b_grad, out_grad}, a, b, out);
    EXPECT_EQ(b_grad.to_vector(), (std::vector<float>{2, 4, 6}));
    EXPECT_EQ(a.to_vector(), (std::vector<float>{1, 2, 3}));  // the forward arrays stay as they were
}

TEST(AdjointLaunch, AStridedGradientViewReceivesItsElements) {
    static auto k = module().kernel("tripled", [](Array<float> x, Array<float> out) {
        auto t = weft::tid();
        out[t] = x[t] * 3.0f;
    });
    auto base = weft::zeros<float>(8, dev(), weft::requires_grad);
    auto x = base.slice(0, 1, weft::to_end, 2);  // elements 1, 3, 5, 7
    auto out = weft::zeros<float>(4, dev(), weft::requires_grad);
    out.grad().fill_(1.0f);
    weft::launch_adjoint(k, 4, {x.grad(), out.grad()}, x, out);
    EXPECT_EQ(base.grad().to_vector(), (std::vector<float>{0, 3, 0, 3, 0, 3, 0, 3}));
}

// 2-D arrays, kernel-side row views and a 2-D launch: the gradient lands on the right elements.
TEST(AdjointLaunch, TwoDimensionalArraysAndRowViews) {
    static auto k = module().kernel("rows", [](Array<float, 2> x, Array<float, 2> out) {
        auto [i, j] = weft::tid<2>();
        auto row = x[i];
        out(i, j) = row[j] * x(i, j) + x(i, 0);
    });
    std::vector<float> values(12);
    for (int e = 0; e < 12; ++e) values[e] = static_cast<float>(e) - 5.0f;
    auto x = weft::from_vector(values, {3, 4}, dev());
    auto out = weft::zeros<float>({3, 4}, dev());
    auto x_grad = weft::zeros<float>({3, 4}, dev());
    auto out_grad = weft::ones<float>({3, 4}, dev());
    weft::launch_adjoint(k, {3, 4}, {x_grad, out_grad}, x, out);
    const std::vector<float> g = x_grad.to_vector();
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
            const float expected = 2.0f * values[i * 4 + j] + (j == 0 ? 4.0f : 0.0f);  // x(i, 0) read 4 times
            EXPECT_EQ(g[i * 4 + j], expected) << i << ", " << j;
        }
}

TEST(AdjointLaunch, GradientsMustMatchTheirArguments) {
    auto x = weft::zeros<float>(4, dev());
    auto y = weft::zeros<float>(4, dev());
    auto wrong = weft::zeros<float>(5, dev());
    weft::Error e = error_from([&] { weft::launch_adjoint(square(), 4, {wrong, weft::AnyArray()}, x, y); });
    EXPECT_TRUE(has(e.message(), "the gradient of argument 0 ('x') must be an array of float32 of shape (4)"))
        << e.what();
    e = error_from([&] { weft::launch_adjoint(square(), 4, {weft::AnyArray()}, x, y); });
    EXPECT_TRUE(has(e.message(), "one gradient entry per argument")) << e.what();
}

TEST(AdjointRejections, SlotAllocationIsRejectedBeforeTheBackwardLaunches) {
    static auto k = module().kernel("compact", [](Array<float> v, Array<int> count, Array<float> out) {
        auto t = weft::tid();
        auto slot = weft::atomic_add(count, 0, 1);
        out[slot] = v[t] * v[t];
    });
    auto v = weft::from_vector<float>({1, 2}, dev(), weft::requires_grad);
    auto count = weft::zeros<int>(1, dev());
    auto out = weft::zeros<float>(2, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, 2, v, count, out);
    weft::launch(square(), 2, out, y);  // its adjoint would run first, but nothing runs
    tape.stop();
    y.grad().fill_(1.0f);
    const weft::Error e = error_from([&] { tape.backward(); });
    EXPECT_TRUE(has(e.message(), "slot allocation")) << e.what();
    EXPECT_EQ(e.kernel(), "compact");
    EXPECT_TRUE(has(e.file(), "autodiff_tape_test.cpp"));
    EXPECT_EQ(v.grad().to_vector(), (std::vector<float>{0, 0}));  // nothing ran
    EXPECT_EQ(out.grad().to_vector(), (std::vector<float>{0, 0}));
    EXPECT_TRUE(has(error_from([&] {
                        weft::launch_adjoint(k, 2, {v.grad(), {}, out.grad()}, v, count, out);
                    }).message(),
                    "slot allocation"));
}

// A recorded launch none of whose arrays has a gradient has nothing to differentiate, even
// when its kernel could not be differentiated.
TEST(AdjointRejections, ALaunchWithoutGradientsIsSkipped) {
    static auto k = module().kernel("compact_plain", [](Array<float> v, Array<int> count, Array<float> out) {
        auto slot = weft::atomic_add(count, 0, 1);
        out[slot] = v[weft::tid()];
    });
    auto v = weft::ones<float>(2, dev());
    auto count = weft::zeros<int>(1, dev());
    auto compacted = weft::zeros<float>(2, dev());
    auto x = weft::from_vector<float>({3, 4}, dev(), weft::requires_grad);
    auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
    weft::Tape tape;
    tape.start();
    weft::launch(k, 2, v, count, compacted);
    weft::launch(square(), 2, x, y);
    tape.stop();
    y.grad().fill_(1.0f);
    tape.backward();
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{6, 8}));
}

// A thread that reads back what it stored at the same index (a scratch array) gets the gradient
// through the stored value: tmp[t] = 2 x[t]; y[t] = 3 tmp[t] gives dy/dx = 6 (issue 32, item 5: it
// was refused as "loaded here and also written"). The scratch array's own gradient, given, reaches
// x too; a store of another value in between is read back as that value.
TEST(Tape, AScratchArrayReadBackAtTheIndexStoredGivesTheGradient) {
    static auto scratch =
        module().kernel("scratch", {"x", "tmp", "y"}, [](Array<float> x, Array<float> tmp, Array<float> y) {
            auto t = weft::tid();
            tmp[t] = x[t] * 2.0f;
            y[t] = tmp[t] * 3.0f;
        });
    static auto restored =
        module().kernel("restored", {"x", "tmp", "y"}, [](Array<float> x, Array<float> tmp, Array<float> y) {
            auto t = weft::tid();
            tmp[t] = x[t] * 2.0f;
            tmp[t] = x[t] * x[t];  // the value read back below
            y[t] = tmp[t] * 3.0f;
        });
    for (const bool scratch_gradient : {false, true}) {
        auto x = weft::from_vector<float>({1, 2, -3}, dev(), weft::requires_grad);
        auto tmp = scratch_gradient ? weft::zeros<float>(3, dev(), weft::requires_grad)
                                    : weft::zeros<float>(3, dev());
        auto y = weft::zeros<float>(3, dev(), weft::requires_grad);
        weft::Tape tape;
        {
            const weft::TapeRecording recording(tape);
            weft::launch(scratch, 3, x, tmp, y);
        }
        EXPECT_EQ(y.to_vector(), (std::vector<float>{6, 12, -18}));
        if (scratch_gradient) tmp.grad().fill_(1.0f);  // d(sum tmp)/dx = 2 more
        tape.backward({{y, weft::ones_like(y)}});
        EXPECT_EQ(x.grad().to_vector(), std::vector<float>(3, scratch_gradient ? 8.0f : 6.0f))
            << (scratch_gradient ? "with" : "without") << " the scratch array's gradient";
    }
    auto x = weft::from_vector<float>({1, 2, -3}, dev(), weft::requires_grad);
    auto tmp = weft::zeros<float>(3, dev());
    auto y = weft::zeros<float>(3, dev(), weft::requires_grad);
    weft::Tape tape;
    {
        const weft::TapeRecording recording(tape);
        weft::launch(restored, 3, x, tmp, y);
    }
    tape.backward({{y, weft::ones_like(y)}});
    EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{6, 12, -18}));  // d(3 x^2)/dx
}

// What is not read back at the index stored stays refused: a load before the store (in place), a
// load at another index, a load after a loop or branch that may have stored again.
TEST(AdjointRejections, LoadsOfWrittenArraysNotReadBackAtTheIndexStored) {
    static auto neighbour =
        module().kernel("neighbour", {"x", "tmp", "y"}, [](Array<float> x, Array<float> tmp, Array<float> y) {
            auto t = weft::tid();
            tmp[t] = x[t] * 2.0f;
            y[t] = tmp[(t + 1) % 2] * 3.0f;
        });
    static auto after_branch = module().kernel("after_branch", {"x", "tmp", "y"},
                                               [](Array<float> x, Array<float> tmp, Array<float> y) {
                                                   auto t = weft::tid();
                                                   tmp[t] = x[t] * 2.0f;
                                                   weft::if_(x[t] > 1.5f, [&] { tmp[t] = x[t]; });
                                                   y[t] = tmp[t] * 3.0f;
                                               });
    auto x = weft::ones<float>(2, dev(), weft::requires_grad);
    auto tmp = weft::zeros<float>(2, dev());
    auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
    for (const auto* k : {&neighbour, &after_branch}) {
        const weft::Error e = error_from([&] {
            weft::launch_adjoint(*k, 2, {x.grad(), {}, y.grad()}, x, tmp, y);
        });
        EXPECT_TRUE(has(e.message(), "array 'tmp' is loaded here and also written by this kernel"))
            << e.what();
    }
}

TEST(AdjointRejections, LoadsOfWrittenArraysAndFloatMinMax) {
    static auto in_place = module().kernel("in_place", [](Array<float> x) {
        auto t = weft::tid();
        x[t] = x[t] * 2.0f;
    });
    static auto lowest = module().kernel(
        "lowest", [](Array<float> x, Array<float> out) { weft::atomic_min(out, 0, x[weft::tid()]); });
    auto x = weft::ones<float>(2, dev(), weft::requires_grad);
    auto out = weft::ones<float>(1, dev(), weft::requires_grad);
    weft::Error e = error_from([&] { weft::launch_adjoint(in_place, 2, {x.grad()}, x); });
    EXPECT_TRUE(has(e.message(), "array 'arg0' is loaded here and also written by this kernel")) << e.what();
    static auto old_value =
        module().kernel("old_value", [](Array<float> x, Array<float> out, Array<float> y) {
            auto t = weft::tid();
            y[t] = weft::atomic_add(out, 0, x[t]);
        });
    auto y = weft::zeros<float>(2, dev(), weft::requires_grad);
    e = error_from([&] { weft::launch_adjoint(old_value, 2, {x.grad(), out.grad(), y.grad()}, x, out, y); });
    EXPECT_TRUE(has(e.message(), "uses the result of atomic_add on 'arg1', which has no adjoint"))
        << e.what();
    e = error_from([&] { weft::launch_adjoint(lowest, 2, {x.grad(), out.grad()}, x, out); });
    EXPECT_TRUE(has(e.message(), "atomic_min on float array 'arg1' has no adjoint")) << e.what();
    EXPECT_TRUE(has(e.file(), "autodiff_tape_test.cpp"));
}

}  // namespace
