// Compiling and caching the library's own GPU kernels.
#include "runtime/cuda/library_module.hpp"

#include <fstream>
#include <map>
#include <mutex>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/nvrtc.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cuda {

CUfunction library_function(int ordinal, const std::string& module, const std::string& source,
                            const std::string& name) {
    static std::mutex mutex;
    static std::map<std::pair<int, std::string>, CUmodule> loaded;
    const DeviceContext& c = context(ordinal);
    std::lock_guard lock(mutex);
    CUmodule& m = loaded[{ordinal, module}];
    if (!m) {
        const int arch = c.cc_major * 10 + c.cc_minor;
        const std::string key =
            base::Hasher().add(source).add(nvrtc_version()).add(static_cast<uint64_t>(arch)).hex();
        const CacheEntry entry =
            cached_build("cuda-lib-" + module + "-sm" + std::to_string(arch) + "-" + key + ".cubin",
                         [&](const std::filesystem::path& out) {
                             const std::string cubin = compile_cubin(source, module, arch, {});
                             std::ofstream file(out, std::ios::binary);
                             file.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
                         });
        const std::string image = read_entry(entry.path);
        check(require_driver().cuModuleLoadData(&m, image.data()), "loading Weft's GPU library kernels");
    }
    CUfunction f = nullptr;
    check(require_driver().cuModuleGetFunction(&f, m, name.c_str()),
          ("finding library kernel " + name).c_str());
    return f;
}

}  // namespace weft::runtime::cuda
