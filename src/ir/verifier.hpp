// Checks the IR's structural invariants; run between lowering passes in debug builds.
#pragma once

#include "ir/ir.hpp"

namespace weft::ir {

// Throws weft::InternalError naming the pass, the function and the problem.
void verify(const Program& program, const char* after_pass);

}  // namespace weft::ir
