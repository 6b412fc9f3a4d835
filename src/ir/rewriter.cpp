// The block rewriter: a rebuild of each block, operands remapped as nodes go by.
#include "ir/rewriter.hpp"

namespace weft::ir {

void Rewriter::run(Function& fn) {
    fn_ = &fn;
    remap_.resize(fn.values.size());
    for (ValueId v = 0; v < remap_.size(); ++v) remap_[v] = v;
    block(fn.body);
    fn_ = nullptr;
}

void Rewriter::replace_uses(ValueId from, ValueId to) {
    remap_[from] = remapped(to);
}

ValueId Rewriter::remapped(ValueId v) const {
    return v < remap_.size() ? remap_[v] : v;
}

ValueId Rewriter::new_value(Type type) {
    fn_->values.push_back({type, false});
    remap_.push_back(static_cast<ValueId>(fn_->values.size() - 1));
    return remap_.back();
}

void Rewriter::block(Block& b) {
    std::vector<Node> out;
    out.reserve(b.nodes.size());
    for (Node& n : b.nodes) {
        for (ValueId& a : n.args) a = remapped(a);
        for (Block& child : n.blocks) block(child);
        // A while's condition is defined in its child block, which may have replaced it.
        for (ValueId& a : n.args) a = remapped(a);
        rewrite(std::move(n), out);
    }
    b.nodes = std::move(out);
}

}  // namespace weft::ir
