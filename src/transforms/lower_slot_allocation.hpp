// Lowers slot allocation (the spec's Pattern 2): consumed int32 atomic_add becomes Reserve,
// and each such kernel gets a counting pass.
#pragma once

#include <string_view>

#include "ir/ir.hpp"
#include "plan/plan.hpp"
#include "weft/options.hpp"

namespace weft::transforms {

// In RunToRun and GpuToGpu modes, every `slot = atomic_add(counter, i, n)` on an int32 array
// with its result used becomes a Reserve node, and each kernel that reserves gets a counting
// pass (a clone, with the functions it calls, named "<kernel>__count") in which stores,
// deterministic accumulation, other atomics and prints are suppressed. Rejected with
// weft::Error naming kernel, counter and line: consumed atomic_sub/min/max on integers; a
// consumed atomic_add on a counter that is not int32; other atomics, loads or stores on a
// counter; a reservation whose count, index or execution depends on a load of an array the
// kernel writes, or on the result of another atomic (the counting pass performs no writes, and
// turns such an atomic into a load). A reservation that depends on an earlier one's slot is
// allowed but marks the kernel's plan `reservations_may_diverge`: the launch checks it at run
// time and undoes it if the passes differ. `single_counter_element` is set when every
// reservation reaches one element at constant indices, view indices included. The plan gets
// the counting pass as the kernel's counting variant, and its clones as Counting functions.
ir::Program lower_slot_allocation(ir::Program program, Deterministic mode, plan::ProgramPlan& plan);

// What a counting-pass clone's name adds to the name of the function it was made from.
inline constexpr std::string_view kCountingPassSuffix = "__count";

}  // namespace weft::transforms
