// The adjoint rule of each scalar operation (Warp's practice: one rule beside each op).
#pragma once

#include <functional>

#include "autodiff/emitter.hpp"

namespace weft::autodiff {

// What a rule works with: the emitter at the reverse point, the primal value of an operand of
// the node there, and a way to add a contribution to an operand's adjoint.
struct RuleContext {
    Emitter& e;
    std::function<ir::ValueId(ir::ValueId)> primal;     // an operand's value, as replayed
    std::function<void(ir::ValueId, ir::ValueId)> add;  // adj[operand] += contribution
    std::function<bool(ir::ValueId)> wants;             // whether an operand takes an adjoint
};

// Emits the reverse step of scalar node `n` (Copy, Unary, Binary, Math, Select or Cast) of `fn`,
// whose float result has adjoint `g`. Operations with no derivative (integer and bool results,
// comparisons, floor, ceil) add nothing.
void scalar_adjoint(const ir::Function& fn, const ir::Node& n, ir::ValueId g, RuleContext& c);

}  // namespace weft::autodiff
