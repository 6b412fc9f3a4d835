// Dead-code elimination to a fixpoint, per function.
#include "transforms/eliminate_dead_code.hpp"

#include <algorithm>

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

void count_uses(const ir::Block& b, std::vector<int>& uses) {
    ir::for_each_node(b, [&](const ir::Node& n) {
        for (ir::ValueId a : n.args) ++uses[a];
    });
}

bool sweep(ir::Block& b, const std::vector<int>& uses) {
    const auto dead = [&](const ir::Node& n) { return is_pure(n.kind) && uses[n.result] == 0; };
    bool removed = std::any_of(b.nodes.begin(), b.nodes.end(), dead);
    std::erase_if(b.nodes, dead);
    for (ir::Node& n : b.nodes)
        for (ir::Block& child : n.blocks) removed |= sweep(child, uses);
    return removed;
}

}  // namespace

ir::Program eliminate_dead_code(ir::Program program) {
    for (auto& fn : program.functions) {
        for (bool removed = true; removed;) {
            std::vector<int> uses(fn->values.size(), 0);
            count_uses(fn->body, uses);
            removed = sweep(fn->body, uses);
        }
    }
    return program;
}

}  // namespace weft::transforms
