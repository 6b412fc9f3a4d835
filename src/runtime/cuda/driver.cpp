// Loading libcuda: dlopen, cuGetProcAddress for each entry point, cuInit.
#include "runtime/cuda/driver.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, unsigned long long, int*);

struct Loaded {
    Driver driver;
    GetProcAddress get = nullptr;
    bool ok = false;
    std::string reason;
};

Loaded load() {
    Loaded l;
    if (const char* off = std::getenv("WEFT_DISABLE_CUDA"); off && *off && std::string(off) != "0") {
        l.reason = "CUDA is disabled by WEFT_DISABLE_CUDA";
        return l;
    }
    const char* name = std::getenv("WEFT_CUDA_DRIVER");
    void* lib = dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        l.reason = std::string("the CUDA driver library could not be loaded (") + dlerror() +
                   "); install the NVIDIA driver to use GPUs";
        return l;
    }
    auto get = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get) {
        l.reason =
            "the CUDA driver is too old (no cuGetProcAddress_v2); Weft needs a CUDA 12 or newer driver";
        return l;
    }
    Driver& d = l.driver;
#define WEFT_CUDA_RESOLVE(fn, ...)                                                               \
    if (get(#fn, reinterpret_cast<void**>(&d.fn), 12000, 0, nullptr) != CUDA_SUCCESS || !d.fn) { \
        l.reason = "the CUDA driver lacks " #fn;                                                 \
        return l;                                                                                \
    }
    WEFT_CUDA_DRIVER_FUNCTIONS(WEFT_CUDA_RESOLVE)
#undef WEFT_CUDA_RESOLVE
    if (const CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
        const char* msg = nullptr;
        d.cuGetErrorString(r, &msg);
        l.reason = std::string("cuInit failed: ") + (msg ? msg : "unknown error") + " (is there a GPU?)";
        return l;
    }
    int count = 0;
    if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        l.reason = "the CUDA driver reports no GPU";
        return l;
    }
    d.cuDriverGetVersion(&d.version);
    l.get = get;
    l.ok = true;
    return l;
}

const Loaded& loaded() {
    static const Loaded l = load();
    return l;
}

}  // namespace

const Driver* driver() {
    return loaded().ok ? &loaded().driver : nullptr;
}

void* driver_symbol(const char* name, int version) {
    if (!loaded().ok) return nullptr;
    void* fn = nullptr;
    if (loaded().get(name, &fn, version, 0, nullptr) != CUDA_SUCCESS) return nullptr;
    return fn;
}

const std::string& unavailable_reason() {
    return loaded().reason;
}

const Driver& require_driver() {
    if (const Driver* d = driver()) return *d;
    throw Error("CUDA is unavailable: " + unavailable_reason());
}

void check(CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return;
    const char* msg = nullptr;
    if (const Driver* d = driver()) d->cuGetErrorString(r, &msg);
    throw Error(std::string(what) + " failed: " + (msg ? msg : "CUDA error " + std::to_string(r)));
}

}  // namespace weft::runtime::cuda
