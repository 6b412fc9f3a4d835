// The lowering pipeline: traced IR in, IR ready for code generation out.
#pragma once

#include "ir/ir.hpp"
#include "plan/plan.hpp"
#include "weft/options.hpp"

namespace weft::transforms {

// A lowered program, ready for code generation, and its plan: one KernelPlan per kernel.
struct Lowered {
    ir::Program program;
    plan::ProgramPlan plan;
};

// Runs every pass in order. The IR is verified before the first pass and after each one in
// debug builds (or with WEFT_VERIFY_IR=1); WEFT_DUMP_IR=1 prints it to stderr after tracing and
// after each pass that changed it; WEFT_TIME_PASSES=1 prints how long each pass took.
// With `adjoints` (and the module's enable_backward), each kernel also gets its adjoint kernel.
Lowered lower(ir::Program program, const Options& options, bool adjoints = false);

}  // namespace weft::transforms
