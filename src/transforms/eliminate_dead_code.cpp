// Dead-code elimination to a fixpoint, per function.
#include "transforms/eliminate_dead_code.hpp"

#include "ir/facts.hpp"
#include "ir/rewriter.hpp"

namespace weft::transforms {

namespace {

bool is_pure(ir::NodeKind k) {
    using K = ir::NodeKind;
    switch (k) {
        case K::Const:
        case K::Tid:
        case K::Copy:
        case K::Unary:
        case K::Binary:
        case K::Math:
        case K::Select:
        case K::Cast:
        case K::Shape:
        case K::View:
        case K::Load: return true;
        default: return false;
    }
}

}  // namespace

ir::Program eliminate_dead_code(ir::Program program) {
    for (auto& fn : program.functions) {
        for (bool removed = true; removed;) {
            removed = false;
            const ir::Facts facts(*fn);
            ir::rewrite_nodes(*fn, [&](ir::Node&& n, std::vector<ir::Node>& out) {
                if (is_pure(n.kind) && !facts.used(n.result))
                    removed = true;
                else
                    out.push_back(std::move(n));
            });
        }
    }
    return program;
}

}  // namespace weft::transforms
