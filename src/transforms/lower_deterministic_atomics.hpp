// Rewrites floating-point accumulation atomics into deterministic Accumulate nodes.
#pragma once

#include "ir/ir.hpp"
#include "plan/plan.hpp"
#include "weft/options.hpp"

namespace weft::transforms {

// In RunToRun and GpuToGpu modes, every float atomic_add/sub/min/max whose result is unused
// becomes an Accumulate node, and each kernel's plan lists its targets (KernelPlan::det_targets).
// Integer atomics, cas and exch stay as they are. Rejected with weft::Error (naming kernel,
// target and line): a consumed result of a float accumulation atomic; two reduction families
// on one target; a kernel that also loads or stores an array it accumulates into.
ir::Program lower_deterministic_atomics(ir::Program program, Deterministic mode, plan::ProgramPlan& plan);

}  // namespace weft::transforms
