// Prefix sums on a GPU for array_scan.
#pragma once

#include <cstdint>

#include "weft/dtype.hpp"

namespace weft::runtime::cuda {

// Scans `n` elements of `dtype` (int32 or float32) from `in` to `out` (which may be equal) on
// the current stream of GPU `ordinal`. The summation order is fixed by the data layout alone
// (tiles of 1024, a tree across threads), so results repeat exactly from run to run.
void scan(int ordinal, DType dtype, const void* in, void* out, int64_t n, bool inclusive);

}  // namespace weft::runtime::cuda
