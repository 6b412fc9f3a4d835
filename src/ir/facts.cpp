// The facts table: one walk over a function's blocks.
#include "ir/facts.hpp"

namespace weft::ir {

Facts::Facts(const Function& fn)
    : fn_(fn),
      definition_(fn.values.size(), nullptr),
      uses_(fn.values.size(), 0),
      root_(fn.values.size(), kNoValue),
      param_index_(fn.values.size(), -1),
      assignments_(fn.values.size()),
      in_loop_(fn.values.size(), false),
      defined_in_loop_(fn.values.size(), false) {
    for (size_t i = 0; i < fn.params.size(); ++i) {
        param_index_[fn.params[i]] = static_cast<int>(i);
        if (fn.type_of(fn.params[i]).is_array()) root_[fn.params[i]] = fn.params[i];
    }
    walk(fn.body, 0);
}

void Facts::walk(const Block& b, int loop_depth) {
    for (const Node& n : b.nodes) {
        for (ValueId a : n.args) ++uses_[a];
        if (n.result != kNoValue) {
            definition_[n.result] = &n;
            defined_in_loop_[n.result] = loop_depth > 0;
        }
        // A view is defined after the array it views, so program order sees the root first.
        if (n.kind == NodeKind::View) root_[n.result] = root_[n.args[0]];
        if (n.kind == NodeKind::Assign) {
            assignments_[n.args[0]].push_back(&n);
            if (loop_depth > 0) in_loop_[n.args[0]] = true;
        }
        const bool loop = n.kind == NodeKind::For || n.kind == NodeKind::While;
        for (const Block& child : n.blocks) walk(child, loop_depth + (loop ? 1 : 0));
    }
}

const Node* Facts::constant(ValueId v) const {
    const Node* d = definition_[v];
    return d && d->kind == NodeKind::Const && !fn_.values[v].assigned ? d : nullptr;
}

std::optional<int64_t> Facts::integer(ValueId v) const {
    const Node* c = constant(v);
    if (!c || !fn_.type_of(v).is_integer()) return std::nullopt;
    switch (fn_.type_of(v).dtype) {
        case DType::Int32: return static_cast<int32_t>(c->bits);
        case DType::UInt32: return static_cast<uint32_t>(c->bits);
        default: return static_cast<int64_t>(c->bits);
    }
}

int Facts::param_of(ValueId v) const {
    return root_[v] == kNoValue ? -1 : param_index_[root_[v]];
}

}  // namespace weft::ir
