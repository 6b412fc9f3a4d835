// An adjoint launch checked and ready to run: the tape checks every launch before it runs any.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/module_state.hpp"
#include "plan/plan.hpp"
#include "weft/launch.hpp"

namespace weft::detail {

class PreparedAdjoint {
public:
    // Checks the launch (arguments, gradients, whether the kernel has a backward) and compiles
    // the module with its adjoints; throws weft::Error as weft::launch_adjoint documents.
    PreparedAdjoint(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                    const std::vector<AnyArray>& grads);
    // Launches the adjoint (nothing when the kernel has no float arrays); inside a graph capture,
    // the graph's replays launch it.
    void run();

private:
    void launch() const;
    void add_checkpoints();

    // Checkpoints per level of a loop's sweep, at most (about 3n replays of an n-iteration loop
    // up to n = 4096^2, 16.7 million).
    static constexpr int64_t kMaxCheckpoints = 4096;

    KernelState kernel_;
    Dim dim_;
    int64_t threads_ = 0;
    Device target_ = Device::cpu();
    std::shared_ptr<const CompiledModule> compiled_;
    bool runs_ = false;
    plan::KernelPlan plan_;  // the adjoint's, less the targets of missing gradients
    std::vector<LaunchArg> args_;
    std::vector<std::string> names_;
};

}  // namespace weft::detail
