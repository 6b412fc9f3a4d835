// NVRTC entry points and compilation.
#include "runtime/cuda/nvrtc.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace {

using nvrtcProgram = struct _nvrtcProgram*;
using nvrtcResult = int;

#define WEFT_NVRTC_FUNCTIONS(X)                                                             \
    X(nvrtcVersion, int*, int*)                                                             \
    X(nvrtcCreateProgram, nvrtcProgram*, const char*, const char*, int, const char* const*, \
      const char* const*)                                                                   \
    X(nvrtcCompileProgram, nvrtcProgram, int, const char* const*)                           \
    X(nvrtcGetProgramLogSize, nvrtcProgram, size_t*)                                        \
    X(nvrtcGetProgramLog, nvrtcProgram, char*)                                              \
    X(nvrtcGetCUBINSize, nvrtcProgram, size_t*)                                             \
    X(nvrtcGetCUBIN, nvrtcProgram, char*)                                                   \
    X(nvrtcDestroyProgram, nvrtcProgram*)

struct Nvrtc {
#define WEFT_NVRTC_FIELD(name, ...) nvrtcResult (*name)(__VA_ARGS__) = nullptr;
    WEFT_NVRTC_FUNCTIONS(WEFT_NVRTC_FIELD)
#undef WEFT_NVRTC_FIELD
    std::string version;
    std::string error;
};

void* open_library() {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("WEFT_NVRTC"); env && *env) candidates.push_back(env);
    candidates.insert(candidates.end(), {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"});
    for (const char* home : {static_cast<const char*>(std::getenv("CUDA_HOME")),
                             static_cast<const char*>(std::getenv("CUDA_PATH")), "/usr/local/cuda"})
        if (home && *home) {
            candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
            candidates.push_back(std::string(home) + "/lib/libnvrtc.so");
        }
    for (const auto& c : candidates)
        if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    return nullptr;
}

const Nvrtc& nvrtc() {
    static const Nvrtc n = [] {
        Nvrtc n;
        void* lib = open_library();
        if (!lib) {
            n.error =
                "NVRTC (libnvrtc.so) could not be loaded; install the CUDA toolkit's NVRTC or set WEFT_NVRTC";
            return n;
        }
#define WEFT_NVRTC_RESOLVE(fn, ...)                           \
    n.fn = reinterpret_cast<decltype(n.fn)>(dlsym(lib, #fn)); \
    if (!n.fn) {                                              \
        n.error = "NVRTC lacks " #fn;                         \
        return n;                                             \
    }
        WEFT_NVRTC_FUNCTIONS(WEFT_NVRTC_RESOLVE)
#undef WEFT_NVRTC_RESOLVE
        int major = 0, minor = 0;
        n.nvrtcVersion(&major, &minor);
        n.version = std::to_string(major) + "." + std::to_string(minor);
        return n;
    }();
    if (!n.error.empty()) throw Error("CUDA kernels cannot be compiled: " + n.error);
    return n;
}

}  // namespace

const std::string& nvrtc_version() {
    return nvrtc().version;
}

std::vector<std::string> nvrtc_options(int arch, const std::vector<std::string>& extra) {
    std::vector<std::string> all = {"--gpu-architecture=sm_" + std::to_string(arch), "-std=c++17"};
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
}

std::string compile_cubin(const std::string& source, const std::string& name, int arch,
                          const std::vector<std::string>& options) {
    const Nvrtc& n = nvrtc();
    nvrtcProgram prog = nullptr;
    if (n.nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != 0)
        throw Error("nvrtcCreateProgram failed for module '" + name + "'");
    struct Destroy {
        const Nvrtc& n;
        nvrtcProgram& p;
        ~Destroy() { n.nvrtcDestroyProgram(&p); }
    } destroy{n, prog};

    const std::vector<std::string> all = nvrtc_options(arch, options);
    std::vector<const char*> argv;
    for (const auto& o : all) argv.push_back(o.c_str());
    const nvrtcResult rc = n.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    if (rc != 0) {
        size_t size = 0;
        n.nvrtcGetProgramLogSize(prog, &size);
        std::string log(size, '\0');
        n.nvrtcGetProgramLog(prog, log.data());
        throw Error("NVRTC failed on generated code for module '" + name +
                    "' (a Weft bug; please report it with this output):\n" + log);
    }
    size_t size = 0;
    n.nvrtcGetCUBINSize(prog, &size);
    std::string cubin(size, '\0');
    n.nvrtcGetCUBIN(prog, cubin.data());
    return cubin;
}

}  // namespace weft::runtime::cuda
