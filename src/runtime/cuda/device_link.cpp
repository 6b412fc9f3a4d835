// nvJitLink, loaded with dlopen at first use, and the toolkit's libcudadevrt.a.
#include "runtime/cuda/device_link.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace {

using nvJitLinkHandle = struct nvJitLink*;
using nvJitLinkResult = int;
constexpr int kInputCubin = 1;
constexpr int kInputLibrary = 6;

#define WEFT_NVJITLINK_FUNCTIONS(X)                                             \
    X(nvJitLinkCreate, nvJitLinkHandle*, uint32_t, const char**)                \
    X(nvJitLinkDestroy, nvJitLinkHandle*)                                       \
    X(nvJitLinkAddData, nvJitLinkHandle, int, const void*, size_t, const char*) \
    X(nvJitLinkAddFile, nvJitLinkHandle, int, const char*)                      \
    X(nvJitLinkComplete, nvJitLinkHandle)                                       \
    X(nvJitLinkGetLinkedCubinSize, nvJitLinkHandle, size_t*)                    \
    X(nvJitLinkGetLinkedCubin, nvJitLinkHandle, void*)                          \
    X(nvJitLinkGetErrorLogSize, nvJitLinkHandle, size_t*)                       \
    X(nvJitLinkGetErrorLog, nvJitLinkHandle, char*)

struct NvJitLink {
#define WEFT_NVJITLINK_FIELD(name, ...) nvJitLinkResult (*name)(__VA_ARGS__) = nullptr;
    WEFT_NVJITLINK_FUNCTIONS(WEFT_NVJITLINK_FIELD)
#undef WEFT_NVJITLINK_FIELD
    std::string error;
};

// The toolkit folders to look in: CUDA_HOME, CUDA_PATH, /usr/local/cuda.
std::vector<std::string> toolkit_lib_dirs() {
    std::vector<std::string> dirs;
    for (const char* home : {static_cast<const char*>(std::getenv("CUDA_HOME")),
                             static_cast<const char*>(std::getenv("CUDA_PATH")), "/usr/local/cuda"})
        if (home && *home) {
            dirs.push_back(std::string(home) + "/lib64");
            dirs.push_back(std::string(home) + "/lib");
        }
    return dirs;
}

const NvJitLink& nvjitlink() {
    static const NvJitLink n = [] {
        NvJitLink n;
        std::vector<std::string> candidates = {"libnvJitLink.so", "libnvJitLink.so.13", "libnvJitLink.so.12"};
        for (const std::string& dir : toolkit_lib_dirs()) candidates.push_back(dir + "/libnvJitLink.so");
        void* lib = nullptr;
        for (const auto& c : candidates)
            if ((lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
        if (!lib) {
            n.error = "nvJitLink (libnvJitLink.so) could not be loaded; install the CUDA toolkit's nvJitLink";
            return n;
        }
#define WEFT_NVJITLINK_RESOLVE(fn, ...)                       \
    n.fn = reinterpret_cast<decltype(n.fn)>(dlsym(lib, #fn)); \
    if (!n.fn) {                                              \
        n.error = "nvJitLink lacks " #fn;                     \
        return n;                                             \
    }
        WEFT_NVJITLINK_FUNCTIONS(WEFT_NVJITLINK_RESOLVE)
#undef WEFT_NVJITLINK_RESOLVE
        return n;
    }();
    return n;
}

// A library file the linker may read: a regular file owned by root or by this user that no one
// else may write (code linked from it runs on the GPU).
bool trusted_file(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    if (st.st_uid != 0 && st.st_uid != getuid()) return false;
    return (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string device_runtime_library() {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("WEFT_CUDADEVRT"); env && *env) candidates.push_back(env);
    for (const std::string& dir : toolkit_lib_dirs()) candidates.push_back(dir + "/libcudadevrt.a");
    for (const auto& c : candidates)
        if (trusted_file(c)) return c;
    throw Error(
        "conditional graph nodes (capture_while, capture_if) need the CUDA toolkit's device runtime "
        "library libcudadevrt.a, which was not found (or is writable by other users) in $CUDA_HOME/lib64, "
        "$CUDA_PATH/lib64 or /usr/local/cuda/lib64; set WEFT_CUDADEVRT to its path");
}

}  // namespace

std::string link_with_device_runtime(const std::string& relocatable, int arch) {
    const NvJitLink& n = nvjitlink();
    if (!n.error.empty()) throw Error("conditional graph nodes cannot be built: " + n.error);
    const std::string library = device_runtime_library();
    const std::string arch_option = "-arch=sm_" + std::to_string(arch);
    const char* options[] = {arch_option.c_str()};
    nvJitLinkHandle h = nullptr;
    if (n.nvJitLinkCreate(&h, 1, options) != 0) throw Error("nvJitLinkCreate failed");
    struct Destroy {
        const NvJitLink& n;
        nvJitLinkHandle& h;
        ~Destroy() { n.nvJitLinkDestroy(&h); }
    } destroy{n, h};
    const auto log = [&] {
        size_t size = 0;
        n.nvJitLinkGetErrorLogSize(h, &size);
        std::string text(size, '\0');
        if (size) n.nvJitLinkGetErrorLog(h, text.data());
        return text;
    };
    if (n.nvJitLinkAddData(h, kInputCubin, relocatable.data(), relocatable.size(), "weft_graph") != 0 ||
        n.nvJitLinkAddFile(h, kInputLibrary, library.c_str()) != 0 || n.nvJitLinkComplete(h) != 0)
        throw Error("linking Weft's graph kernels with " + library +
                    " failed (a Weft bug; please report it):\n" + log());
    size_t size = 0;
    n.nvJitLinkGetLinkedCubinSize(h, &size);
    std::string cubin(size, '\0');
    n.nvJitLinkGetLinkedCubin(h, cubin.data());
    return cubin;
}

}  // namespace weft::runtime::cuda
