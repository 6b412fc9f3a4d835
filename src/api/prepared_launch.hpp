// A launch whose arguments were checked against its kernel and whose module is compiled: what
// weft::launch issues at once, a RecordedLaunch issues many times, and a CPU graph replays.
#pragma once

#include <memory>
#include <vector>

#include "api/module_state.hpp"
#include "weft/launch.hpp"

namespace weft::runtime {
struct Capture;
}

namespace weft::detail {

// What checking a launch found: its device, thread count, compiled module and kernel plan.
struct CheckedLaunch {
    Device target = Device::cpu();
    int64_t threads = 0;
    std::shared_ptr<const CompiledModule> compiled;
    const plan::KernelPlan* plan = nullptr;
};

// A checked launch that owns its kernel and arguments.
struct PreparedLaunch {
    KernelState kernel;  // a copy: holds the kernel's body and module
    Dim dim;
    std::vector<LaunchArg> args;
    CheckedLaunch checked;
};

// Checks `args` against `kernel` and compiles its module for their device (weft::Error naming
// the kernel and the launch's line on a mismatch).
CheckedLaunch check_launch(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args);
PreparedLaunch prepare_launch(const KernelState& kernel, const Dim& dim, std::vector<LaunchArg> args);
// Checks the arguments of `p` again after one of them was replaced (kind, dtype and dimensions
// are the caller's to check): device, validity and what the compiled kernel requires.
void recheck_launch(PreparedLaunch& p);
// Inside a graph capture on `target`: the graph keeps `compiled` and the arrays of `args` for as
// long as it lives, and the capture is returned where it records operations (the CPU's), for the
// caller to record its launch into instead of running it. Null otherwise.
runtime::Capture* hold_for_capture(Device target, const std::shared_ptr<const CompiledModule>& compiled,
                                   const std::vector<LaunchArg>& args);
// Runs (CPU) or queues (GPU) a checked launch. Inside a graph capture, the graph keeps what the
// launch uses; on the CPU the launch is recorded into the graph instead, and runs at its replays.
void issue(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
           const CheckedLaunch& checked);
inline void issue(const PreparedLaunch& p) {
    issue(p.kernel, p.dim, p.args, p.checked);
}

}  // namespace weft::detail
