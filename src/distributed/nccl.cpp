// Loading NCCL (distributed/nccl.hpp): the places it is looked for, dlopen, the function table.
#include "distributed/nccl.hpp"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

#include "weft/error.hpp"

namespace weft::distributed::nccl {

namespace {

// The places libnccl.so.2 is looked for, in order.
std::vector<std::string> candidates() {
    std::vector<std::string> paths{"libnccl.so.2"};  // the loader's path (LD_LIBRARY_PATH, ld.so.cache)
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* root = std::getenv(var); root && *root)
            for (const char* lib : {"/lib64/", "/lib/"})
                paths.push_back(std::string(root) + lib + "libnccl.so.2");
    paths.push_back("/usr/local/cuda/lib64/libnccl.so.2");
    // The NVIDIA Python wheels (nvidia-nccl-cu12 and so on) put it under site-packages.
    std::vector<std::string> patterns;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
        if (const char* root = std::getenv(var); root && *root)
            patterns.push_back(std::string(root) +
                               "/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2");
    if (const char* home = std::getenv("HOME"); home && *home)
        patterns.push_back(std::string(home) +
                           "/.local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2");
    for (const char* root : {"/usr/local/lib", "/usr/lib", "/opt/conda/lib"})
        for (const char* kind : {"site-packages", "dist-packages"})
            patterns.push_back(std::string(root) + "/python3*/" + kind + "/nvidia/nccl/lib/libnccl.so.2");
    patterns.push_back("/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2");
    for (const std::string& pattern : patterns) {
        glob_t g{};
        if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
        globfree(&g);
    }
    return paths;
}

Library load() {
    std::vector<std::string> tried;
    if (const char* chosen = std::getenv("WEFT_NCCL"); chosen && *chosen)
        tried.emplace_back(chosen);
    else
        tried = candidates();
    void* lib = nullptr;
    std::string path, errors;
    for (const std::string& p : tried) {
        lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            path = p;
            break;
        }
        errors += "\n  " + p + ": " + dlerror();
    }
    if (!lib)
        throw Error(
            "NCCL could not be loaded; it was looked for at:" + errors +
            "\nInstall NCCL (the CUDA toolkit's libnccl2, or pip install nvidia-nccl-cu12) or set WEFT_NCCL "
            "to the path of libnccl.so.2");
    Library l;
    l.path = path;
#define WEFT_NCCL_RESOLVE(fn, ...)                            \
    l.fn = reinterpret_cast<decltype(l.fn)>(dlsym(lib, #fn)); \
    if (!l.fn) throw Error("NCCL at " + path + " lacks " #fn "; Weft needs NCCL 2.12 or newer");
    WEFT_NCCL_FUNCTIONS(WEFT_NCCL_RESOLVE)
#undef WEFT_NCCL_RESOLVE
    l.ncclGetErrorString = reinterpret_cast<decltype(l.ncclGetErrorString)>(dlsym(lib, "ncclGetErrorString"));
    l.ncclGetVersion(&l.version);
    return l;
}

}  // namespace

const Library& library() {
    static const Library l = load();
    return l;
}

void check(ncclResult_t r, const char* what) {
    if (r == 0) return;
    const char* msg = library().ncclGetErrorString ? library().ncclGetErrorString(r) : nullptr;
    throw Error(std::string(what) + " failed: " + (msg ? msg : "NCCL error " + std::to_string(r)));
}

}  // namespace weft::distributed::nccl
