// What the runtime compiles before each of Weft's own kernel sources (src/runtime/cuda/
// device_sources.cpp): the whole prelude, then the library ABI; included by a source so that it
// also compiles on its own (tools/check-device-sources.sh). The embedding drops these includes.
#pragma once

// In the prelude's order (CMakeLists.txt), which the headers rely on: not sorted.
// clang-format off
#include "device/abi.h"
#include "device/prelude.h"
#include "device/half.h"
#include "device/deterministic.h"
#include "device/resolve.h"
#include "device/grid.h"
#include "device/slots.h"
#include "device/fused_slots.h"
#include "device/library_abi.h"
// clang-format on
