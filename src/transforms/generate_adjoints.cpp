// Autodiff as a pass: each kernel's adjoint becomes a kernel, with a plan, of the program.
#include "transforms/generate_adjoints.hpp"

#include <memory>

#include "analysis/written_arrays.hpp"
#include "autodiff/adjoint_kernel.hpp"
#include "weft/error.hpp"

namespace weft::transforms {

ir::Program generate_adjoints(ir::Program program, plan::ProgramPlan& plan) {
    const std::vector<std::vector<bool>> writes = analysis::written_array_params(program);
    const size_t kernels = plan.kernels.size();
    for (size_t k = 0; k < kernels; ++k) {
        const uint32_t f = plan.kernels[k].variants.forward;
        const ir::Function& fn = *program.functions[f];
        bool has_float_array = false;
        for (ir::ValueId p : fn.params)
            has_float_array = has_float_array || (fn.type_of(p).is_array() && is_float(fn.type_of(p).dtype));
        if (!has_float_array) continue;
        try {
            autodiff::AdjointKernel adjoint =
                autodiff::adjoint_kernel(program, f, writes[f], fn.name + std::string(kAdjointSuffix));
            const auto index = static_cast<uint32_t>(program.functions.size());
            plan::KernelPlan a;
            a.name = adjoint.function.name;
            a.variants.forward = index;
            a.tid_ndim = adjoint.function.tid_ndim;
            a.is_adjoint = true;
            a.checkpoint_floats = adjoint.checkpoint_floats;
            a.checkpoint_ints = adjoint.checkpoint_ints;
            plan.functions.push_back({fn.name, plan::Variant::Adjoint});
            program.functions.push_back(std::make_unique<ir::Function>(std::move(adjoint.function)));
            plan.kernels.push_back(std::move(a));
            plan.kernels[k].adjoint = static_cast<int>(plan.kernels.size() - 1);
            plan.kernels[k].differentiable = std::move(adjoint.differentiable);
        } catch (const Error& e) {
            plan.kernels[k].no_adjoint = {e.message(), e.file(), e.line()};
        }
    }
    return program;
}

}  // namespace weft::transforms
