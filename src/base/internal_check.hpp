// Internal assertions: a failed one is a Weft bug, raised as weft::InternalError naming the pass.
#pragma once

#include <string>

#include "weft/error.hpp"

// Checks `condition`; when it fails, throws weft::InternalError for pass `pass` with `message`
// (evaluated only then). Kept in release builds: a pass that breaks an invariant must stop
// before it generates wrong code.
#define WEFT_INTERNAL_CHECK(condition, pass, message)                                               \
    do {                                                                                            \
        if (!(condition))                                                                           \
            throw ::weft::InternalError((pass), std::string(message) + " (check: " #condition ")"); \
    } while (0)
