// A launch's list of steps, and which of them a graph capture could record as they run (only
// stream-ordered work); see docs/design/0017.
#include "runtime/launch_steps.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/generated.hpp"
#include "runtime/det/accumulation.hpp"
#include "runtime/det/slots.hpp"
#include "runtime/device_module.hpp"
#include "runtime/graph_capture.hpp"
#include "weft/error.hpp"

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

// A GPU's backend whose stream is or is not being captured, as the test says, and which counts
// how often a launch asks (on a GPU the question is a driver call). Nothing else is used.
class CaptureBackend final : public weft::runtime::Backend {
public:
    explicit CaptureBackend(bool capturing) : capturing_(capturing) {}
    mutable int asked = 0;

    bool capturing() const override {
        ++asked;
        return capturing_;
    }
    bool finds_failures_at_launch() const override { return false; }
    bool has_serial_launches() const override { return false; }
    bool runs_serial(int64_t, const weft::Options&) const override { return false; }

    [[noreturn]] static void unused() { throw std::logic_error("CaptureBackend: not used by the plan step"); }
    void allocate(weft::detail::Allocation&) const override { unused(); }
    void release(weft::detail::Allocation&) const noexcept override {}
    void zero(void*, size_t) const override { unused(); }
    void set_element(void*, uint64_t, size_t) const override { unused(); }
    void copy_from_host(void*, const void*, size_t) const override { unused(); }
    void copy_to_host(void*, const void*, size_t) const override { unused(); }
    void copy_within(void*, const void*, size_t) const override { unused(); }
    bool host_addressable() const override { return false; }
    weft::codegen::Dialect dialect() const override { return weft::codegen::Dialect::Cuda; }
    std::shared_ptr<weft::runtime::DeviceModule> load_module(weft::codegen::Generated,
                                                             const weft::plan::ProgramPlan&,
                                                             const weft::Options&) const override {
        unused();
    }
    std::unique_ptr<weft::runtime::det::Accumulation> accumulation(
        std::vector<weft::runtime::det::TargetPlan>, const weft::runtime::det::LaunchSite&) const override {
        unused();
    }
    std::unique_ptr<weft::runtime::det::SlotAllocation> slot_allocation(
        weft::runtime::det::SlotPlan, const weft::runtime::det::LaunchSite&) const override {
        unused();
    }
    void scan(weft::DType, const void*, void*, int64_t, bool) const override { unused(); }
    void synchronize() const override { unused(); }
    std::shared_ptr<weft::detail::StreamHandle> create_stream() const override { unused(); }
    std::shared_ptr<weft::detail::StreamHandle> current_stream() const override { unused(); }
    std::shared_ptr<weft::detail::EventHandle> create_event() const override { unused(); }
    weft::DeviceInfo info() const override { unused(); }
    std::unique_ptr<weft::runtime::CaptureRecorder> begin_capture(weft::runtime::Capture&) const override {
        unused();
    }

private:
    bool capturing_;
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

// Whether a launch is captured changes only what a checked launch does, so a plain launch does
// not ask (the empty-kernel launch's host time); a checked one asks once and acts on the answer.
TEST(LaunchSteps, OnlyACheckedLaunchAsksWhetherItIsCaptured) {
    Request r(false);
    // How often the plan step and the capture check ask, capturing or not.
    const auto asked = [&](bool capturing) {
        CaptureBackend backend(capturing);
        weft::runtime::LaunchRequest request = r.on(weft::Device::cuda(0));
        request.backend = &backend;
        KernelLaunch launch(request);
        launch.run(Step::Plan);
        EXPECT_NO_THROW(launch.check_capturable());
        return backend.asked;
    };
    for (const bool capturing : {false, true})
        EXPECT_EQ(asked(capturing), 0) << "a plain launch, capturing " << capturing;
    r.options.bounds_check = true;  // captured, the kernel is checked at replay: capturable
    for (const bool capturing : {false, true})
        EXPECT_EQ(asked(capturing), 1) << "a bounds-checked launch, capturing " << capturing;
}

TEST(LaunchSteps, ACapturedLaunchWithADebugResolveIsRefusedNamingTheStep) {
    Request r(true);
    r.options.deterministic_debug = true;
    for (const bool capturing : {false, true}) {
        CaptureBackend backend(capturing);
        weft::runtime::LaunchRequest request = r.on(weft::Device::cuda(0));
        request.backend = &backend;
        KernelLaunch launch(request);
        if (!capturing) {
            EXPECT_NO_THROW(launch.check_capturable());
            continue;
        }
        try {
            launch.check_capturable();
            ADD_FAILURE() << "a captured launch with a debug resolve was not refused";
        } catch (const weft::Error& e) {
            EXPECT_NE(e.message().find("its resolve step runs with the option deterministic_debug"),
                      std::string::npos)
                << e.message();
            EXPECT_EQ(e.kernel(), "k");
        }
    }
}

TEST(LaunchSteps, OnTheCpuEveryStepRunsToItsEnd) {
    Request r(true);
    r.options.bounds_check = true;
    r.options.deterministic_debug = true;
    const KernelLaunch launch(r.on(weft::Device::cpu()));
    for (Step s : launch.steps()) EXPECT_TRUE(launch.stream_ordered(s)) << weft::runtime::step_name(s);
}

}  // namespace
