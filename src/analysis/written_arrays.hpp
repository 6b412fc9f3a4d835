// Which array parameters a function writes (stores or atomics), following calls.
#pragma once

#include <vector>

#include "ir/ir.hpp"

namespace weft::analysis {

// result[f][p] is true when function f, or a function it calls, may write through its
// parameter p.
std::vector<std::vector<bool>> written_array_params(const ir::Program& program);

}  // namespace weft::analysis
