// IR to C++ source: one emitter; the dialect decides only the kernels' entry points.
#pragma once

#include "codegen/generated.hpp"
#include "ir/ir.hpp"
#include "plan/plan.hpp"

namespace weft::codegen {

struct EmitOptions {
    Dialect dialect = Dialect::Cpu;
    bool bounds_check = false;
};

// `plan` is lowering's plan of `program`: which functions are counting passes, and each
// kernel's deterministic targets and slot counters.
Generated emit(const ir::Program& program, const plan::ProgramPlan& plan, const EmitOptions& options);

}  // namespace weft::codegen
