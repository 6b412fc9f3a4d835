// DLPack interchange: Weft arrays to and from DLManagedTensor, without copies (PyTorch, CuPy, JAX).
#pragma once

// Built only where DLPack's header (Debian: libdlpack-dev) was found when Weft was configured;
// the library then defines WEFT_DLPACK for its users.
#if !defined(WEFT_DLPACK)
#error \
    "this Weft was built without DLPack: dlpack/dlpack.h (Debian: libdlpack-dev) was not found when it was configured; install it and configure Weft again"
#endif

#include <dlpack/dlpack.h>

#include <source_location>

#include "weft/device_array.hpp"

namespace weft {

/// A DLPack tensor over `a`'s memory (no copy) that keeps the memory alive until the consumer calls
/// its deleter. Devices map to kDLCPU and kDLCUDA (device_id N for cuda:N); strides are in
/// elements, as DLPack counts them. A composite element (vec3, mat33, ...) becomes one more,
/// innermost dimension of its components. weft::Error, naming the caller's line, for an empty
/// array, or a bool array where DLPack has no bool type (before 0.8).
DLManagedTensor* to_dlpack(const AnyArray& a, std::source_location s = std::source_location::current());

/// An array over a DLPack tensor's memory (no copy). On success Weft owns `tensor` and calls its
/// deleter once the last array or view of it is gone; on a weft::Error (naming the caller's line:
/// a device other than the CPU, CUDA host memory or a CUDA GPU, vector lanes, an element type Weft
/// has not, more than 4 dimensions, negative strides) it is still the caller's. A 0-D tensor
/// becomes a 1-D array of one element. DeviceArray<E>::of(from_dlpack(t)) gives a typed array.
AnyArray from_dlpack(DLManagedTensor* tensor, std::source_location s = std::source_location::current());

}  // namespace weft
