// The process-wide defaults that the environment sets (WEFT_BOUNDS_CHECK), apart for tests.
#pragma once

#include "weft/options.hpp"

namespace weft {

/// The defaults with WEFT_BOUNDS_CHECK's value applied: "1" turns bounds_check on, "0" or an
/// unset or empty variable leaves it off; any other value is a weft::Error saying what to set.
Options options_from_environment(const char* bounds_check);

}  // namespace weft
