// Slot allocation with several counter elements on a GPU: the same slots and counters as the CPU
// backend, bit for bit, from direct launches and from replays of a captured CUDA graph (the path
// queues device work only, so it can be captured), with failures reported after a replay.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/errors.hpp"
#include "support/slot_bins.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Int;
using weft::test::bin_case;
using weft::test::BinCase;
using weft::test::BinKernel;
using weft::test::BinOutputs;
using weft::test::has;
using weft::test::launch_bins;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

const BinKernel& bin_kernel() {
    static const BinKernel k =
        weft::test::bin_kernel("slot_groups_gpu", {.deterministic = Deterministic::RunToRun});
    return k;
}

// One launch on `device` from `initial` counters.
BinOutputs launch_on(weft::Device device, const BinCase& in, const std::vector<int>& initial) {
    return launch_bins(bin_kernel(), device, in, initial);
}

void expect_same_as_cpu(int n, int elements, uint32_t seed) {
    SCOPED_TRACE(std::to_string(n) + " threads into " + std::to_string(elements) + " counter elements");
    const BinCase in = bin_case(n, elements, seed);
    const BinOutputs want = launch_on(cpu, in, in.initial);
    const BinOutputs got = launch_on(gpu, in, in.initial);
    EXPECT_EQ(got.slots, want.slots);
    EXPECT_EQ(got.counters, want.counters);
}

TEST(SlotGroupsGpu, DirectLaunchesEqualTheCpuBackend) {
    expect_same_as_cpu(1000, 1, 1);
    expect_same_as_cpu(1 << 20, 1, 2);
    expect_same_as_cpu(1 << 20, 16, 3);
    expect_same_as_cpu(1 << 20, 256, 4);
    expect_same_as_cpu(1 << 20, 65536, 5);
    // Past 1,048,576 reservations the segmented scan has three levels; 2^20 + 1 elements take
    // three radix passes.
    expect_same_as_cpu(1100000, (1 << 20) + 1, 6);
    // Histograms past 2^19 entries (256 digits x 2,051 tiles) take the three-phase scan.
    expect_same_as_cpu(2100000, 4096, 7);
}

TEST(SlotGroupsGpu, ACapturedLaunchReplaysLikeTheCpuBackend) {
    const int n = 300000;
    for (int elements : {16, 65536}) {
        SCOPED_TRACE(std::to_string(elements) + " counter elements");
        const BinCase in = bin_case(n, elements, 11 + elements);
        auto bins = weft::from_vector(in.bins, gpu);
        auto amounts = weft::from_vector(in.amounts, gpu);
        auto counters = weft::from_vector(in.initial, gpu);
        auto slots = weft::full<int>(n, -1, gpu);
        weft::launch(bin_kernel(), n, bins, amounts, counters, slots);  // compiled before the capture
        weft::synchronize(gpu);
        std::vector<int> expected_counters = launch_on(cpu, in, in.initial).counters;
        ASSERT_EQ(counters.to_vector(), expected_counters);

        const weft::Graph graph =
            weft::capture(gpu, [&] { weft::launch(bin_kernel(), n, bins, amounts, counters, slots); });
        EXPECT_EQ(counters.to_vector(), expected_counters) << "capturing runs nothing";
        for (int replay = 0; replay < 2; ++replay) {
            const BinOutputs want = launch_on(cpu, in, expected_counters);
            graph.launch();
            weft::synchronize(gpu);
            EXPECT_EQ(slots.to_vector(), want.slots) << "replay " << replay;
            EXPECT_EQ(counters.to_vector(), want.counters) << "replay " << replay;
            expected_counters = want.counters;
        }
    }
}

// A second reservation decided by the first one's slot: the execution pass reserves differently,
// found on the device and reported at the next synchronization, after a direct launch and after
// a replay; the counters keep their values.
TEST(SlotGroupsGpu, ADivergenceOnSeveralElementsIsReportedAfterALaunchAndAReplay) {
    weft::Module m{"slot_groups_diverge", {.deterministic = Deterministic::RunToRun}};
    auto kernel =
        m.kernel("slot_groups_diverge", {"counters", "out"}, [](Array<int> counters, Array<int> out) {
            auto t = weft::tid();
            auto a = weft::atomic_add(counters, t % 3, 1);
            out[a] = t;
            weft::if_(a % 2 == 0, [&] { out[weft::atomic_add(counters, t % 3, 1)] = t; });
        });
    const int n = 3000;
    const std::vector<int> initial{7, 0, 5};
    auto counters = weft::from_vector(initial, gpu);
    auto out = weft::full<int>(3 * n, -1, gpu);
    const auto expect_divergence = [&](const std::string& when) {
        try {
            weft::synchronize(gpu);
            ADD_FAILURE() << when << ": the divergence was not reported";
        } catch (const weft::Error& e) {
            EXPECT_EQ(e.kernel(), "slot_groups_diverge") << e.what();
            EXPECT_TRUE(has(e.message(), "reserved slots differently")) << when << ": " << e.message();
            EXPECT_TRUE(has(e.message(), "'counters'")) << when << ": " << e.message();
        }
        EXPECT_EQ(counters.to_vector(), initial) << when << ": the counters keep their values";
        EXPECT_NO_THROW(weft::synchronize(gpu)) << when << ": reported once";
    };
    weft::launch(kernel, n, counters, out);
    expect_divergence("a direct launch");
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(kernel, n, counters, out); });
    graph.launch();
    expect_divergence("a replay");
}

// More reservations than the record bound, in a replay: reported at the next synchronization;
// nothing is written.
TEST(SlotGroupsGpu, AReservationOverflowInAReplayIsReportedAndWritesNothing) {
    weft::Module m{"slot_groups_overflow",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 2}};
    auto kernel =
        m.kernel("slot_groups_overflow", {"trips", "counters", "slots"},
                 [](Array<int> trips, Array<int> counters, Array<int, 2> slots) {
                     auto t = weft::tid();
                     weft::for_(trips[t], [&](Int k) { slots(t, k) = weft::atomic_add(counters, t % 5, 1); });
                 });
    const int n = 4096;
    auto trips = weft::full<int>(n, 2, gpu);
    auto counters = weft::zeros<int>(5, gpu);
    auto slots = weft::full<int>({n, 4}, -1, gpu);
    weft::launch(kernel, n, trips, counters, slots);
    weft::synchronize(gpu);
    const auto counters_before = counters.to_vector();
    std::vector<int> two_trips(5, 0);
    for (int t = 0; t < n; ++t) two_trips[t % 5] += 2;
    ASSERT_EQ(counters_before, two_trips);
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(kernel, n, trips, counters, slots); });
    weft::copy(trips, weft::full<int>(n, 3, gpu));
    const auto slots_before = slots.to_vector();
    graph.launch();
    try {
        weft::synchronize(gpu);
        ADD_FAILURE() << "the replay's reservation overflow was not reported";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "slot_groups_overflow") << e.what();
        EXPECT_TRUE(has(e.message(), "deterministic_max_records")) << e.message();
    }
    EXPECT_EQ(counters.to_vector(), counters_before) << "the counters keep their values";
    EXPECT_EQ(slots.to_vector(), slots_before) << "nothing is written";
    EXPECT_NO_THROW(weft::synchronize(gpu)) << "reported once";
}

}  // namespace
