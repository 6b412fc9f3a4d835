// Prefix sums on a GPU for array_scan.
#pragma once

#include <cstdint>

#include "weft/dtype.hpp"

namespace weft::runtime::cuda {

// Scans `n` elements of `dtype` (int32 or float32) from `in` to `out` (which may be equal) on
// the current stream of GPU `ordinal`. The summation order is fixed by the data layout alone
// (tiles of 1024, a tree across threads), so results repeat exactly from run to run.
void scan(int ordinal, DType dtype, const void* in, void* out, int64_t n, bool inclusive);

// One kernel, the same bits as scan() for int32: an exclusive scan of `n` int32 from `in` to `out`
// (which may be equal), and, when `total` is set, the sum of all into *total. `words` holds
// chained_scan_words(n) uint64 that are zero when the kernel starts (the caller zeroes them on the
// stream, usually together with its other per-launch state). Nothing is allocated, so it costs
// one graph node.
int64_t chained_scan_words(int64_t n);
void chained_scan(int ordinal, const int32_t* in, int32_t* out, int64_t n, uint64_t* words, int32_t* total);

}  // namespace weft::runtime::cuda
