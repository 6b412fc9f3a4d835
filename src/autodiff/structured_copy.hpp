// The copy of a kernel that the adjoint generator works on: calls inlined, exits made flags.
#pragma once

#include <vector>

#include "ir/ir.hpp"

namespace weft::autodiff {

// Returns a copy of kernel `k` of `program` in which
// - every call of a weft function is inlined (its scalar parameters become local copies, its
//   arrays the caller's arrays, its returned value a register);
// - break_, continue_ and return_ set flag registers instead, and the code they skip is guarded
//   by a test of those flags (a loop whose body broke runs its remaining iterations empty; a
//   while_ stops at its next test);
// - every operand whose value an adjoint rule or a control decision needs (needs_primal) and that
//   is a mutable register is read through a Copy made just before the node, so the reverse sweep
//   never reads a register's later value.
// - a call of a function with a custom replay is inlined with the replay's body, and a call of a
//   function with a custom adjoint is followed by a marker: a Call node with sub
//   kCustomAdjointCall naming the custom adjoint, whose operands are the call's arguments and
//   then (if it returns one, and `text` is then "result") its result; the reverse sweep expands it.
//   The inlined body of such a function sits in an If (sub kReplayOnly) on `true`, which the
//   reverse sweep leaves out.
// The copy has the kernel's parameters (same order and types) and no Break, Continue or Return
// nodes, and no Call nodes but markers. Values that are mutable registers are marked `assigned`
// where they are defined. Throws weft::Error naming the kernel and the user's line for what has
// no correct backward: a consumed atomic result (slot allocation; in a custom adjoint too), float
// atomics other than add and sub, a load of an array the kernel writes (`writes`, per parameter)
// outside a custom replay, and a store to a gradient in a custom adjoint.
ir::Function structured_copy(const ir::Program& program, uint32_t k, const std::vector<bool>& writes);

inline constexpr uint8_t kCustomAdjointCall = 1;
inline constexpr uint8_t kReplayOnly = 1;

// Copies function `callee` of `program` into `out` of `fn`, inlined (calls in it too, without the
// checks above, custom derivatives left aside), its parameters bound to `args`; the registers it
// needs are declared in `decls`. Returns its result (kNoValue when it returns nothing).
ir::ValueId inline_function(const ir::Program& program, uint32_t callee, const std::vector<ir::ValueId>& args,
                            ir::Function& fn, std::vector<ir::Node>& out, std::vector<ir::Node>& decls);

// Whether the adjoint of `n` of `fn` (or the control decision `n` makes) reads operand `i`'s value.
bool needs_primal(const ir::Function& fn, const ir::Node& n, size_t i);

}  // namespace weft::autodiff
