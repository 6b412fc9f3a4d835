// The plan of a program before and after the lowering passes fill in their parts.
#pragma once

#include "ir/ir.hpp"
#include "plan/plan.hpp"

namespace weft::transforms {

// One FunctionPlan per function (all forward) and one KernelPlan per kernel: its name, its
// forward variant and tid()'s dimensionality. The lowering passes add their decisions.
plan::ProgramPlan initial_plan(const ir::Program& program);

// Fills each kernel's facts about the lowered program: the parameters it may write and the
// extents it reads with shape(), worked out once here rather than at launches.
void complete_plan(const ir::Program& lowered, plan::ProgramPlan& plan);

}  // namespace weft::transforms
