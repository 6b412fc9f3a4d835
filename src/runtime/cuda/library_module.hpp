// Weft's own GPU kernels (src/device/kernels): compiled once per device with NVRTC.
#pragma once

#include <string>

#include "runtime/cuda/device_sources.hpp"
#include "runtime/cuda/driver.hpp"

namespace weft::runtime::cuda {

// The kernel `name` of library module `module`, compiled for GPU `ordinal` through the disk cache
// and loaded once per process.
CUfunction library_function(int ordinal, LibraryModule module, const std::string& name);

// Queues that kernel on GPU `ordinal`'s current stream, `blocks` blocks of `threads`, and notes it
// there as `what` for the report of an asynchronous failure.
void launch_library_kernel(int ordinal, LibraryModule module, const char* name, unsigned blocks,
                           unsigned threads, void** params, const std::string& what);

}  // namespace weft::runtime::cuda
