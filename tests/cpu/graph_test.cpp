// Graph capture and replay (weft::capture, ScopedCapture, capture_while, capture_if): replays give
// the bits of direct launches, deterministic ones included; graphs keep what they use alive; work a
// graph cannot replay is refused with a clear error; failures of replays are reported.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::Float;
using weft::Int;
using weft::test::error_from;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

constexpr int kThreads = 3000;
constexpr int kBins = 7;

// Values of many magnitudes and both signs, so that the order of additions would show in the bits.
std::vector<float> mixed_values(int n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        v[i] = (i % 3 ? 1.0f : -1.0e3f) / static_cast<float>(i + 1) + (i % 5) * 1.0e-7f;
    return v;
}

std::vector<int> bins_of(int n) {
    std::vector<int> b(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) b[i] = (i * 5 + 3) % kBins;
    return b;
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(weft::test::bits_of(a[i]), weft::test::bits_of(b[i])) << what << ", element " << i;
}

// The sums of `values` into bins, in a deterministic module with `strategy`.
struct Accumulate {
    weft::Module module;
    weft::Kernel<Array<float>, Array<int>, Array<float>> kernel;
    explicit Accumulate(const char* name, DeterministicStrategy strategy = DeterministicStrategy::Auto)
        : module(name, {.deterministic = Deterministic::RunToRun, .deterministic_strategy = strategy}),
          kernel(module.kernel(name, {"values", "bins", "sums"},
                               [](Array<float> values, Array<int> bins, Array<float> sums) {
                                   auto t = weft::tid();
                                   weft::atomic_add(sums, bins[t], values[t]);
                               })) {}
};

// Compaction of the positive values (slot allocation on one counter element).
struct Compact {
    weft::Module module{"graph_compact", {.deterministic = Deterministic::RunToRun}};
    weft::Kernel<Array<float>, Array<int>, Array<float>> kernel =
        module.kernel("graph_compact", {"values", "count", "out"},
                      [](Array<float> values, Array<int> count, Array<float> out) {
                          auto t = weft::tid();
                          auto v = values[t];
                          weft::if_(v > 0.0f, [&] {
                              auto slot = weft::atomic_add(count, 0, 1);
                              out[slot] = v;
                          });
                      });
};

// left[0] -= 1: the loop counter of capture_while bodies.
struct Countdown {
    weft::Module module{"graph_countdown"};
    weft::Kernel<Array<int>> kernel =
        module.kernel("graph_countdown", {"left"}, [](Array<int> left) { left[0] = left[0] - 1; });
};

// The C++ twin of the spec's "CUDA Graph Capture" example: zero the output, capture the launch in
// a scope, replay it.
TEST(Graph, TheSpecsCaptureExample) {
    Accumulate acc("graph_spec_example");
    const int n = 1024;
    auto values = weft::ones<float>(n, dev());
    auto bins = weft::zeros<int>(n, dev());
    auto output = weft::zeros<float>(kBins, dev());
    output.zero_();
    weft::Graph graph;
    {
        weft::ScopedCapture capture(dev());
        weft::launch(acc.kernel, n, values, bins, output);
        graph = capture.end();
    }
    graph.launch();
    EXPECT_EQ(output.to_vector()[0], 1024.0f);
    graph.launch();
    EXPECT_EQ(output.to_vector()[0], 2048.0f);
}

class GraphAccumulation : public ::testing::TestWithParam<DeterministicStrategy> {};

TEST_P(GraphAccumulation, ReplaysGiveTheBitsOfDirectLaunches) {
    Accumulate acc(GetParam() == DeterministicStrategy::Exact ? "graph_sum_exact" : "graph_sum_records",
                   GetParam());
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto direct = weft::zeros<float>(kBins, dev());
    weft::launch(acc.kernel, kThreads, values, bins, direct);
    weft::launch(acc.kernel, kThreads, values, bins, direct);

    auto replayed = weft::full<float>(kBins, 5.0f, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        replayed.zero_();  // inside the graph: every replay starts from zero
        weft::launch(acc.kernel, kThreads, values, bins, replayed);
        weft::launch(acc.kernel, kThreads, values, bins, replayed);
    });
    EXPECT_EQ(replayed.to_vector(), std::vector<float>(kBins, 5.0f)) << "capturing runs nothing";
    for (int replay = 0; replay < 3; ++replay) {
        graph.launch();
        weft::synchronize(dev());
        expect_same_bits(replayed.to_vector(), direct.to_vector(), "a replay");
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, GraphAccumulation,
                         ::testing::Values(DeterministicStrategy::Exact, DeterministicStrategy::Records),
                         [](const ::testing::TestParamInfo<DeterministicStrategy>& info) {
                             return info.param == DeterministicStrategy::Exact ? "Exact" : "Records";
                         });

TEST(Graph, CapturedMinAndMaxGiveTheBitsOfDirectLaunches) {
    weft::Module m{"graph_minmax", {.deterministic = Deterministic::RunToRun}};
    auto kernel = m.kernel("graph_minmax", {"values", "bins", "low", "high"},
                           [](Array<float> values, Array<int> bins, Array<float> low, Array<float> high) {
                               auto t = weft::tid();
                               weft::atomic_min(low, bins[t], values[t]);
                               weft::atomic_max(high, bins[t], values[t]);
                           });
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto low = weft::zeros<float>(kBins, dev());
    auto high = weft::zeros<float>(kBins, dev());
    weft::launch(kernel, kThreads, values, bins, low, high);
    auto graph_low = weft::zeros<float>(kBins, dev());
    auto graph_high = weft::zeros<float>(kBins, dev());
    const weft::Graph graph =
        weft::capture(dev(), [&] { weft::launch(kernel, kThreads, values, bins, graph_low, graph_high); });
    graph.launch();
    graph.launch();  // min and max are idempotent
    expect_same_bits(graph_low.to_vector(), low.to_vector(), "min");
    expect_same_bits(graph_high.to_vector(), high.to_vector(), "max");
}

TEST(Graph, CapturedSlotAllocationGivesTheSlotsOfADirectLaunch) {
    Compact compact;
    std::vector<float> host = mixed_values(kThreads);
    auto values = weft::from_vector(host, dev());
    auto count = weft::zeros<int>(1, dev());
    auto out = weft::full<float>(kThreads, -1.0f, dev());
    weft::launch(compact.kernel, kThreads, values, count, out);
    const std::vector<float> direct = out.to_vector();
    const int positives = count.to_vector()[0];
    ASSERT_GT(positives, 0);

    auto graph_count = weft::full<int>(1, 0, dev());
    auto graph_out = weft::full<float>(kThreads, -1.0f, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        graph_count.zero_();
        weft::launch(compact.kernel, kThreads, values, graph_count, graph_out);
    });
    for (int replay = 0; replay < 2; ++replay) {
        graph.launch();
        EXPECT_EQ(graph_count.to_vector(), std::vector<int>{positives});
        expect_same_bits(graph_out.to_vector(), direct, "compacted values");
    }
}

// Capture and replay equal direct launches: a sliced (column) target, atomics inside a weft
// function, and exact sums that carry (a data-dependent loop reaches the atomic).
TEST(Graph, SlicedTargetsFunctionAtomicsAndCarryingSumsReplayLikeDirectLaunches) {
    weft::Module m{"graph_variety", {.deterministic = Deterministic::RunToRun}};
    auto add_to =
        m.func("graph_add_to", [](Array<float> out, Int i, Float v) { weft::atomic_add(out, i, v); });
    auto kernel =
        m.kernel("graph_variety", {"values", "bins", "trips", "column", "looped"},
                 [add_to](Array<float> values, Array<int> bins, Array<int> trips, Array<float> column,
                          Array<float> looped) {
                     auto t = weft::tid();
                     add_to(column, bins[t], values[t]);
                     weft::for_(trips[t], [&](Int) { weft::atomic_add(looped, bins[t], values[t]); });
                 });
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    std::vector<int> trips_host(kThreads);
    for (int i = 0; i < kThreads; ++i) trips_host[i] = i % 3;
    auto trips = weft::from_vector(trips_host, dev());
    auto direct_grid = weft::zeros<float>({kBins, 5}, dev());
    auto direct_looped = weft::zeros<float>(kBins, dev());
    weft::launch(kernel, kThreads, values, bins, trips, direct_grid.select(1, 2), direct_looped);

    auto grid = weft::zeros<float>({kBins, 5}, dev());
    auto looped = weft::zeros<float>(kBins, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        grid.zero_();
        looped.zero_();
        weft::launch(kernel, kThreads, values, bins, trips, grid.select(1, 2), looped);
    });
    graph.launch();
    graph.launch();
    expect_same_bits(grid.to_vector(), direct_grid.to_vector(), "the column target and its neighbours");
    expect_same_bits(looped.to_vector(), direct_looped.to_vector(), "the carrying target");
}

// Slot allocation with a data-dependent counter index: on a GPU every step of it (the grouping of
// reservations by counter element too, runtime/det/cuda_slot_groups) is on the stream.
TEST(Graph, CapturedSlotAllocationOnDataDependentCountersGivesTheSlotsOfADirectLaunch) {
    weft::Module m{"graph_binned_slots", {.deterministic = Deterministic::RunToRun}};
    auto binned = m.kernel("graph_binned_slots", {"bins", "counts", "out"},
                           [](Array<int> bins, Array<int> counts, Array<int> out) {
                               auto t = weft::tid();
                               out[t] = weft::atomic_add(counts, bins[t], 1);
                           });
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto counts = weft::zeros<int>(kBins, dev());
    auto out = weft::zeros<int>(kThreads, dev());
    weft::launch(binned, kThreads, bins, counts, out);
    const std::vector<int> direct = out.to_vector();
    const std::vector<int> direct_counts = counts.to_vector();
    auto graph_counts = weft::zeros<int>(kBins, dev());
    auto graph_out = weft::zeros<int>(kThreads, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        graph_counts.zero_();
        weft::launch(binned, kThreads, bins, graph_counts, graph_out);
    });
    graph.launch();
    graph.launch();
    EXPECT_EQ(graph_out.to_vector(), direct);
    EXPECT_EQ(graph_counts.to_vector(), direct_counts);
}

TEST(Graph, ACapturedScanRunsAtEachReplay) {
    auto in = weft::from_vector(std::vector<int>{1, 2, 3, 4}, dev());
    auto out = weft::zeros<int>(4, dev());
    weft::array_scan(in, out);  // its library kernels load before the capture
    out.zero_();
    const weft::Graph graph = weft::capture(dev(), [&] { weft::array_scan(in, out); });
    EXPECT_EQ(out.to_vector(), std::vector<int>(4, 0)) << "capturing runs nothing";
    graph.launch();
    EXPECT_EQ(out.to_vector(), std::vector<int>({1, 3, 6, 10}));
    weft::copy(in, weft::from_vector(std::vector<int>{5, 5, 5, 5}, dev()));
    graph.launch();
    EXPECT_EQ(out.to_vector(), std::vector<int>({5, 10, 15, 20}));
}

// More records than one wave of GPU threads (the records kernels stride over what was emitted):
// a captured records launch of 2^20 contributions gives the bits of the exact strategy.
TEST(Graph, ACapturedRecordsLaunchOfManyRecordsGivesTheExactBits) {
    Accumulate exact("graph_many_exact", DeterministicStrategy::Exact);
    Accumulate records("graph_many_records", DeterministicStrategy::Records);
    const int n = 1 << 20, outputs = 1000;
    auto values = weft::from_vector(mixed_values(n), dev());
    std::vector<int> b(n);
    for (int i = 0; i < n; ++i) b[i] = static_cast<int>((static_cast<int64_t>(i) * 7919) % outputs);
    auto bins = weft::from_vector(b, dev());
    auto expected = weft::zeros<float>(outputs, dev());
    weft::launch(exact.kernel, n, values, bins, expected);
    auto sums = weft::zeros<float>(outputs, dev());
    weft::launch(records.kernel, n, values, bins, sums);
    expect_same_bits(sums.to_vector(), expected.to_vector(), "a direct records launch");
    const weft::Graph graph = weft::capture(dev(), [&] {
        sums.zero_();
        weft::launch(records.kernel, n, values, bins, sums);
    });
    graph.launch();
    expect_same_bits(sums.to_vector(), expected.to_vector(), "a replayed records launch");
}

// The graph holds its arrays, its module and its deterministic temporaries: replays after every
// handle that made them was released still give the same result.
TEST(Graph, ReplaysAfterTheHandlesThatMadeItWereReleased) {
    auto sums = weft::zeros<float>(kBins, dev());
    std::vector<float> expected;
    weft::Graph graph;
    auto doomed = weft::zeros<float>(kThreads, dev());
    {
        Accumulate acc("graph_sum_released");
        auto values = weft::from_vector(mixed_values(kThreads), dev());
        auto bins = weft::from_vector(bins_of(kThreads), dev());
        weft::launch(acc.kernel, kThreads, values, bins, sums);
        expected = sums.to_vector();
        graph = weft::capture(dev(), [&] {
            { const auto released = std::move(doomed); }      // made before the capture, released inside it
            auto scratch = weft::zeros<float>(kBins, dev());  // made and dropped inside the capture
            weft::launch(acc.kernel, kThreads, values, bins, scratch);
            sums.zero_();
            weft::launch(acc.kernel, kThreads, values, bins, sums);
        });
    }
    // New arrays would take the memory of released ones.
    auto other = weft::full<float>(4 * kThreads, 1.0e30f, dev());
    auto more = weft::full<int>(4 * kThreads, 6, dev());
    sums.zero_();
    graph.launch();
    expect_same_bits(sums.to_vector(), expected, "a replay after the handles were released");
    EXPECT_EQ(other.to_vector()[0], 1.0e30f);
    EXPECT_EQ(more.to_vector()[0], 6);
}

TEST(Graph, HostReadBacksAndSynchronizationAreRefusedAndTheCaptureGoesOn) {
    Accumulate acc("graph_sum_refusals");
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto direct = weft::zeros<float>(kBins, dev());
    weft::launch(acc.kernel, kThreads, values, bins, direct);
    auto sums = weft::zeros<float>(kBins, dev());

    weft::ScopedCapture scope(dev());
    sums.zero_();
    int line = __LINE__ + 1;
    const weft::Error read = error_from([&] { (void)sums.to_vector(); });
    EXPECT_TRUE(has(read.message(), "a copy from an array to the host")) << read.message();
    EXPECT_TRUE(has(read.message(), "cannot be part of a graph")) << read.message();
    EXPECT_EQ(read.line(), static_cast<uint32_t>(line))
        << "the refusal names the caller's line (issue 32, item 18)";
    line = __LINE__ + 2;
    const weft::Error write =
        error_from([&] { sums.copy_from_host(std::vector<float>(kBins).data(), kBins); });
    EXPECT_TRUE(has(write.message(), "a copy from the host into an array")) << write.message();
    EXPECT_EQ(write.line(), static_cast<uint32_t>(line));
    line = __LINE__ + 1;
    const weft::Error fill = error_from([&] { sums.fill_(1.0f); });
    EXPECT_TRUE(has(fill.message(), "cannot be part of a graph")) << fill.message();
    EXPECT_EQ(fill.line(), static_cast<uint32_t>(line));
    line = __LINE__ + 1;
    const weft::Error sync = error_from([&] { weft::synchronize(dev()); });
    EXPECT_TRUE(has(sync.message(), "synchroniz")) << sync.message();
    EXPECT_TRUE(has(sync.message(), "cannot be part of a graph")) << sync.message();
    EXPECT_EQ(sync.line(), static_cast<uint32_t>(line));
    weft::launch(acc.kernel, kThreads, values, bins, sums);
    const weft::Graph graph = scope.end();
    graph.launch();
    expect_same_bits(sums.to_vector(), direct.to_vector(), "the graph captured after the refusals");
}

TEST(Graph, CapturesDoNotNestAndAnAbandonedCaptureLeavesTheDeviceUsable) {
    Accumulate acc("graph_sum_abandoned");
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto sums = weft::zeros<float>(kBins, dev());
    const weft::Graph empty = weft::capture(dev(), [] {});
    {
        weft::ScopedCapture outer(dev());
        weft::launch(acc.kernel, kThreads, values, bins, sums);
        const weft::Error nested = error_from([&] { weft::ScopedCapture inner(dev()); });
        EXPECT_TRUE(has(nested.message(), "already in progress")) << nested.message();
        const weft::Error inside = error_from([&] { empty.launch(); });
        EXPECT_TRUE(
            has(inside.message(), "cannot be launched while work on " + dev().name() + " is being captured"))
            << inside.message();
    }  // abandoned: nothing it captured runs
    EXPECT_EQ(sums.to_vector(), std::vector<float>(kBins, 0.0f));
    weft::launch(acc.kernel, kThreads, values, bins, sums);
    auto direct = weft::zeros<float>(kBins, dev());
    weft::launch(acc.kernel, kThreads, values, bins, direct);
    expect_same_bits(sums.to_vector(), direct.to_vector(), "a launch after the abandoned capture");
}

// A records overflow in a replay: at the replay on the CPU, at the next synchronization on a GPU;
// the target keeps its value either way.
TEST(Graph, ARecordsOverflowInAReplayIsReported) {
    weft::Module m{"graph_overflow",
                   {.deterministic = Deterministic::RunToRun,
                    .deterministic_strategy = DeterministicStrategy::Records,
                    .deterministic_max_records = 1}};
    auto kernel = m.kernel("graph_overflow", {"values", "trips", "sums"},
                           [](Array<float> values, Array<int> trips, Array<float> sums) {
                               auto t = weft::tid();
                               weft::for_(trips[t], [&](Int) { weft::atomic_add(sums, t % 4, values[t]); });
                           });
    const int n = 2048;
    auto values = weft::ones<float>(n, dev());
    auto trips = weft::full<int>(n, 1, dev());
    auto sums = weft::zeros<float>(4, dev());
    weft::launch(kernel, n, values, trips, sums);
    const weft::Graph graph = weft::capture(dev(), [&] { weft::launch(kernel, n, values, trips, sums); });
    graph.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 1024.0f));
    weft::copy(trips, weft::full<int>(n, 2, dev()));
    const weft::Error e = error_from([&] {
        graph.launch();
        weft::synchronize(dev());
    });
    EXPECT_EQ(e.kernel(), "graph_overflow");
    EXPECT_TRUE(has(e.message(), "deterministic records for array 'sums' overflowed")) << e.message();
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 1024.0f)) << "the target keeps its value";
}

// capture_while running a deterministic accumulation three times: the bits of three direct
// launches, and (the values being small integers) three times one launch.
TEST(GraphConditional, CaptureWhileRunsADeterministicAccumulationThreeTimes) {
    Accumulate acc("graph_sum_while");
    Countdown countdown;
    std::vector<float> small(kThreads);
    for (int i = 0; i < kThreads; ++i) small[i] = static_cast<float>(i % 9 - 4);
    auto values = weft::from_vector(small, dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto once = weft::zeros<float>(kBins, dev());
    weft::launch(acc.kernel, kThreads, values, bins, once);
    auto thrice = weft::zeros<float>(kBins, dev());
    for (int i = 0; i < 3; ++i) weft::launch(acc.kernel, kThreads, values, bins, thrice);
    auto left = weft::zeros<int>(1, dev());
    weft::launch(countdown.kernel, 1, left);  // compiled before the capture

    auto sums = weft::zeros<float>(kBins, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        sums.zero_();
        weft::capture_while(left, [&] {
            weft::launch(acc.kernel, kThreads, values, bins, sums);
            weft::launch(countdown.kernel, 1, left);
        });
    });
    weft::copy(left, weft::full<int>(1, 3, dev()));
    graph.launch();
    expect_same_bits(sums.to_vector(), thrice.to_vector(), "three iterations");
    std::vector<float> three_times = once.to_vector();
    for (float& v : three_times) v *= 3.0f;
    EXPECT_EQ(sums.to_vector(), three_times);
    EXPECT_EQ(left.to_vector(), std::vector<int>{0});

    weft::copy(left, weft::full<int>(1, 1, dev()));
    graph.launch();
    expect_same_bits(sums.to_vector(), once.to_vector(), "one iteration");
    graph.launch();  // the condition is 0: the body does not run, only the zeroing
    EXPECT_EQ(sums.to_vector(), std::vector<float>(kBins, 0.0f));
}

// A slot-allocating kernel in a loop body: two iterations of n positive values count 2n, the
// second iteration's slots after the first's.
TEST(GraphConditional, CaptureWhileRunsASlotAllocationLoop) {
    Compact compact;
    Countdown countdown;
    const int n = 1000;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i + 1);
    auto values = weft::from_vector(host, dev());
    auto count = weft::zeros<int>(1, dev());
    auto out = weft::full<float>(2 * n, -1.0f, dev());
    weft::launch(compact.kernel, n, values, count, out);  // compiled before the capture
    auto left = weft::zeros<int>(1, dev());
    weft::launch(countdown.kernel, 1, left);

    const weft::Graph graph = weft::capture(dev(), [&] {
        count.zero_();
        weft::capture_while(left, [&] {
            weft::launch(compact.kernel, n, values, count, out);
            weft::launch(countdown.kernel, 1, left);
        });
    });
    weft::copy(left, weft::full<int>(1, 2, dev()));
    graph.launch();
    EXPECT_EQ(count.to_vector(), std::vector<int>{2 * n});
    std::vector<float> expected = host;
    expected.insert(expected.end(), host.begin(), host.end());
    EXPECT_EQ(out.to_vector(), expected);
}

TEST(GraphConditional, CaptureIfRunsItsBodyOnlyWhenTheElementIsNonzero) {
    Accumulate acc("graph_sum_if");
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto direct = weft::zeros<float>(kBins, dev());
    weft::launch(acc.kernel, kThreads, values, bins, direct);
    auto flags = weft::from_vector(std::vector<int>{0, 0}, dev());
    auto sums = weft::zeros<float>(kBins, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        sums.zero_();
        weft::capture_if(flags.slice(0, 1, 2),
                         [&] { weft::launch(acc.kernel, kThreads, values, bins, sums); });
    });
    graph.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>(kBins, 0.0f));
    weft::copy(flags, weft::from_vector(std::vector<int>{0, 1}, dev()));
    graph.launch();
    expect_same_bits(sums.to_vector(), direct.to_vector(), "the body that ran");
}

// Bodies nest.
TEST(GraphConditional, BodiesNest) {
    Accumulate acc("graph_sum_nested");
    Countdown countdown;
    auto values = weft::from_vector(mixed_values(kThreads), dev());
    auto bins = weft::from_vector(bins_of(kThreads), dev());
    auto twice = weft::zeros<float>(kBins, dev());
    weft::launch(acc.kernel, kThreads, values, bins, twice);
    weft::launch(acc.kernel, kThreads, values, bins, twice);
    auto left = weft::zeros<int>(1, dev());
    weft::launch(countdown.kernel, 1, left);
    auto flag = weft::full<int>(1, 1, dev());
    auto sums = weft::zeros<float>(kBins, dev());
    const weft::Graph graph = weft::capture(dev(), [&] {
        sums.zero_();
        weft::capture_while(left, [&] {
            weft::capture_if(flag, [&] { weft::launch(acc.kernel, kThreads, values, bins, sums); });
            weft::launch(countdown.kernel, 1, left);
        });
    });
    weft::copy(left, weft::full<int>(1, 2, dev()));
    graph.launch();
    expect_same_bits(sums.to_vector(), twice.to_vector(), "two iterations of the inner body");
    weft::copy(left, weft::full<int>(1, 2, dev()));
    weft::copy(flag, weft::zeros<int>(1, dev()));
    graph.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>(kBins, 0.0f));
    EXPECT_EQ(left.to_vector(), std::vector<int>{0});
}

// A refusal inside a body leaves the body half recorded: the capture ends without a graph,
// saying why, and the device stays usable.
TEST(GraphConditional, ARefusalInsideABodyEndsTheCaptureWithoutAGraph) {
    Countdown countdown;
    auto left = weft::full<int>(1, 1, dev());
    weft::launch(countdown.kernel, 1, left);
    auto flag = weft::full<int>(1, 1, dev());
    {
        weft::ScopedCapture scope(dev());
        const weft::Error refused = error_from([&] {
            weft::capture_if(flag, [&] {
                weft::launch(countdown.kernel, 1, left);
                (void)left.to_vector();
            });
        });
        EXPECT_TRUE(has(refused.message(), "cannot be part of a graph")) << refused.message();
        const weft::Error ended = error_from([&] { (void)scope.end(); });
        EXPECT_TRUE(has(ended.message(), "body failed while it was recorded")) << ended.message();
        EXPECT_TRUE(has(ended.file(), "graph_test.cpp")) << ended.file();
    }
    weft::launch(countdown.kernel, 1, left);
    EXPECT_EQ(left.to_vector(), std::vector<int>{-1}) << "nothing captured ran; the device works";
}

// Any exception leaving a body, not only a weft::Error, leaves it half recorded: the capture ends
// without a graph (before, a std::runtime_error left the body open, and every later operation of
// the capture went into it and was silently dropped; issue 25, item 4).
TEST(GraphConditional, AnExceptionOfAnyTypeInsideABodyEndsTheCaptureWithoutAGraph) {
    Countdown countdown;
    auto left = weft::full<int>(1, 1, dev());
    auto flag = weft::full<int>(1, 1, dev());
    {
        weft::ScopedCapture scope(dev());
        try {
            weft::capture_if(flag, [&] {
                weft::launch(countdown.kernel, 1, left);
                throw std::runtime_error("the user's own error");
            });
        } catch (const std::runtime_error&) {
        }
        weft::launch(countdown.kernel, 1, left);
        const weft::Error ended = error_from([&] { (void)scope.end(); });
        EXPECT_TRUE(has(ended.message(), "body failed while it was recorded (the user's own error)"))
            << ended.message();
    }
    weft::launch(countdown.kernel, 1, left);
    EXPECT_EQ(left.to_vector(), std::vector<int>{0}) << "nothing captured ran; the device works";
}

TEST(GraphConditional, OutsideACaptureTheBodyRunsNow) {
    Countdown countdown;
    auto left = weft::full<int>(1, 4, dev());
    int runs = 0;
    weft::capture_while(left, [&] {
        ++runs;
        weft::launch(countdown.kernel, 1, left);
    });
    EXPECT_EQ(runs, 4);
    weft::capture_if(left, [&] { ++runs; });
    EXPECT_EQ(runs, 4);
}

// A capture_while capped at 5 runs of its body: a replay whose condition clears within 5 runs
// (3, then exactly 5) ends normally; one whose condition still holds after 5 runs (8 to count
// down) stops the loop there and is an error naming the capture_while's line, thrown by the CPU's
// replay or by a GPU's next synchronization. Each replay counts its runs afresh.
TEST(GraphConditional, ACappedCaptureWhileStopsAtItsCapAndSaysSo) {
    Countdown countdown;
    auto left = weft::zeros<int>(1, dev());
    weft::launch(countdown.kernel, 1, left);  // compiled before the capture
    uint32_t line = 0;
    const weft::Graph graph = weft::capture(dev(), [&] {
        line = __LINE__ + 1;
        weft::capture_while(left, 5, [&] { weft::launch(countdown.kernel, 1, left); });
    });
    weft::copy(left, weft::full<int>(1, 3, dev()));
    EXPECT_EQ(weft::test::error_by_sync(dev(), [&] { graph.launch(); }), std::nullopt);
    EXPECT_EQ(left.to_vector(), std::vector<int>{0});

    weft::copy(left, weft::full<int>(1, 8, dev()));
    const std::optional<weft::Error> e = weft::test::error_by_sync(dev(), [&] { graph.launch(); });
    ASSERT_TRUE(e.has_value()) << "a loop past its cap must be reported";
    EXPECT_TRUE(has(e->message(), "still held after 5 runs of the body (its max_iterations)"))
        << e->message();
    EXPECT_TRUE(has(e->file(), "graph_test.cpp")) << e->file();
    EXPECT_EQ(e->line(), line);
    EXPECT_EQ(left.to_vector(), std::vector<int>{3}) << "the body ran exactly 5 times";

    weft::copy(left, weft::full<int>(1, 5, dev()));
    EXPECT_EQ(weft::test::error_by_sync(dev(), [&] { graph.launch(); }), std::nullopt);
    EXPECT_EQ(left.to_vector(), std::vector<int>{0});
}

// Outside a capture, the cap holds as well: the error comes at once, after the cap's runs.
TEST(GraphConditional, OutsideACaptureTheCapHolds) {
    Countdown countdown;
    auto left = weft::full<int>(1, 4, dev());
    int runs = 0;
    const weft::Error e = error_from([&] {
        weft::capture_while(left, 2, [&] {
            ++runs;
            weft::launch(countdown.kernel, 1, left);
        });
    });
    EXPECT_TRUE(has(e.message(), "after 2 runs")) << e.message();
    EXPECT_EQ(runs, 2);
    EXPECT_EQ(left.to_vector(), std::vector<int>{2});
    runs = 0;
    weft::capture_while(left, 2, [&] {
        ++runs;
        weft::launch(countdown.kernel, 1, left);
    });
    EXPECT_EQ(runs, 2) << "a loop that needs exactly the cap's runs ends normally";
    const weft::Error zero = error_from([&] { weft::capture_while(left, 0, [] {}); });
    EXPECT_TRUE(has(zero.message(), "max_iterations is 0; give at least 1")) << zero.message();
}

TEST(GraphConditional, TheConditionMustBeOneInt32Element) {
    auto two = weft::zeros<int>(2, dev());
    const weft::Error e = error_from([&] { weft::capture_while(two, [] {}); });
    EXPECT_TRUE(has(e.message(), "int32 array (or view) of one element")) << e.message();
    EXPECT_TRUE(has(e.file(), "graph_test.cpp")) << e.file();
    auto wrong_type = weft::zeros<float>(1, dev());
    EXPECT_TRUE(has(error_from([&] { weft::capture_if(wrong_type, [] {}); }).message(), "float32"));
}

}  // namespace
