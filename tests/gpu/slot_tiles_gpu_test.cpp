// Slot allocation on one counter element with one reservation position per thread on a GPU: the
// passes scan per block (reduce-then-scan, no scan kernel, docs/design/0021) and keep their state
// between launches. Slots equal the CPU backend's for every block size and ragged last tiles; the
// state stays clean after an overflow, a divergence or an element passing 2^31 - 1 slots; graph
// replays and direct launches interleave in thread order.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/errors.hpp"
#include "support/slot_compact.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::test::compact_amounts;
using weft::test::compact_kernel;
using weft::test::CompactGraph;
using weft::test::CompactKernel;
using weft::test::CompactResult;
using weft::test::has;
using weft::test::launch_compact;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

TEST(SlotTilesGpu, BlockSizesThatDoNotDivideTheThreadsEqualTheCpuBackend) {
    for (int block : {32, 96, 256, 1024}) {
        SCOPED_TRACE("block_dim " + std::to_string(block));
        weft::Module m{"tiles_block_" + std::to_string(block),
                       {.deterministic = Deterministic::RunToRun, .block_dim = block}};
        const CompactKernel k = compact_kernel(m, "tiles_compact");
        // One thread; one tile, ragged; many tiles per block (past two waves of blocks), ragged.
        for (int n : {1, 2, 33, 95, 97, 1025, 263001, 3000001}) {
            SCOPED_TRACE(std::to_string(n) + " threads");
            const auto amounts = compact_amounts(n, static_cast<uint32_t>(n * 7 + block));
            const CompactResult want = launch_compact(k, cpu, amounts, 5);
            // Twice: the second launch reuses the first one's state.
            EXPECT_EQ(launch_compact(k, gpu, amounts, 5), want);
            EXPECT_EQ(launch_compact(k, gpu, amounts, 5), want);
        }
    }
}

// slot = atomic_add(count, 0, 1); out[slot] = t: out is the identity, in thread order.
using Identity = weft::Kernel<Array<int>, Array<int>>;

Identity identity_kernel(weft::Module& m) {
    return m.kernel("tiles_identity", {"count", "out"}, [](Array<int> count, Array<int> out) {
        auto t = weft::tid();
        out[weft::atomic_add(count, 0, 1)] = t;
    });
}

TEST(SlotTilesGpu, SixteenMillionThreadsTakeTheirSlotsInThreadOrder) {
    weft::Module m{"tiles_identity", {.deterministic = Deterministic::RunToRun}};
    const Identity k = identity_kernel(m);
    for (int64_t n : {int64_t{1} << 24, (int64_t{1} << 24) + 77}) {
        SCOPED_TRACE(std::to_string(n) + " threads");
        auto count = weft::full<int>(1, 3, gpu);
        auto out = weft::full<int>(n + 3, -1, gpu);
        weft::launch(k, n, count, out);
        const std::vector<int> got = out.to_vector();
        EXPECT_EQ(count.to_vector(), std::vector<int>{static_cast<int>(n + 3)});
        int64_t wrong = 0;
        for (int64_t i = 3; i < n + 3; ++i) wrong += got[static_cast<size_t>(i)] != i - 3;
        EXPECT_EQ(wrong, 0) << "slots out of thread order";
        EXPECT_EQ(got[0], -1);
    }
}

// A reservation per trip, trips[t] of them, with room for one per thread
// (deterministic_max_records = 1): a thread with two trips overflows the counting pass.
using Trips = weft::Kernel<Array<int>, Array<int>, Array<int>>;

Trips trips_kernel(weft::Module& m) {
    return m.kernel("tiles_trips", {"trips", "count", "slots"},
                    [](Array<int> trips, Array<int> count, Array<int> slots) {
                        auto t = weft::tid();
                        weft::for_(trips[t], [&](weft::Int) { slots[t] = weft::atomic_add(count, 0, 1); });
                    });
}

std::vector<int> trips_for(int n, uint32_t seed) {
    std::vector<int> trips = compact_amounts(n, seed);
    for (int& t : trips) t = t > 0 ? 1 : 0;
    return trips;
}

void expect_error_at_sync(const char* what, const std::string& needle) {
    try {
        weft::synchronize(gpu);
        ADD_FAILURE() << what << ": no error was reported";
    } catch (const weft::Error& e) {
        EXPECT_TRUE(has(e.message(), needle)) << what << ": " << e.message();
    }
    EXPECT_NO_THROW(weft::synchronize(gpu)) << what << ": reported once";
}

TEST(SlotTilesGpu, AnOverflowLeavesTheStateCleanForTheNextLaunch) {
    weft::Module m{"tiles_overflow",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 1}};
    const Trips k = trips_kernel(m);
    const int n = 100003;
    const auto good = trips_for(n, 3);
    // What the CPU backend gives for a good launch from a counter at 7.
    auto cpu_count = weft::full<int>(1, 7, cpu);
    auto cpu_slots = weft::full<int>(n, -1, cpu);
    weft::launch(k, n, weft::from_vector(good, cpu), cpu_count, cpu_slots);

    auto trips = weft::from_vector(good, gpu);
    auto count = weft::full<int>(1, 7, gpu);
    auto slots = weft::full<int>(n, -1, gpu);
    for (int round = 0; round < 3; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        std::vector<int> bad = good;
        bad[static_cast<size_t>(round * 40000)] = 2;  // first, a middle, a late block
        weft::copy(trips, weft::from_vector(bad, gpu));
        weft::launch(k, n, trips, count, slots);
        expect_error_at_sync("overflow", "deterministic_max_records");
        EXPECT_EQ(count.to_vector(), std::vector<int>{7}) << "the counter keeps its value";
        EXPECT_EQ(slots.to_vector(), std::vector<int>(n, -1)) << "nothing is written";

        weft::copy(trips, weft::from_vector(good, gpu));
        weft::launch(k, n, trips, count, slots);
        EXPECT_NO_THROW(weft::synchronize(gpu)) << "the next launch starts clean";
        EXPECT_EQ(count.to_vector(), cpu_count.to_vector());
        EXPECT_EQ(slots.to_vector(), cpu_slots.to_vector());
        weft::copy(count, weft::full<int>(1, 7, gpu));
        weft::copy(slots, weft::full<int>(n, -1, gpu));
    }

    // In a graph (its own state, kept for every replay): a good replay, an overflowing one, a good one.
    const weft::Graph graph = weft::capture(gpu, [&] { weft::launch(k, n, trips, count, slots); });
    for (const bool overflow : {false, true, false}) {
        SCOPED_TRACE(overflow ? "overflowing replay" : "good replay");
        std::vector<int> t = good;
        if (overflow) t[n - 1] = 2;
        weft::copy(trips, weft::from_vector(t, gpu));
        weft::copy(count, weft::full<int>(1, 7, gpu));
        weft::copy(slots, weft::full<int>(n, -1, gpu));
        graph.launch();
        if (overflow) {
            expect_error_at_sync("replay", "deterministic_max_records");
            EXPECT_EQ(count.to_vector(), std::vector<int>{7});
            EXPECT_EQ(slots.to_vector(), std::vector<int>(n, -1));
        } else {
            EXPECT_NO_THROW(weft::synchronize(gpu));
            EXPECT_EQ(count.to_vector(), cpu_count.to_vector());
            EXPECT_EQ(slots.to_vector(), cpu_slots.to_vector());
        }
    }
}

// The second reservation depends on the first one's slot, which the counting pass does not know
// (it sees 0): in the execution pass threads past the first reserve twice, with room for one.
using Diverging = weft::Kernel<Array<int>, Array<int>>;

TEST(SlotTilesGpu, ADivergenceLeavesTheStateCleanForTheNextLaunch) {
    weft::Module m{"tiles_diverge",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 1}};
    const Diverging diverging =
        m.kernel("tiles_diverging", {"count", "out"}, [](Array<int> count, Array<int> out) {
            auto t = weft::tid();
            auto slot = weft::atomic_add(count, 0, 1);
            out[t] = slot;
            weft::if_(slot > 0, [&] { out[t] = weft::atomic_add(count, 0, 1); });
        });
    const Identity identity = identity_kernel(m);
    const int n = 70001;
    auto count = weft::full<int>(1, 0, gpu);
    auto out = weft::full<int>(2 * n, -1, gpu);
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        weft::launch(diverging, n, count, out);
        expect_error_at_sync("divergence", "reserved slots differently");
        EXPECT_EQ(count.to_vector(), std::vector<int>{0}) << "the counter keeps its value";
        // The same shape on the same stream: the state the diverged launch used.
        weft::launch(identity, n, count, out);
        EXPECT_NO_THROW(weft::synchronize(gpu)) << "the next launch starts clean";
        EXPECT_EQ(count.to_vector(), std::vector<int>{n});
        const std::vector<int> got = out.to_vector();
        int wrong = 0;
        for (int i = 0; i < n; ++i) wrong += got[static_cast<size_t>(i)] != i;
        EXPECT_EQ(wrong, 0);
        weft::copy(count, weft::full<int>(1, 0, gpu));
    }
}

// slot = atomic_add(count, 0, amounts[t]); slots[t] = slot.
using Amounts = weft::Kernel<Array<int>, Array<int>, Array<int>>;

TEST(SlotTilesGpu, AnElementPassingTwoToThe31SlotsIsAnErrorAndTheNextLaunchIsClean) {
    weft::Module m{"tiles_too_many", {.deterministic = Deterministic::RunToRun}};
    const Amounts k = m.kernel("tiles_amounts", {"amounts", "count", "slots"},
                               [](Array<int> amounts, Array<int> count, Array<int> slots) {
                                   auto t = weft::tid();
                                   slots[t] = weft::atomic_add(count, 0, amounts[t]);
                               });
    const int n = 3000;
    std::vector<int> amounts(n, 1);
    amounts[10] = amounts[1500] = amounts[2999] = 1 << 30;
    auto count = weft::full<int>(1, 4, gpu);
    auto slots = weft::full<int>(n, -1, gpu);
    weft::launch(k, n, weft::from_vector(amounts, gpu), count, slots);
    expect_error_at_sync("too many", "2^31 - 1 slots");
    EXPECT_EQ(count.to_vector(), std::vector<int>{4}) << "the counter keeps its value";
    EXPECT_EQ(slots.to_vector(), std::vector<int>(n, -1)) << "nothing is written";

    amounts[1500] = 1 << 29;
    amounts[2999] = 1;
    weft::launch(k, n, weft::from_vector(amounts, gpu), count, slots);
    EXPECT_NO_THROW(weft::synchronize(gpu)) << "the next launch starts clean";
    EXPECT_EQ(count.to_vector(), std::vector<int>{4 + (1 << 30) + (1 << 29) + (n - 2)});
    const std::vector<int> got = slots.to_vector();
    EXPECT_EQ(got[10], 4 + 10);
    EXPECT_EQ(got[11], 4 + 10 + (1 << 30));
    EXPECT_EQ(got[2999], 4 + (1 << 30) + (1 << 29) + (n - 3));
}

TEST(SlotTilesGpu, GraphReplaysAndDirectLaunchesInterleaveInThreadOrder) {
    weft::Module m{"tiles_graph", {.deterministic = Deterministic::RunToRun}};
    const CompactKernel k = compact_kernel(m, "tiles_compact");
    for (int n : {1, 1000, 65536, 262145}) {
        SCOPED_TRACE(std::to_string(n) + " threads");
        const auto amounts = compact_amounts(n, 29);
        const CompactResult first = launch_compact(k, cpu, amounts, 0);
        const int total = first.count[0];
        CompactGraph g(k, gpu, amounts);
        for (int round = 0; round < 40; ++round) {
            g.clear();
            if (round % 3 == 2)
                g.enqueue();
            else
                g.graph.launch();
            weft::synchronize(gpu);
            ASSERT_EQ(g.count.to_vector(), std::vector<int>{total}) << "round " << round;
            ASSERT_EQ(g.slots.to_vector(), first.slots) << "round " << round;
            ASSERT_EQ(g.out.to_vector(), std::vector<int>(first.out.begin(), first.out.begin() + 3 * n))
                << "round " << round;
        }
    }
}

}  // namespace
