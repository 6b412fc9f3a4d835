// Slot allocation on one counter element whose grid is one resident wave: both passes run as one
// cooperative kernel, each block waiting for every block's count between them (docs/design/0021).
// Its slots equal the CPU backend's, negative counts too; an overflow, a divergence and 2^31 slots
// leave the state clean; graph replays equal direct launches; larger grids keep the two passes;
// the fused entries' module is compiled at their first use only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cuda/context.hpp"
#include "support/errors.hpp"
#include "support/slot_amounts.hpp"
#include "support/slot_compact.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::test::compact_amounts;
using weft::test::compact_kernel;
using weft::test::CompactGraph;
using weft::test::CompactKernel;
using weft::test::CompactResult;
using weft::test::has;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

// How many times kernel `name` (either pass, or both fused) was queued on this thread's stream
// since its last synchronization: 1 where the passes ran as one kernel, 2 where they did not.
int queued(const std::string& name) {
    const auto stream = weft::runtime::cuda::current_stream(0);
    std::lock_guard lock(stream->mutex);
    int n = 0;
    for (const std::string& k : stream->unsynchronized.names()) n += k == name;
    return n;
}

// Certainly one wave (a multiprocessor holds 1,024 threads of any block size of an entry of at most
// 64 registers a thread; these take about 32), and certainly more than one (past the threads and
// the 32 blocks a multiprocessor can hold).
bool surely_fused(int64_t n) {
    const weft::runtime::cuda::DeviceContext& c = weft::runtime::cuda::context(0);
    return c.cooperative && n <= int64_t{1024} * c.sm_count;
}
bool surely_apart(int64_t n, int block) {
    const int64_t resident = std::min(2048 / block, 32);
    return (n + block - 1) / block > resident * weft::runtime::cuda::context(0).sm_count;
}

// The launch's results, and (on the GPU) how many times its kernel was queued.
CompactResult launch_on(const CompactKernel& k, weft::Device device, const std::vector<int>& amounts,
                        int initial, int* kernels = nullptr) {
    const auto n = static_cast<int64_t>(amounts.size());
    auto values = weft::from_vector(amounts, device);
    auto count = weft::full<int>(1, initial, device);
    auto slots = weft::full<int>(n, -1, device);
    auto out = weft::full<int>(3 * n + initial, -1, device);
    if (device.is_cuda()) weft::synchronize(device);
    weft::launch(k, n, values, count, slots, out);
    if (kernels) *kernels = queued("fused_compact");
    return {count.to_vector(), slots.to_vector(), out.to_vector()};
}

TEST(SlotFusedGpu, BothPassesInOneKernelEqualTheCpuBackend) {
    for (int block : {32, 256, 1024}) {
        SCOPED_TRACE("block_dim " + std::to_string(block));
        weft::Module m{"fused_block_" + std::to_string(block),
                       {.deterministic = Deterministic::RunToRun, .block_dim = block}};
        const CompactKernel k = compact_kernel(m, "fused_compact");
        for (int n : {1, 255, 65536, 262144, 3000001}) {
            SCOPED_TRACE(std::to_string(n) + " threads");
            const auto amounts = compact_amounts(n, static_cast<uint32_t>(n * 3 + block), 5);
            const CompactResult want = launch_on(k, cpu, amounts, 9);
            // Twice: the second launch reuses the first one's state (its block totals, set back to 0).
            for (int round = 0; round < 2; ++round) {
                int kernels = 0;
                EXPECT_EQ(launch_on(k, gpu, amounts, 9, &kernels), want) << "round " << round;
                if (surely_fused(n)) EXPECT_EQ(kernels, 1) << "one kernel for both passes";
                if (surely_apart(n, block)) EXPECT_EQ(kernels, 2) << "a grid past one wave keeps two passes";
            }
        }
    }
}

// A reservation per trip, trips[t] of them, with room for one per thread
// (deterministic_max_records = 1): a thread with two trips overflows the counting phase.
using Trips = weft::Kernel<Array<int>, Array<int>, Array<int>>;

TEST(SlotFusedGpu, AnOverflowWritesNothingAndTheNextLaunchIsClean) {
    weft::Module m{"fused_overflow",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 1}};
    const Trips k = m.kernel(
        "fused_trips", {"trips", "count", "slots"}, [](Array<int> trips, Array<int> count, Array<int> slots) {
            auto t = weft::tid();
            weft::for_(trips[t], [&](weft::Int) { slots[t] = weft::atomic_add(count, 0, 1); });
        });
    const int n = 65536;
    std::vector<int> good(n);
    for (int i = 0; i < n; ++i) good[static_cast<size_t>(i)] = i % 3 == 0 ? 0 : 1;
    auto cpu_count = weft::full<int>(1, 7, cpu);
    auto cpu_slots = weft::full<int>(n, -1, cpu);
    weft::launch(k, n, weft::from_vector(good, cpu), cpu_count, cpu_slots);

    auto trips = weft::from_vector(good, gpu);
    auto count = weft::full<int>(1, 7, gpu);
    auto slots = weft::full<int>(n, -1, gpu);
    for (int at : {0, 40000, n - 1}) {
        SCOPED_TRACE("two trips at thread " + std::to_string(at));
        std::vector<int> bad = good;
        bad[static_cast<size_t>(at)] = 2;
        weft::copy(trips, weft::from_vector(bad, gpu));
        weft::synchronize(gpu);
        weft::launch(k, n, trips, count, slots);
        if (surely_fused(n)) EXPECT_EQ(queued("fused_trips"), 1);
        try {
            weft::synchronize(gpu);
            ADD_FAILURE() << "the overflow was not reported";
        } catch (const weft::Error& e) {
            EXPECT_TRUE(has(e.message(), "deterministic_max_records")) << e.message();
        }
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
}

// The second reservation depends on the first one's slot, which the counting phase does not know
// (it sees 0): in the execution phase threads past the first reserve twice, with room for one.
using Two = weft::Kernel<Array<int>, Array<int>>;

TEST(SlotFusedGpu, ADivergenceIsReportedAndTheNextLaunchIsClean) {
    weft::Module m{"fused_diverge",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 1}};
    const Two diverging = m.kernel("fused_diverging", {"count", "out"}, [](Array<int> count, Array<int> out) {
        auto t = weft::tid();
        auto slot = weft::atomic_add(count, 0, 1);
        out[t] = slot;
        weft::if_(slot > 0, [&] { out[t] = weft::atomic_add(count, 0, 1); });
    });
    const Two identity = m.kernel("fused_identity", {"count", "out"}, [](Array<int> count, Array<int> out) {
        auto t = weft::tid();
        out[weft::atomic_add(count, 0, 1)] = t;
    });
    const int n = 65536;
    auto count = weft::full<int>(1, 0, gpu);
    auto out = weft::full<int>(n, -1, gpu);
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        weft::synchronize(gpu);
        weft::launch(diverging, n, count, out);
        if (surely_fused(n)) EXPECT_EQ(queued("fused_diverging"), 1);
        try {
            weft::synchronize(gpu);
            ADD_FAILURE() << "the divergence was not reported";
        } catch (const weft::Error& e) {
            EXPECT_TRUE(has(e.message(), "reserved slots differently")) << e.message();
        }
        EXPECT_EQ(count.to_vector(), std::vector<int>{0}) << "the counter keeps its value";
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

// slot = atomic_add(count, 0, amounts[t]); slots[t] = slot (any amount, negative ones too).
using Amounts = weft::Kernel<Array<int>, Array<int>, Array<int>>;

Amounts amounts_kernel(weft::Module& m, const std::string& name) {
    return m.kernel(name, {"amounts", "count", "slots"},
                    [](Array<int> amounts, Array<int> count, Array<int> slots) {
                        auto t = weft::tid();
                        slots[t] = weft::atomic_add(count, 0, amounts[t]);
                    });
}

// The launch's counter and slots, from a counter at `initial` (`name`: the kernel's).
std::pair<std::vector<int>, std::vector<int>> amounts_on(const Amounts& k, const std::string& name,
                                                         weft::Device device, const std::vector<int>& amounts,
                                                         int initial) {
    const auto n = static_cast<int64_t>(amounts.size());
    auto count = weft::full<int>(1, initial, device);
    auto slots = weft::full<int>(n, -1, device);
    if (device.is_cuda()) weft::synchronize(device);
    weft::launch(k, n, weft::from_vector(amounts, device), count, slots);
    if (device.is_cuda() && surely_fused(n)) EXPECT_EQ(queued(name), 1) << "one kernel for both passes";
    return {count.to_vector(), slots.to_vector()};
}

// Negative counts make whole blocks' totals negative (each block's total travels as a 43-bit
// two's complement number): slots and counter equal the CPU backend's.
TEST(SlotFusedGpu, NegativeBlockTotalsEqualTheCpuBackend) {
    for (int block : {32, 256, 1024}) {
        SCOPED_TRACE("block_dim " + std::to_string(block));
        weft::Module m{"fused_negative_" + std::to_string(block),
                       {.deterministic = Deterministic::RunToRun, .block_dim = block}};
        const Amounts k = amounts_kernel(m, "fused_negative");
        for (int n : {65536, 100003}) {
            SCOPED_TRACE(std::to_string(n) + " threads");
            const std::vector<int> amounts = weft::test::negative_runs(n, static_cast<uint32_t>(n + block));
            const auto want = amounts_on(k, "fused_negative", cpu, amounts, 2000000000);
            for (int round = 0; round < 2; ++round)
                EXPECT_EQ(amounts_on(k, "fused_negative", gpu, amounts, 2000000000), want)
                    << "round " << round;
        }
    }
}

// 2^31 - 1 slots in one launch fit; one more is an error that writes nothing; the next launch
// is clean. 65,536 threads are 256 blocks of 256 (each block reads every block's total),
// 262,144 are 1,024 (groups of 32 blocks, the one past 2^31 - 1 in the last group).
TEST(SlotFusedGpu, TwoToThe31MinusOneSlotsFitAndOneMoreIsAnError) {
    weft::Module m{"fused_too_many", {.deterministic = Deterministic::RunToRun}};
    const Amounts k = amounts_kernel(m, "fused_too_many");
    for (int n : {65536, 262144}) {
        SCOPED_TRACE(std::to_string(n) + " threads");
        std::vector<int> amounts(static_cast<size_t>(n), 1);
        amounts[300] = 2147483647 - (n - 1);  // (a block other than the first)
        auto count = weft::full<int>(1, 0, gpu);
        auto slots = weft::full<int>(n, -1, gpu);
        const auto values = weft::from_vector(amounts, gpu);
        weft::synchronize(gpu);
        weft::launch(k, n, values, count, slots);
        if (surely_fused(n)) EXPECT_EQ(queued("fused_too_many"), 1);
        EXPECT_NO_THROW(weft::synchronize(gpu));
        EXPECT_EQ(count.to_vector(), std::vector<int>{2147483647});
        const std::vector<int> got = slots.to_vector();
        EXPECT_EQ(got[300], 300);
        EXPECT_EQ(got[301], 300 + amounts[300]);
        EXPECT_EQ(got[static_cast<size_t>(n - 1)], 2147483646);

        amounts[static_cast<size_t>(n - 1)] = 2;
        weft::copy(count, weft::full<int>(1, 0, gpu));
        weft::copy(slots, weft::full<int>(n, -1, gpu));
        weft::launch(k, n, weft::from_vector(amounts, gpu), count, slots);
        try {
            weft::synchronize(gpu);
            ADD_FAILURE() << "2^31 slots were not reported";
        } catch (const weft::Error& e) {
            EXPECT_TRUE(has(e.message(), "2^31 - 1 slots")) << e.message();
        }
        EXPECT_EQ(count.to_vector(), std::vector<int>{0}) << "the counter keeps its value";
        EXPECT_EQ(slots.to_vector(), std::vector<int>(static_cast<size_t>(n), -1)) << "nothing is written";

        weft::launch(k, n, values, count, slots);
        EXPECT_NO_THROW(weft::synchronize(gpu)) << "the next launch starts clean";
        EXPECT_EQ(count.to_vector(), std::vector<int>{2147483647});
        EXPECT_EQ(slots.to_vector(), got);
    }
}

// The fused entries are a module of their own: a kernel launched only on grids that could never
// be one wave compiles none; its first launch that could fuse compiles it, once.
TEST(SlotFusedGpu, TheFusedModuleIsCompiledAtItsFirstUseOnly) {
    weft::Module m{"fused_lazy", {.deterministic = Deterministic::RunToRun, .verbose = true}};
    const Amounts k = amounts_kernel(m, "fused_lazy");
    const auto fused_modules = [&](int64_t n) {
        auto values = weft::full<int>(n, 1, gpu);
        auto count = weft::zeros<int>(1, gpu);
        auto slots = weft::full<int>(n, -1, gpu);
        weft::synchronize(gpu);
        testing::internal::CaptureStderr();
        weft::launch(k, n, values, count, slots);
        weft::synchronize(gpu);
        const std::string log = testing::internal::GetCapturedStderr();
        EXPECT_EQ(count.to_vector(), std::vector<int>{static_cast<int>(n)});
        int lines = 0;
        for (size_t at = log.find("(fused entries)"); at != std::string::npos;
             at = log.find("(fused entries)", at + 1))
            ++lines;
        return lines;
    };
    EXPECT_EQ(fused_modules(3000001), 0) << "a grid past what a device holds: two passes, no fused module";
    EXPECT_EQ(fused_modules(3000001), 0);
    if (!weft::runtime::cuda::context(0).cooperative) return;
    EXPECT_EQ(fused_modules(65536), 1) << "the first launch that can fuse compiles the fused module";
    EXPECT_EQ(fused_modules(65536), 0) << "and only the first";
    EXPECT_EQ(fused_modules(1000), 0);
}

// Graph replays (fused where captures take cooperative launches) equal direct launches (fused).
TEST(SlotFusedGpu, FortyGraphReplaysEqualDirectLaunches) {
    weft::Module m{"fused_graph", {.deterministic = Deterministic::RunToRun}};
    const CompactKernel k = compact_kernel(m, "fused_compact");
    for (int n : {65536, 262144}) {
        SCOPED_TRACE(std::to_string(n) + " threads");
        const auto amounts = compact_amounts(n, 41, 5);
        const CompactResult want = launch_on(k, cpu, amounts, 0);
        CompactGraph g(k, gpu, amounts);
        for (int round = 0; round < 40; ++round) {
            g.clear();
            weft::synchronize(gpu);
            if (round % 2 == 1) {
                g.enqueue();
                if (surely_fused(n)) ASSERT_EQ(queued("fused_compact"), 1) << "round " << round;
            } else {
                g.graph.launch();
            }
            weft::synchronize(gpu);
            ASSERT_EQ(g.count.to_vector(), want.count) << "round " << round;
            ASSERT_EQ(g.slots.to_vector(), want.slots) << "round " << round;
            ASSERT_EQ(g.out.to_vector(), std::vector<int>(want.out.begin(), want.out.begin() + 3 * n))
                << "round " << round;
        }
    }
}

// Inside a conditional body (which keeps the two passes) the slots still follow thread order, from
// one trip of the loop to the next.
TEST(SlotFusedGpu, ALaunchInsideACaptureWhileBodyTakesItsSlotsInThreadOrder) {
    weft::Module m{"fused_body", {.deterministic = Deterministic::RunToRun}};
    const Two identity =
        m.kernel("fused_body_identity", {"count", "out"}, [](Array<int> count, Array<int> out) {
            auto t = weft::tid();
            out[weft::atomic_add(count, 0, 1)] = t;
        });
    weft::Module plain{"fused_body_countdown"};
    auto countdown =
        plain.kernel("fused_body_countdown", {"left"}, [](Array<int> left) { left[0] = left[0] - 1; });
    const int n = 65536;
    auto count = weft::full<int>(1, 0, gpu);
    auto out = weft::full<int>(3 * n, -1, gpu);
    auto left = weft::zeros<int>(1, gpu);
    weft::launch(identity, n, count, out);
    weft::launch(countdown, 1, left);
    weft::synchronize(gpu);
    const weft::Graph graph = weft::capture(gpu, [&] {
        weft::capture_while(left, [&] {
            weft::launch(identity, n, count, out);
            weft::launch(countdown, 1, left);
        });
    });
    weft::copy(count, weft::full<int>(1, 0, gpu));
    weft::copy(left, weft::full<int>(1, 3, gpu));
    graph.launch();
    EXPECT_NO_THROW(weft::synchronize(gpu));
    EXPECT_EQ(count.to_vector(), std::vector<int>{3 * n});
    const std::vector<int> got = out.to_vector();
    int wrong = 0;
    for (int i = 0; i < 3 * n; ++i) wrong += got[static_cast<size_t>(i)] != i % n;
    EXPECT_EQ(wrong, 0) << "three trips, each in thread order";
}

}  // namespace
