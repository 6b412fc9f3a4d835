// Autodiff: an adjoint kernel for each kernel that has float array parameters.
#pragma once

#include <string_view>

#include "ir/ir.hpp"
#include "plan/plan.hpp"

namespace weft::transforms {

// Adds, for each kernel with a float array parameter, its adjoint (autodiff/adjoint_kernel.hpp)
// as a kernel of its own named "<kernel>__adjoint", with a plan of its own that the kernel's
// plan points to (KernelPlan::adjoint), so that the later passes lower its gradient
// accumulations like any kernel's atomics: deterministically in RunToRun and GpuToGpu modules.
// A kernel whose backward cannot be generated keeps the reason (KernelPlan::no_adjoint), which
// a backward launch reports; its module still compiles and its forward launches run.
ir::Program generate_adjoints(ir::Program program, plan::ProgramPlan& plan);

inline constexpr std::string_view kAdjointSuffix = "__adjoint";

}  // namespace weft::transforms
