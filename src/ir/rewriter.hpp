// Rewriting a function's blocks node by node, with value remapping (the passes' one walker).
#pragma once

#include <vector>

#include "ir/ir.hpp"

namespace weft::ir {

// Subclass and override rewrite(): run() visits every node of a function in program order, a
// node's child blocks before the node itself, and replaces each node by what rewrite() emits
// into `out`: the node (the default), nothing (it is dropped), or other nodes. Before a node is
// visited, its operands are remapped: after replace_uses(a, b), every later operand that names
// `a` names `b` (Assign targets too, so remap only values that are never assigned, or remap an
// assigned value everywhere at once). New values come from new_value().
class Rewriter {
public:
    virtual ~Rewriter() = default;

    // Rewrites `fn` in place.
    void run(Function& fn);

protected:
    virtual void rewrite(Node&& node, std::vector<Node>& out) { out.push_back(std::move(node)); }

    Function& function() { return *fn_; }
    // From now on, operands naming `from` name `to` (which must be defined where they are).
    void replace_uses(ValueId from, ValueId to);
    ValueId remapped(ValueId v) const;
    // A fresh value of type `type` for a node this rewriter emits.
    ValueId new_value(Type type);

private:
    void block(Block& b);

    Function* fn_ = nullptr;
    std::vector<ValueId> remap_;  // per value: what it reads as now (itself unless replaced)
};

// Runs a Rewriter whose rewrite() is `f(std::move(node), out)` over `fn`.
template <class F>
void rewrite_nodes(Function& fn, F&& f) {
    struct Calls final : Rewriter {
        explicit Calls(F& f) : f_(f) {}
        void rewrite(Node&& node, std::vector<Node>& out) override { f_(std::move(node), out); }
        F& f_;
    } calls(f);
    calls.run(fn);
}

}  // namespace weft::ir
