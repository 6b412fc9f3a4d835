// Prefix sums on a GPU for array_scan.
#pragma once

#include <cstdint>

#include "weft/dtype.hpp"

namespace weft::runtime::cuda {

// Scans `n` elements of `dtype` (int32 or float32) from `in` to `out` (which may be equal) on
// the current stream of GPU `ordinal`. The summation order is fixed by the data layout alone
// (tiles of 1024, a tree across threads), so results repeat exactly from run to run.
void scan(int ordinal, DType dtype, const void* in, void* out, int64_t n, bool inclusive);

// The same bits as scan() for int32, with no allocation: an exclusive scan of `n` int32 from `in`
// to `out` (which may be equal), and, when `total` is set, the sum of all into *total (then `in`
// and `out` must be distinct). Up to 2^19 items it is one kernel whose tiles chain their prefixes
// by decoupled look-back (one graph node); beyond, the three-phase scan and a kernel for the
// total. `words` holds chained_scan_words(n) uint64 that are zero when the scan starts (the
// caller zeroes them on the stream, usually together with its other per-launch state).
int64_t chained_scan_words(int64_t n);
void scan_counts(int ordinal, const int32_t* in, int32_t* out, int64_t n, uint64_t* words, int32_t* total);

}  // namespace weft::runtime::cuda
