// The deterministic lowering of Pattern 1 (accumulation atomics).
#include "transforms/lower_deterministic_atomics.hpp"

#include <map>

#include "analysis/atomic_targets.hpp"
#include "analysis/record_bounds.hpp"
#include "ir/facts.hpp"
#include "ir/rewriter.hpp"
#include "weft/error.hpp"

namespace weft::transforms {

namespace {

bool accumulation(ir::AtomicOp op, DType dtype) {
    const bool arithmetic = op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub || op == ir::AtomicOp::Min ||
                            op == ir::AtomicOp::Max;
    return arithmetic && is_float(dtype);
}

std::string line_of(const ir::Node& n) {
    return std::to_string(n.loc.line);
}

[[noreturn]] void reject(const ir::Function& kernel, const ir::Node& at, const std::string& message) {
    throw Error(message, kernel.name, at.loc.file, at.loc.line);
}

// Checks kernel `k` and returns its targets.
std::vector<plan::DetTarget> plan_kernel(const ir::Program& program, uint32_t k) {
    const ir::Function& kernel = *program.functions[k];
    const analysis::KernelAtomics found = analysis::kernel_atomics(program, k);
    std::map<int, const analysis::AtomicSite*> first_site;
    std::vector<plan::DetTarget> targets;
    for (const analysis::AtomicSite& a : found.atomics) {
        const std::string target = a.kernel_param >= 0 ? kernel.param_names[a.kernel_param] : "an array";
        const std::string op = std::string("atomic_") + detail::op_name(a.op);
        if (a.result_used && program.functions[a.function]->type_of(a.node->args[0]).components > 1 &&
            is_integer(a.dtype))
            reject(kernel, *a.node,
                   "the result of " + op + " on a component of integer composite array '" + target +
                       "' is used, but a deterministic module orders only slot counters, which are arrays of "
                       "int32 scalars; count in a weft::Array<int>, or leave the result unused");
        if (!accumulation(a.op, a.dtype)) continue;
        if (a.result_used)
            reject(kernel, *a.node,
                   "the result of " + op + " on float array '" + target +
                       "' is used, but in deterministic mode float accumulation is deferred and has no "
                       "ordered result; use the result only with integer counters (slot allocation), or "
                       "compute it another way");
        const auto [it, inserted] = first_site.emplace(a.kernel_param, &a);
        if (inserted) {
            targets.push_back(
                {{static_cast<uint32_t>(a.kernel_param)}, analysis::reduction_family(a.op), a.dtype});
            continue;
        }
        const analysis::AtomicSite& first = *it->second;
        if (analysis::reduction_family(first.op) != analysis::reduction_family(a.op))
            reject(kernel, *a.node,
                   "array '" + target + "' gets " + op + " here and atomic_" + detail::op_name(first.op) +
                       " at line " + line_of(*first.node) +
                       "; a deterministic target takes one reduction family per kernel: write the two to "
                       "separate arrays or split the kernel");
    }
    for (const analysis::ArrayAccess& access : found.accesses) {
        const auto it = first_site.find(access.kernel_param);
        if (it == first_site.end() || access.kernel_param < 0) continue;
        const std::string target = kernel.param_names[access.kernel_param];
        reject(kernel, *access.node,
               std::string("array '") + target + "' is " +
                   (access.node->kind == ir::NodeKind::Store ? "stored to" : "loaded from") +
                   " here but also accumulated into deterministically (line " + line_of(*it->second->node) +
                   "); deterministic accumulation is applied after the kernel, so this access would see or "
                   "be overwritten by the wrong value. Accumulate into a separate array, or split the kernel "
                   "in two");
    }
    return targets;
}

// Float accumulation atomics whose result is unused become Accumulate nodes.
void to_accumulate(ir::Function& fn) {
    const ir::Facts facts(fn);
    ir::rewrite_nodes(fn, [&](ir::Node&& n, std::vector<ir::Node>& out) {
        if (n.kind == ir::NodeKind::Atomic && accumulation(n.atomic_op(), fn.type_of(n.args[0]).dtype) &&
            !facts.used(n.result)) {
            n.kind = ir::NodeKind::Accumulate;
            n.result = ir::kNoValue;
        }
        out.push_back(std::move(n));
    });
}

}  // namespace

ir::Program lower_deterministic_atomics(ir::Program program, Deterministic mode, plan::ProgramPlan& plan) {
    if (mode == Deterministic::NotGuaranteed) return program;
    for (plan::KernelPlan& k : plan.kernels) k.det_targets = plan_kernel(program, k.variants.forward);
    for (auto& fn : program.functions) to_accumulate(*fn);
    for (plan::KernelPlan& k : plan.kernels) {
        const auto bounds = analysis::record_bounds(program, k.variants.forward);
        for (plan::DetTarget& t : k.det_targets) {
            const auto it = bounds.find(static_cast<int>(t.arg.param));
            if (it == bounds.end()) continue;
            t.records_per_thread = it->second.per_thread;
            t.dynamic = it->second.dynamic;
        }
    }
    return program;
}

}  // namespace weft::transforms
