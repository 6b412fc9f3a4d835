// GPU-only behaviour of the public graph API: launches a graph cannot replay are refused by name,
// failures of replayed work (inside conditional bodies too) are reported at the stream's next
// synchronization, and kernels first launched inside a capture are compiled there.
#include <gtest/gtest.h>

#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Int;
using weft::test::error_from;
using weft::test::has;

const weft::Device gpu = weft::Device::cuda(0);

// The error the next synchronization reports, or "" when there is none.
std::string synchronize_error(const std::string& kernel) {
    try {
        weft::synchronize(gpu);
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), kernel) << e.what();
        return e.message();
    }
    return "";
}

TEST(GraphApiGpu, DeterministicDebugLaunchesAreRefusedByName) {
    weft::Module m{"graph_debug", {.deterministic = Deterministic::RunToRun, .deterministic_debug = true}};
    auto kernel = m.kernel("graph_debug", {"values", "sums"}, [](Array<float> values, Array<float> sums) {
        weft::atomic_add(sums, 0, values[weft::tid()]);
    });
    auto values = weft::ones<float>(64, gpu);
    auto sums = weft::zeros<float>(1, gpu);
    weft::launch(kernel, 64, values, sums);
    weft::ScopedCapture scope(gpu);
    const weft::Error e = error_from([&] { weft::launch(kernel, 64, values, sums); });
    EXPECT_EQ(e.kernel(), "graph_debug");
    EXPECT_TRUE(has(e.message(), "deterministic_debug")) << e.message();
}

TEST(GraphApiGpu, ASlotDivergenceInAReplayIsReportedAtTheNextSynchronization) {
    weft::Module m{"graph_api_diverge", {.deterministic = Deterministic::RunToRun}};
    auto kernel = m.kernel("graph_api_diverge", {"count", "out"}, [](Array<int> count, Array<int> out) {
        auto t = weft::tid();
        auto a = weft::atomic_add(count, 0, 1);
        out[a] = t;
        weft::if_(a % 2 == 0, [&] { out[weft::atomic_add(count, 0, 1)] = t; });
    });
    const int n = 512;
    auto count = weft::full<int>(1, 7, gpu);
    auto out = weft::full<int>(3 * n, -1, gpu);
    weft::launch(kernel, n, count, out);
    EXPECT_TRUE(has(synchronize_error("graph_api_diverge"), "reserved slots differently"));
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(kernel, n, count, out); });
    for (int replay = 0; replay < 2; ++replay) {
        graph.launch();
        const std::string error = synchronize_error("graph_api_diverge");
        EXPECT_TRUE(has(error, "reserved slots differently")) << error;
        EXPECT_TRUE(has(error, "'count'")) << error;
        EXPECT_EQ(count.to_vector(), std::vector<int>{7}) << "the counter keeps its value";
    }
}

TEST(GraphApiGpu, ABoundsFaultInAReplayIsReportedAtTheNextSynchronization) {
    weft::Module m{"graph_api_faults", {.bounds_check = true}};
    auto scatter = m.kernel("graph_api_scatter", {"where", "out"},
                            [](Array<int> where, Array<float> out) { out[where[weft::tid()]] = 1.0f; });
    const int n = 128;
    std::vector<int> inside(n);
    for (int i = 0; i < n; ++i) inside[i] = i;
    auto where = weft::from_vector(inside, gpu);
    auto out = weft::zeros<float>(n, gpu);
    weft::launch(scatter, n, where, out);  // compiled and loaded before the capture
    weft::synchronize(gpu);
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(scatter, n, where, out); });
    graph.launch();
    EXPECT_EQ(synchronize_error("graph_api_scatter"), "");
    inside[17] = 9000;
    weft::copy(where, weft::from_vector(inside, gpu));
    graph.launch();
    const std::string error = synchronize_error("graph_api_scatter");
    EXPECT_TRUE(has(error, "index 9000")) << error;
    EXPECT_TRUE(has(error, "'out'")) << error;
    EXPECT_TRUE(has(error, "replay of a captured graph")) << error;
    EXPECT_EQ(synchronize_error("graph_api_scatter"), "") << "reported once";
}

// Inside a capture_while body, an overflowing records launch is reported after the replay.
TEST(GraphApiGpu, ARecordsOverflowInsideAConditionalBodyIsReported) {
    weft::Module m{"graph_body_overflow",
                   {.deterministic = Deterministic::RunToRun,
                    .deterministic_strategy = weft::DeterministicStrategy::Records,
                    .deterministic_max_records = 1}};
    auto kernel = m.kernel("graph_body_overflow", {"values", "trips", "sums"},
                           [](Array<float> values, Array<int> trips, Array<float> sums) {
                               auto t = weft::tid();
                               weft::for_(trips[t], [&](Int) { weft::atomic_add(sums, t % 4, values[t]); });
                           });
    weft::Module plain{"graph_body_countdown"};
    auto countdown =
        plain.kernel("graph_body_countdown", {"left"}, [](Array<int> left) { left[0] = left[0] - 1; });
    const int n = 2048;
    auto values = weft::ones<float>(n, gpu);
    auto trips = weft::full<int>(n, 1, gpu);
    auto sums = weft::zeros<float>(4, gpu);
    auto left = weft::zeros<int>(1, gpu);
    weft::launch(kernel, n, values, trips, sums);
    weft::launch(countdown, 1, left);
    weft::copy(sums, weft::zeros<float>(4, gpu));
    const weft::Graph graph = weft::capture(gpu, [&] {
        weft::capture_while(left, [&] {
            weft::launch(kernel, n, values, trips, sums);
            weft::launch(countdown, 1, left);
        });
    });
    weft::copy(left, weft::full<int>(1, 2, gpu));
    graph.launch();
    EXPECT_EQ(synchronize_error("graph_body_overflow"), "");
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 1024.0f));
    weft::copy(trips, weft::full<int>(n, 2, gpu));
    weft::copy(left, weft::full<int>(1, 1, gpu));
    graph.launch();
    const std::string error = synchronize_error("graph_body_overflow");
    EXPECT_TRUE(has(error, "deterministic records for array 'sums' overflowed")) << error;
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 1024.0f));
}

// A kernel whose first launch is inside the capture is compiled and loaded there.
TEST(GraphApiGpu, AKernelFirstLaunchedInsideACaptureIsCompiledThere) {
    weft::Module m{"graph_first_inside", {.deterministic = Deterministic::RunToRun}};
    auto kernel =
        m.kernel("graph_first_inside", {"values", "sums"}, [](Array<float> values, Array<float> sums) {
            weft::atomic_add(sums, weft::tid() % 3, values[weft::tid()]);
        });
    auto values = weft::ones<float>(300, gpu);
    auto sums = weft::zeros<float>(3, gpu);
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(kernel, 300, values, sums); });
    graph.launch();
    graph.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>(3, 200.0f));
}

// A graph replayed on another stream of the device.
TEST(GraphApiGpu, AGraphReplaysOnAnotherStream) {
    weft::Module m{"graph_streams"};
    auto add_one =
        m.kernel("graph_add_one", {"out"}, [](Array<int> out) { out[weft::tid()] = out[weft::tid()] + 1; });
    auto out = weft::zeros<int>(64, gpu);
    weft::launch(add_one, 64, out);
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(add_one, 64, out); });
    weft::synchronize(gpu);  // the direct launch ran on the default stream
    const weft::Stream other(gpu);
    graph.launch(other);
    other.synchronize();
    EXPECT_EQ(out.to_vector(), std::vector<int>(64, 2));
}

// Captured on another stream (ScopedStream), a graph's failures are reported by that stream's
// synchronization.
TEST(GraphApiGpu, AGraphCapturedOnAStreamReportsToThatStream) {
    weft::Module m{"graph_stream_overflow",
                   {.deterministic = Deterministic::RunToRun,
                    .deterministic_strategy = weft::DeterministicStrategy::Records,
                    .deterministic_max_records = 1}};
    auto kernel = m.kernel("graph_stream_overflow", {"values", "trips", "sums"},
                           [](Array<float> values, Array<int> trips, Array<float> sums) {
                               auto t = weft::tid();
                               weft::for_(trips[t], [&](Int) { weft::atomic_add(sums, t % 4, values[t]); });
                           });
    const int n = 1024;
    auto values = weft::ones<float>(n, gpu);
    auto trips = weft::full<int>(n, 2, gpu);
    auto sums = weft::zeros<float>(4, gpu);
    weft::launch(kernel, n, values, weft::full<int>(n, 1, gpu), sums);
    weft::synchronize(gpu);
    const weft::Stream stream(gpu);
    weft::Graph graph;
    {
        const weft::ScopedStream on(stream);
        graph = weft::capture(gpu, [&] { weft::launch(kernel, n, values, trips, sums); });
    }
    graph.launch(stream);
    try {
        stream.synchronize();
        ADD_FAILURE() << "the replay's overflow was not reported";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "graph_stream_overflow");
        EXPECT_TRUE(has(e.message(), "overflowed")) << e.message();
    }
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 256.0f)) << "the target keeps its value";
}

}  // namespace
