// The copy of a kernel that the adjoint generator works on: calls inlined, exits made flags.
#pragma once

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
// The copy has the kernel's parameters (same order and types) and no Break, Continue, Return or
// Call nodes. Values that are mutable registers are marked `assigned` where they are defined.
ir::Function structured_copy(const ir::Program& program, uint32_t k);

// Whether the adjoint of `n` of `fn` (or the control decision `n` makes) reads operand `i`'s value.
bool needs_primal(const ir::Function& fn, const ir::Node& n, size_t i);

}  // namespace weft::autodiff
