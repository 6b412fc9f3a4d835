// Weft: C++ kernels for GPUs and CPUs, compiled at run time, with deterministic atomics.
#pragma once

#include "weft/array.hpp"
#include "weft/atomics.hpp"
#include "weft/builtins.hpp"
#include "weft/control.hpp"
#include "weft/device.hpp"
#include "weft/device_array.hpp"
#include "weft/dtype.hpp"
#include "weft/error.hpp"
#include "weft/half.hpp"
#include "weft/launch.hpp"
#include "weft/module.hpp"
#include "weft/options.hpp"
#include "weft/print.hpp"
#include "weft/scalar.hpp"
#include "weft/scan.hpp"
#include "weft/stream.hpp"
