// Readable text for IR programs (debugging, golden tests, WEFT_DUMP_IR).
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace weft::ir {

// With `locations`, each node is followed by "# file:line" (file without its directory).
std::string print(const Program& program, bool locations = false);
std::string print(const Program& program, const Function& fn, bool locations = false);

}  // namespace weft::ir
