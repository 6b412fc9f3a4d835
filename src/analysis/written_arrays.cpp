// Written-array analysis: a fixpoint over the call graph.
#include "analysis/written_arrays.hpp"

#include "ir/facts.hpp"

namespace weft::analysis {

std::vector<std::vector<bool>> written_array_params(const ir::Program& program) {
    std::vector<std::vector<bool>> written;
    for (const auto& fn : program.functions) written.emplace_back(fn->params.size(), false);

    std::vector<ir::Facts> facts;
    for (const auto& fn : program.functions) facts.emplace_back(*fn);

    for (bool changed = true; changed;) {
        changed = false;
        for (size_t f = 0; f < program.functions.size(); ++f) {
            const ir::Function& fn = *program.functions[f];
            auto mark = [&](ir::ValueId array) {
                const int p = facts[f].param_of(array);  // a write to a view writes its array
                if (p >= 0 && !written[f][p]) written[f][p] = changed = true;
            };
            ir::for_each_node(fn.body, [&](const ir::Node& n) {
                if (n.kind == ir::NodeKind::Store || n.kind == ir::NodeKind::Atomic ||
                    n.kind == ir::NodeKind::Accumulate || n.kind == ir::NodeKind::Reserve)
                    mark(n.args[0]);
                if (n.kind == ir::NodeKind::Call)
                    for (size_t a = 0; a < n.args.size(); ++a)
                        if (written[n.bits][a]) mark(n.args[a]);
            });
        }
    }
    return written;
}

}  // namespace weft::analysis
