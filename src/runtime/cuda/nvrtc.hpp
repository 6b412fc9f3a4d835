// NVRTC, loaded with dlopen at first use: compiles generated CUDA C++ to a cubin.
#pragma once

#include <string>
#include <vector>

namespace weft::runtime::cuda {

// "major.minor" of the loaded NVRTC; throws weft::Error when NVRTC cannot be loaded.
const std::string& nvrtc_version();
// The options NVRTC gets for sm_<arch> (e.g. 90): the architecture and language level, then `extra`.
std::vector<std::string> nvrtc_options(int arch, const std::vector<std::string>& extra);
// Compiles `source` for sm_<arch> (e.g. 90) with `options`; returns the cubin. Throws
// weft::Error with NVRTC's log when compilation fails (a bug in Weft's code generator).
std::string compile_cubin(const std::string& source, const std::string& name, int arch,
                          const std::vector<std::string>& options);

}  // namespace weft::runtime::cuda
