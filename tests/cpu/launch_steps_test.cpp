// A launch's list of steps, and which of them a graph capture could record as they run (only
// stream-ordered work); see docs/design/0017.
#include "runtime/launch_steps.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using weft::runtime::KernelLaunch;
using weft::runtime::Step;

struct Request {
    weft::plan::KernelPlan kernel;
    weft::Options options;
    std::vector<weft::LaunchArg> args;
    std::vector<std::string> names = {"out"};

    explicit Request(bool counts) {
        kernel.name = "k";
        kernel.variants.forward = 0;
        if (counts) kernel.variants.counting = 1;
        kernel.writes = {true};
        kernel.shape_reads = {0};
        kernel.atomics = {false};
        args.emplace_back(weft::AnyArray(weft::zeros<float>(4, weft::Device::cpu())));
    }
    weft::runtime::LaunchRequest on(weft::Device device) const {
        weft::runtime::LaunchRequest r;
        r.backend = &weft::runtime::backend(device);
        r.kernel = &kernel;
        r.options = &options;
        r.args = &args;
        r.param_names = &names;
        r.grid.dims[0] = 4;
        r.site = {"k", "launch_steps_test.cpp", 1, 4};
        return r;
    }
};

std::vector<Step> steps_of(const KernelLaunch& launch) {
    return {launch.steps().begin(), launch.steps().end()};
}

TEST(LaunchSteps, AKernelPlansPreparesExecutesAndResolves) {
    const Request r(false);
    const KernelLaunch launch(r.on(weft::Device::cpu()));
    EXPECT_EQ(steps_of(launch), (std::vector<Step>{Step::Plan, Step::Prepare, Step::Execute, Step::Resolve}));
}

TEST(LaunchSteps, ASlotAllocatingKernelCountsAndAssignsBeforeItExecutes) {
    const Request r(true);
    const KernelLaunch launch(r.on(weft::Device::cpu()));
    EXPECT_EQ(steps_of(launch), (std::vector<Step>{Step::Plan, Step::Prepare, Step::Count, Step::Assign,
                                                   Step::Execute, Step::Resolve}));
    EXPECT_STREQ(weft::runtime::step_name(Step::Assign), "assign");
}

// What a capture needs to know: on a GPU, a step that waits for the device is not recordable.
TEST(LaunchSteps, OnAGpuCheckedKernelsAndDebugResolvesAreNotStreamOrdered) {
    Request r(true);
    const weft::Device gpu = weft::Device::cuda(0);  // only its backend: nothing runs
    {
        const KernelLaunch launch(r.on(gpu));
        for (Step s : launch.steps()) EXPECT_TRUE(launch.stream_ordered(s)) << weft::runtime::step_name(s);
    }
    r.options.bounds_check = true;
    {
        const KernelLaunch launch(r.on(gpu));
        EXPECT_FALSE(launch.stream_ordered(Step::Count));
        EXPECT_FALSE(launch.stream_ordered(Step::Execute));
        EXPECT_TRUE(launch.stream_ordered(Step::Prepare));
    }
    r.options.bounds_check = false;
    r.options.deterministic_debug = true;
    {
        const KernelLaunch launch(r.on(gpu));
        EXPECT_FALSE(launch.stream_ordered(Step::Resolve));
        EXPECT_TRUE(launch.stream_ordered(Step::Execute));
    }
}

// Slots on several counter elements are grouped on the device (docs/design/0021): planned on a
// GPU, every step of the launch is stream-ordered, so a capture can record it.
TEST(LaunchSteps, OnAGpuSlotsOnSeveralCounterElementsAreStreamOrdered) {
    Request r(true);
    r.kernel.slots.counters = {weft::plan::SlotTarget{{0, {}}}};
    r.kernel.slots.reservations_per_thread = 1;
    r.kernel.slots.single_counter_element = false;
    r.args[0] = weft::AnyArray(weft::zeros<int>(16, weft::Device::cpu()));  // only its address is planned
    KernelLaunch launch(r.on(weft::Device::cuda(0)));
    launch.run(Step::Plan);
    for (Step s : launch.steps()) EXPECT_TRUE(launch.stream_ordered(s)) << weft::runtime::step_name(s);
}

TEST(LaunchSteps, OnTheCpuEveryStepRunsToItsEnd) {
    Request r(true);
    r.options.bounds_check = true;
    r.options.deterministic_debug = true;
    const KernelLaunch launch(r.on(weft::Device::cpu()));
    for (Step s : launch.steps()) EXPECT_TRUE(launch.stream_ordered(s)) << weft::runtime::step_name(s);
}

}  // namespace
