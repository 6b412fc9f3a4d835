// Starting and completing the plan of a program.
#include "transforms/kernel_plans.hpp"

#include "analysis/atomic_targets.hpp"
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
        k.atomics.assign(k.writes.size(), false);
        bool untracked = false;  // an atomic on an array not traced to a parameter: count every one
        for (const analysis::AtomicSite& a : analysis::kernel_atomics(lowered, k.variants.forward).atomics) {
            if (a.node->kind != ir::NodeKind::Atomic) continue;
            if (a.kernel_param >= 0)
                k.atomics[a.kernel_param] = true;
            else
                untracked = true;
        }
        const ir::Function& fn = *lowered.functions[k.variants.forward];
        for (size_t i = 0; untracked && i < fn.params.size(); ++i)
            if (fn.type_of(fn.params[i]).is_array()) k.atomics[i] = true;
    }
}

}  // namespace weft::transforms
