// The float64 exact sums' resolve kernel (66 digit words per slot), as source for the
// deterministic library module.
#pragma once

namespace weft::runtime::det {

// Device source defining det_resolve_sum_f64, launched with kExactF64Threads threads per block;
// it follows the device prelude in the library module's source.
const char* exact_f64_kernels();
constexpr int kExactF64Threads = 64;

}  // namespace weft::runtime::det
