// Prefix sums over device arrays (the spec's wp.utils.array_scan).
#pragma once

#include "weft/device_array.hpp"

namespace weft {

/// out[i] = in[0] + ... + in[i] (inclusive) or in[0] + ... + in[i-1] (exclusive, out[0] = 0).
/// For int32 and float32 1-D arrays of equal size on one device; `in` and `out` may be the same
/// array. The summation order is fixed (left to right on the CPU; tiles and a fixed tree on a
/// GPU), so results repeat exactly on every run; float results of CPU and GPU may differ in the
/// last bits. A GPU scan is queued on the current stream.
void array_scan(const AnyArray& in, const AnyArray& out, bool inclusive = true);

}  // namespace weft
