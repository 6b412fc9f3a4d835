// Looking kernels up in a program's plan.
#include "plan/plan.hpp"

namespace weft::plan {

const KernelPlan* ProgramPlan::find(const std::string& name) const {
    for (const KernelPlan& k : kernels)
        if (k.name == name) return &k;
    return nullptr;
}

const KernelPlan* ProgramPlan::entry(uint32_t function) const {
    for (const KernelPlan& k : kernels)
        if (k.variants.forward == function || k.variants.counting == static_cast<int>(function)) return &k;
    return nullptr;
}

KernelPlan* ProgramPlan::entry(uint32_t function) {
    return const_cast<KernelPlan*>(static_cast<const ProgramPlan&>(*this).entry(function));
}

}  // namespace weft::plan
