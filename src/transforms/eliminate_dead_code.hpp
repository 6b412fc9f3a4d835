// Removes pure operations whose results nothing uses.
#pragma once

#include "ir/ir.hpp"

namespace weft::transforms {

// Loads are pure, so the load that `a[i] = v` traces (an element is read when it is named)
// disappears here, as do copies and constants that nothing reads.
ir::Program eliminate_dead_code(ir::Program program);

}  // namespace weft::transforms
