// A GPU's backend: stream-ordered pooled memory, NVRTC modules, library kernels, CUDA streams.
#pragma once

#include "runtime/backend.hpp"

namespace weft::runtime::cuda {

// The backend of GPU `ordinal` (which is checked only when the GPU is used).
const Backend& cuda_backend(int ordinal);

}  // namespace weft::runtime::cuda
