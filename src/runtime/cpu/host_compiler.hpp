// The host C++ compiler that builds CPU modules into shared objects.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "weft/options.hpp"

namespace weft::runtime::cpu {

// WEFT_CXX if set, else the compiler Weft itself was built with, else "c++".
const std::string& host_compiler();
// The compiler's --version output, read once per process; part of every cache key.
const std::string& host_compiler_identity();
// The flags a module with `options` is compiled with.
std::vector<std::string> compile_flags(const Options& options);
// Compiles `source` to the shared object `output`; throws weft::Error with the compiler's
// output when it fails (which means a bug in Weft's code generator).
void compile_shared_object(const std::filesystem::path& source, const std::filesystem::path& output,
                           const std::vector<std::string>& flags);

}  // namespace weft::runtime::cpu
