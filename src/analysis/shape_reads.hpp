// Which extents of its array parameters a function reads with shape(), following views and calls.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"

namespace weft::analysis {

// result[f][p] has bit d set when function f, or a function it calls, reads the extent of
// dimension d of its parameter p (through a view of p, the view's dimension k is p's k + depth).
std::vector<std::vector<uint8_t>> shape_reads(const ir::Program& program);

}  // namespace weft::analysis
