// Atomic-site analysis: a walk over the call tree with array parameters mapped to their roots.
#include "analysis/atomic_targets.hpp"

#include "ir/facts.hpp"

namespace weft::analysis {

namespace {

class Walker {
public:
    Walker(const ir::Program& p, KernelAtomics& out) : program_(p), out_(out) {}

    // `roots[i]` is the kernel parameter behind the function's parameter i (-1 for scalars).
    void visit(uint32_t function, const std::vector<int>& roots) {
        const ir::Function& fn = *program_.functions[function];
        const ir::Facts facts(fn);
        // A view keeps the root of the array it views.
        auto root = [&](ir::ValueId v) { return facts.param_of(v) >= 0 ? roots[facts.param_of(v)] : -1; };
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            switch (n.kind) {
                case ir::NodeKind::Atomic:
                case ir::NodeKind::Accumulate:
                    out_.atomics.push_back({&n, function, n.atomic_op(), fn.type_of(n.args[0]).dtype,
                                            n.result != ir::kNoValue && facts.used(n.result),
                                            root(n.args[0])});
                    break;
                case ir::NodeKind::Load:
                case ir::NodeKind::Store: out_.accesses.push_back({&n, function, root(n.args[0])}); break;
                case ir::NodeKind::Call: {
                    std::vector<int> callee_roots;
                    for (ir::ValueId a : n.args)
                        callee_roots.push_back(fn.type_of(a).is_array() ? root(a) : -1);
                    visit(static_cast<uint32_t>(n.bits), callee_roots);
                    break;
                }
                default: break;
            }
        });
    }

private:
    const ir::Program& program_;
    KernelAtomics& out_;
};

}  // namespace

KernelAtomics kernel_atomics(const ir::Program& program, uint32_t kernel) {
    KernelAtomics out;
    const ir::Function& fn = *program.functions[kernel];
    std::vector<int> roots;
    for (size_t i = 0; i < fn.params.size(); ++i)
        roots.push_back(fn.type_of(fn.params[i]).is_array() ? static_cast<int>(i) : -1);
    Walker(program, out).visit(kernel, roots);
    return out;
}

ir::AtomicOp reduction_family(ir::AtomicOp op) {
    return op == ir::AtomicOp::Sub ? ir::AtomicOp::Add : op;
}

}  // namespace weft::analysis
