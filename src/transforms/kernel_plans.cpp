// Starting and completing the plan of a program.
#include "transforms/kernel_plans.hpp"

#include "analysis/shape_reads.hpp"
#include "analysis/written_arrays.hpp"

namespace weft::transforms {

plan::ProgramPlan initial_plan(const ir::Program& program) {
    plan::ProgramPlan plan;
    plan.module_name = program.module_name;
    for (uint32_t f = 0; f < program.functions.size(); ++f) {
        const ir::Function& fn = *program.functions[f];
        plan.functions.push_back({fn.name, plan::Variant::Forward});
        if (!fn.is_kernel) continue;
        plan::KernelPlan k;
        k.name = fn.name;
        k.variants.forward = f;
        k.tid_ndim = fn.tid_ndim;
        plan.kernels.push_back(std::move(k));
    }
    return plan;
}

void complete_plan(const ir::Program& lowered, plan::ProgramPlan& plan) {
    const std::vector<std::vector<bool>> written = analysis::written_array_params(lowered);
    const std::vector<std::vector<uint8_t>> shapes = analysis::shape_reads(lowered);
    for (plan::KernelPlan& k : plan.kernels) {
        k.writes = written[k.variants.forward];
        k.shape_reads = shapes[k.variants.forward];
    }
}

}  // namespace weft::transforms
