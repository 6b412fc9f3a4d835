// Prefix sums over device arrays (the spec's wp.utils.array_scan).
#pragma once

#include "weft/device_array.hpp"

namespace weft {

// out[i] = in[0] + ... + in[i] (inclusive) or in[0] + ... + in[i-1] (exclusive, out[0] = 0).
// For int32 and float32 1-D arrays of equal size on one device; `in` and `out` may be the same
// array. Float sums are accumulated left to right in the element type, so the result is the
// same on every run.
void array_scan(const AnyArray& in, const AnyArray& out, bool inclusive = true);

}  // namespace weft
