// The host C++ compiler that builds CPU modules into shared objects.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "weft/options.hpp"

namespace weft::runtime::cpu {

// A compiler executable as found and probed; `key` goes into every cache key.
struct HostCompiler {
    std::string name;     // as given: WEFT_CXX, else the compiler that built Weft, else "c++"
    std::string path;     // the absolute path it was found at (through PATH), which is what runs
    std::string version;  // its --version output
    std::string machine;  // its -dumpmachine output: the target triple
    std::string key;      // a hash of the above and of the file that runs: device, inode, size, time
};

// The compiler CPU modules are built with now: WEFT_CXX is read at each call; each executable
// is probed once per process. Throws weft::Error when it cannot be found or run.
const HostCompiler& host_compiler();
// The flags `compiler` compiles a module with `options` with.
std::vector<std::string> compile_flags(const HostCompiler& compiler, const Options& options);
// Compiles `source` to the shared object `output` for module `module`. Throws weft::Error that
// says why: the compiler was killed, could not write its files, wrote no output, or (when none
// of those) failed on the generated code, which is a bug in Weft.
void compile_shared_object(const HostCompiler& compiler, const std::filesystem::path& source,
                           const std::filesystem::path& output, const std::vector<std::string>& flags,
                           const std::string& module);

}  // namespace weft::runtime::cpu
