// Linking a relocatable cubin with the CUDA device runtime (libcudadevrt.a) by nvJitLink, for
// library kernels that call device runtime functions (cudaGraphSetConditional).
#pragma once

#include <string>

namespace weft::runtime::cuda {

// The cubin for sm_<arch> of `relocatable` (compiled by NVRTC with -rdc=true) linked with the
// toolkit's device runtime. Throws weft::Error naming what is missing (nvJitLink, the library).
std::string link_with_device_runtime(const std::string& relocatable, int arch);

}  // namespace weft::runtime::cuda
