// The run-time checks of a launch's arguments, shared by weft::launch and adjoint launches.
#pragma once

#include <vector>

#include "api/module_state.hpp"
#include "weft/launch.hpp"

namespace weft::detail {

// weft::Error naming the argument when an array of `args` is memory its owner replaced
// (detail::retire: a weft::HashGrid's arrays, held by a view taken before the grid's last build).
void refuse_retired(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args);

// The launch's thread count, after checking its dimensions.
int64_t checked_threads(const KernelState& kernel, const Dim& dim);
// The device the launch runs on (its arrays', else the default), after checking each argument
// against its parameter.
Device checked_device(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args);
// What the compiled kernel requires of the launch: tid()'s dimensionality, and extents that
// shape() reads fitting an int32.
void check_against_plan(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                        const plan::KernelPlan& plan);

}  // namespace weft::detail
