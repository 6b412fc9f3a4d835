// Slot allocation on one counter element on a GPU (count, scan, execute): the same slots as the
// CPU backend for many scan tiles and every block size, with several reservation positions per
// thread, and under graph capture and replay.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "support/slot_compact.hpp"
#include "support/test_device.hpp"

namespace {

namespace cu = weft::runtime::cuda;
using weft::Array;
using weft::Deterministic;
using weft::test::compact_amounts;
using weft::test::compact_kernel;
using weft::test::CompactKernel;
using weft::test::CompactResult;
using weft::test::launch_compact;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

TEST(SlotOneElementGpu, ManyTilesAndEveryBlockSizeEqualTheCpuBackend) {
    for (int block : {32, 256, 1024}) {
        SCOPED_TRACE("block_dim " + std::to_string(block));
        weft::Module m{"one_element_block_" + std::to_string(block),
                       {.deterministic = Deterministic::RunToRun, .block_dim = block}};
        const CompactKernel k = compact_kernel(m, "one_element_compact");
        // Around the chained scan's tiles of 2048, past 32 of them (look-back windows), and past
        // 2^19 (the three-phase scan).
        for (int n : {1, 31, 1000, 2047, 2048, 2049, 65537, 1 << 20, 3000001}) {
            SCOPED_TRACE(std::to_string(n) + " threads");
            const auto amounts = compact_amounts(n, static_cast<uint32_t>(n + block));
            const CompactResult want = launch_compact(k, cpu, amounts, 5);
            const CompactResult got = launch_compact(k, gpu, amounts, 5);
            EXPECT_EQ(got.count, want.count);
            EXPECT_EQ(got.slots, want.slots);
            EXPECT_EQ(got.out, want.out);
        }
    }
}

// slot = atomic_add(count, 0, 1) once per trip, trips[t] in 0..3: three positions per thread, the
// unused ones left for the counting pass to mark empty (the counts are not zeroed before it).
using Trips = weft::Kernel<Array<int>, Array<int>, Array<int, 2>>;

Trips trips_kernel(weft::Module& m) {
    return m.kernel("one_element_trips", {"trips", "count", "slots"},
                    [](Array<int> trips, Array<int> count, Array<int, 2> slots) {
                        auto t = weft::tid();
                        weft::for_(trips[t],
                                   [&](weft::Int k) { slots(t, k) = weft::atomic_add(count, 0, 1); });
                    });
}

std::pair<std::vector<int>, std::vector<int>> launch_trips(const Trips& k, weft::Device device,
                                                           const std::vector<int>& trips) {
    const auto n = static_cast<int64_t>(trips.size());
    auto count = weft::full<int>(1, 7, device);
    auto slots = weft::full<int>({n, 3}, -1, device);
    weft::launch(k, n, weft::from_vector(trips, device), count, slots);
    return {count.to_vector(), slots.to_vector()};
}

TEST(SlotOneElementGpu, UnusedPositionsOfLoopsAddNothingAtEveryTileEdge) {
    weft::Module m{"one_element_trips",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 3}};
    const Trips k = trips_kernel(m);
    for (int n : {1, 2047, 2048, 2049, 65537, 70001, 1 << 20}) {
        SCOPED_TRACE(std::to_string(n) + " threads");
        // A launch that fills every position first, so the next one's state is not fresh memory.
        launch_trips(k, gpu, std::vector<int>(static_cast<size_t>(n), 3));
        std::vector<int> trips = compact_amounts(n, static_cast<uint32_t>(n));
        for (int& t : trips) t = t < 0 ? 0 : t;
        const auto want = launch_trips(k, cpu, trips);
        const auto got = launch_trips(k, gpu, trips);
        EXPECT_EQ(got.first, want.first);
        EXPECT_EQ(got.second, want.second);
    }
}

// The execution pass's last block adds the total or, when the counting pass overflowed, reports
// it: directly and in a replay, the counter keeps its value and nothing is written.
TEST(SlotOneElementGpu, AnOverflowIsReportedByTheExecutionPassAndWritesNothing) {
    weft::Module m{"one_element_overflow",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 2}};
    const Trips k = trips_kernel(m);
    const int n = 100000;  // many blocks in the execution pass
    auto trips = weft::full<int>(n, 2, gpu);
    auto count = weft::full<int>(1, 7, gpu);
    auto slots = weft::full<int>({n, 3}, -1, gpu);
    weft::launch(k, n, trips, count, slots);
    weft::synchronize(gpu);
    ASSERT_EQ(count.to_vector(), std::vector<int>{7 + 2 * n});
    const auto expect_reported = [&](const char* what) {
        try {
            weft::synchronize(gpu);
            ADD_FAILURE() << what << ": the overflow was not reported";
        } catch (const weft::Error& e) {
            EXPECT_EQ(e.kernel(), "one_element_trips") << e.what();
            EXPECT_NE(e.message().find("deterministic_max_records"), std::string::npos) << e.message();
        }
        EXPECT_NO_THROW(weft::synchronize(gpu)) << what << ": reported once";
    };
    weft::copy(trips, weft::full<int>(n, 3, gpu));
    const auto slots_before = slots.to_vector();
    weft::launch(k, n, trips, count, slots);
    expect_reported("direct launch");
    EXPECT_EQ(count.to_vector(), std::vector<int>{7 + 2 * n}) << "the counter keeps its value";
    EXPECT_EQ(slots.to_vector(), slots_before) << "nothing is written";

    weft::copy(trips, weft::full<int>(n, 2, gpu));
    const cu::Driver& d = cu::require_driver();
    const auto stream = cu::current_stream(gpu.ordinal())->stream;
    cu::check(d.cuStreamBeginCapture(stream, cu::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
    weft::launch(k, n, trips, count, slots);
    cu::CUgraph graph = nullptr;
    cu::check(d.cuStreamEndCapture(stream, &graph), "end capture");
    cu::CUgraphExec exec = nullptr;
    cu::check(d.cuGraphInstantiateWithFlags(&exec, graph, 0), "instantiate");
    cu::check(d.cuGraphLaunch(exec, stream), "graph launch");
    EXPECT_NO_THROW(weft::synchronize(gpu));
    EXPECT_EQ(count.to_vector(), std::vector<int>{7 + 4 * n}) << "a replay without overflow adds the total";
    weft::copy(trips, weft::full<int>(n, 3, gpu));
    cu::check(d.cuGraphLaunch(exec, stream), "graph launch");
    expect_reported("replay");
    EXPECT_EQ(count.to_vector(), std::vector<int>{7 + 4 * n}) << "the counter keeps its value in a replay";
    d.cuGraphExecDestroy(exec);
    d.cuGraphDestroy(graph);
}

// The reservation state is reset inside the graph: every replay hands out the next slots in
// thread order.
// Both scans: the chained one (up to 2^19 counts) and the three-phase one with its total kernel.
TEST(SlotOneElementGpu, ACapturedLaunchReplaysInThreadOrder) {
    weft::Module m{"one_element_graph", {.deterministic = Deterministic::RunToRun}};
    const CompactKernel k = compact_kernel(m, "one_element_compact");
    for (int n : {500000, 1200000}) {
        SCOPED_TRACE(std::to_string(n) + " threads");
        const auto amounts = compact_amounts(n, 17);
        auto device_amounts = weft::from_vector(amounts, gpu);
        auto count = weft::full<int>(1, 0, gpu);
        auto slots = weft::full<int>(n, -1, gpu);
        auto out = weft::full<int>(15 * n, -1, gpu);            // four launches of at most 3 slots per thread
        weft::launch(k, n, device_amounts, count, slots, out);  // compiled before the capture
        weft::synchronize(gpu);
        const int total = count.to_vector()[0];

        const cu::Driver& d = cu::require_driver();
        const auto stream = cu::current_stream(gpu.ordinal())->stream;
        cu::check(d.cuStreamBeginCapture(stream, cu::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
        weft::launch(k, n, device_amounts, count, slots, out);
        cu::CUgraph graph = nullptr;
        cu::check(d.cuStreamEndCapture(stream, &graph), "end capture");
        cu::CUgraphExec exec = nullptr;
        cu::check(d.cuGraphInstantiateWithFlags(&exec, graph, 0), "instantiate");
        for (int replay = 1; replay <= 3; ++replay) {
            cu::check(d.cuGraphLaunch(exec, stream), "graph launch");
            weft::synchronize(gpu);
            const CompactResult want = launch_compact(k, cpu, amounts, replay * total);
            EXPECT_EQ(count.to_vector(), want.count) << "replay " << replay;
            EXPECT_EQ(slots.to_vector(), want.slots) << "replay " << replay;
        }
        d.cuGraphExecDestroy(exec);
        d.cuGraphDestroy(graph);
    }
}

}  // namespace
