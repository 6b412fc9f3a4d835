// Deterministic sums resolved by the kernel itself (docs/design/0024): the CPU's bits, in direct launches and
// replays, after failures and on two streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cuda/context.hpp"
#include "support/deterministic_cases.hpp"
#include "support/errors.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::test::Op;
using weft::test::OpKernels;
using weft::test::random_case;
using weft::test::same_bits_all;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

struct Shape {
    int writes;
    int outputs;
};

// The kernels queued on this thread's stream since its last synchronization: a launch that
// resolves in its kernel queues no library kernel ("... (deterministic det_resolve_...)").
std::vector<std::string> queued_kernels() {
    const auto stream = weft::runtime::cuda::current_stream(0);
    std::lock_guard lock(stream->mutex);
    return stream->unsynchronized.names();
}

// Whether a library kernel whose name holds `part` was queued ("" : any).
bool queued_a_library_kernel(const std::string& part = "") {
    for (const std::string& k : queued_kernels())
        if (k.find("(deterministic " + part) != std::string::npos) return true;
    return false;
}

// Launches resolve in the kernel only where the grid (a thread per launch thread and per slot, 256
// a block) is one wave of resident blocks: certainly with at most 2 blocks per multiprocessor
// (the resolving entry takes at most 64 registers), never beyond 8 (2,048 threads).
bool surely_resolved_in_kernel(const Shape& shape) {
    return std::max(shape.writes, shape.outputs) <= 2 * 256 * weft::runtime::cuda::context(0).sm_count;
}
bool surely_resolved_apart(const Shape& shape) {
    return std::max(shape.writes, shape.outputs) > 8 * 256 * weft::runtime::cuda::context(0).sm_count;
}

weft::OptionsPatch options(DeterministicStrategy strategy) {
    return {.deterministic = Deterministic::RunToRun, .deterministic_strategy = strategy};
}

// Both strategies the kernel resolves itself, at the benchmark's shapes (one hot element, as many
// outputs as writes, many writes into fewer outputs) and few writes into many outputs (a grid
// sized by the slots, not the threads).
const DeterministicStrategy kStrategies[] = {DeterministicStrategy::Compact, DeterministicStrategy::Exact};
const Shape kShapes[] = {{1024, 1}, {65536, 65536}, {1 << 20, 65536}, {4096, 1 << 20}};

// A direct launch small enough resolves in its kernel (the second one into a target, whose state
// is cached, is that one kernel alone), a large one apart; both give the CPU's bits, launch after
// launch.
TEST(ResolveInKernelGpu, DirectLaunchesGiveTheCpusBits) {
    for (const DeterministicStrategy strategy : kStrategies) {
        weft::Module m{std::string("in_kernel_direct_") + weft::strategy_name(strategy), options(strategy)};
        const OpKernels<float> kernels(m);
        for (const Shape shape : kShapes) {
            SCOPED_TRACE(std::string(weft::strategy_name(strategy)) + " " + std::to_string(shape.writes) +
                         " -> " + std::to_string(shape.outputs));
            const auto c = random_case<float>("direct", shape.writes, shape.outputs, -20, 20, 7);
            auto values = weft::from_vector(c.values, gpu);
            auto index = weft::from_vector(c.index, gpu);
            auto out = weft::from_vector(c.initial, gpu);
            auto on_cpu = weft::from_vector(c.initial, cpu);
            const auto values_cpu = weft::from_vector(c.values, cpu);
            const auto index_cpu = weft::from_vector(c.index, cpu);
            for (int launch = 0; launch < 3; ++launch) {
                weft::synchronize(gpu);
                weft::launch(kernels.get(Op::Add), shape.writes, values, index, out);
                if (launch > 0 && surely_resolved_in_kernel(shape))
                    EXPECT_EQ(queued_kernels().size(), 1u) << "launch " << launch;
                if (surely_resolved_apart(shape))
                    EXPECT_TRUE(queued_a_library_kernel("det_resolve")) << "launch " << launch;
                weft::launch(kernels.get(Op::Add), shape.writes, values_cpu, index_cpu, on_cpu);
                EXPECT_TRUE(same_bits_all(out.to_vector(), on_cpu.to_vector())) << "launch " << launch;
            }
        }
    }
}

// A graph of (zero the target, launch) replayed many times gives each time the bits of a direct
// launch: the graph's state, initialised once at capture (no publishing node), is left clean by
// every replay's resolve.
TEST(ResolveInKernelGpu, ReplaysEqualDirectLaunches) {
    for (const DeterministicStrategy strategy : kStrategies) {
        weft::Module m{std::string("in_kernel_replay_") + weft::strategy_name(strategy), options(strategy)};
        const OpKernels<float> kernels(m);
        for (const Shape shape : kShapes) {
            SCOPED_TRACE(std::string(weft::strategy_name(strategy)) + " " + std::to_string(shape.writes) +
                         " -> " + std::to_string(shape.outputs));
            const auto c = random_case<float>("replay", shape.writes, shape.outputs, -20, 20, 9);
            auto values = weft::from_vector(c.values, gpu);
            auto index = weft::from_vector(c.index, gpu);
            auto direct = weft::zeros<float>(shape.outputs, gpu);
            weft::launch(kernels.get(Op::Add), shape.writes, values, index, direct);
            const auto want = direct.to_vector();
            auto out = weft::zeros<float>(shape.outputs, gpu);
            weft::synchronize(gpu);
            const weft::Graph graph = weft::capture(gpu, [&] {
                out.zero_();
                weft::launch(kernels.get(Op::Add), shape.writes, values, index, out);
            });
            EXPECT_FALSE(queued_a_library_kernel("det_publish")) << "no publishing node";
            EXPECT_TRUE(queued_a_library_kernel("det_resolve")) << "a resolving node";
            for (int replay = 0; replay < 50; ++replay) graph.launch();
            EXPECT_TRUE(same_bits_all(out.to_vector(), want)) << "after 50 replays";
        }
    }
}

// A replay that faults (an index out of bounds, with bounds checking) still leaves the state
// clean: the next good replay, and a direct launch (small enough to resolve in its kernel), give
// the right sums.
TEST(ResolveInKernelGpu, AReplayAfterAFaultingOneGivesTheRightSums) {
    for (const DeterministicStrategy strategy : kStrategies) {
        SCOPED_TRACE(weft::strategy_name(strategy));
        weft::OptionsPatch o = options(strategy);
        o.bounds_check = true;
        weft::Module m{std::string("in_kernel_fault_") + weft::strategy_name(strategy), o};
        const OpKernels<float> kernels(m);
        const int writes = 1 << 16, outputs = 70000;
        const auto c = random_case<float>("fault", writes, outputs, -20, 20, 13);
        auto values = weft::from_vector(c.values, gpu);
        auto index = weft::from_vector(c.index, gpu);
        auto out = weft::zeros<float>(outputs, gpu);
        const weft::Graph graph = weft::capture(gpu, [&] {
            out.zero_();
            weft::launch(kernels.get(Op::Add), writes, values, index, out);
        });
        std::vector<int> bad = c.index;
        for (int t = 0; t < writes; t += 4096) bad[static_cast<size_t>(t)] = outputs + 5;
        weft::copy(index, weft::from_vector(bad, gpu));
        graph.launch();
        std::string error;
        try {
            weft::synchronize(gpu);
        } catch (const weft::Error& e) {
            error = e.message();
        }
        EXPECT_TRUE(weft::test::has(error, "out of bounds")) << error;
        weft::copy(index, weft::from_vector(c.index, gpu));
        graph.launch();
        auto on_cpu = weft::zeros<float>(outputs, cpu);
        weft::launch(kernels.get(Op::Add), writes, weft::from_vector(c.values, cpu),
                     weft::from_vector(c.index, cpu), on_cpu);
        const auto want = on_cpu.to_vector();
        EXPECT_TRUE(same_bits_all(out.to_vector(), want)) << "the replay after the fault";
        auto direct = weft::zeros<float>(outputs, gpu);
        weft::launch(kernels.get(Op::Add), writes, values, index, direct);
        EXPECT_TRUE(same_bits_all(direct.to_vector(), want)) << "a direct launch after the fault";
    }
}

// Inside a capture_while body, the state initialised at capture is left clean by each run's
// resolve: three runs add three times.
TEST(ResolveInKernelGpu, ConditionalBodiesResolveEachRun) {
    weft::Module m{"in_kernel_body", options(DeterministicStrategy::Compact)};
    const OpKernels<float> kernels(m);
    weft::Module plain{"in_kernel_countdown"};
    auto countdown =
        plain.kernel("in_kernel_countdown", {"left"}, [](Array<int> left) { left[0] = left[0] - 1; });
    const int outputs = 65536;
    const auto c = random_case<float>("body", 1 << 17, outputs, -10, 10, 17);
    auto values = weft::from_vector(c.values, gpu);
    auto index = weft::from_vector(c.index, gpu);
    auto out = weft::zeros<float>(outputs, gpu);
    auto left = weft::zeros<int>(1, gpu);
    weft::launch(countdown, 1, left);
    const weft::Graph graph = weft::capture(gpu, [&] {
        weft::capture_while(left, [&] {
            weft::launch(kernels.get(Op::Add), 1 << 17, values, index, out);
            weft::launch(countdown, 1, left);
        });
    });
    weft::copy(left, weft::full<int>(1, 3, gpu));
    graph.launch();
    auto on_cpu = weft::zeros<float>(outputs, cpu);
    for (int run = 0; run < 3; ++run)
        weft::launch(kernels.get(Op::Add), 1 << 17, weft::from_vector(c.values, cpu),
                     weft::from_vector(c.index, cpu), on_cpu);
    EXPECT_TRUE(same_bits_all(out.to_vector(), on_cpu.to_vector()));
}

// Launches on two streams at once, each into its own target, each resolving in its kernel (two
// cooperative grids run concurrently): every result is the CPU's.
TEST(ResolveInKernelGpu, LaunchesOnTwoStreamsGiveTheCpusBits) {
    weft::Module m{"in_kernel_streams", options(DeterministicStrategy::Compact)};
    const OpKernels<float> kernels(m);
    const int writes = 1 << 16, outputs = 1 << 14;
    const auto c = random_case<float>("streams", writes, outputs, -20, 20, 19);
    auto values = weft::from_vector(c.values, gpu);
    auto index = weft::from_vector(c.index, gpu);
    auto on_cpu = weft::zeros<float>(outputs, cpu);
    weft::launch(kernels.get(Op::Add), writes, weft::from_vector(c.values, cpu),
                 weft::from_vector(c.index, cpu), on_cpu);
    const auto want = on_cpu.to_vector();
    const weft::Stream first(gpu), second(gpu);
    std::vector<weft::DeviceArray<float>> outs;
    for (int k = 0; k < 4; ++k) outs.push_back(weft::zeros<float>(outputs, gpu));
    weft::synchronize(gpu);
    for (int round = 0; round < 32; ++round) {
        for (int k = 0; k < 4; ++k) {
            const weft::ScopedStream on(k % 2 == 0 ? first : second);
            outs[static_cast<size_t>(k)].zero_();
            weft::launch(kernels.get(Op::Add), writes, values, index, outs[static_cast<size_t>(k)]);
        }
    }
    first.synchronize();
    second.synchronize();
    for (int k = 0; k < 4; ++k)
        EXPECT_TRUE(same_bits_all(outs[static_cast<size_t>(k)].to_vector(), want)) << k;
}

}  // namespace
