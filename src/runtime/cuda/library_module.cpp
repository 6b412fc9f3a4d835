// Compiling and caching the library's own GPU kernels.
#include "runtime/cuda/library_module.hpp"

#include <map>
#include <mutex>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/nvrtc.hpp"
#include "runtime/files.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cuda {

CUfunction library_function(int ordinal, LibraryModule module, const std::string& name) {
    static std::mutex mutex;
    static std::map<std::pair<int, LibraryModule>, CUmodule> loaded;
    const DeviceContext& c = context(ordinal);
    std::lock_guard lock(mutex);
    CUmodule& m = loaded[{ordinal, module}];
    if (!m) {
        const int arch = c.cc_major * 10 + c.cc_minor;
        const std::string& source = library_source(module);
        const std::string module_name = library_module_name(module);
        const std::string key =
            base::Hasher().add(source).add(nvrtc_version()).add(static_cast<uint64_t>(arch)).hex();
        const Driver& d = require_driver();
        const UnsafeCallsAllowed unsafe;  // first used inside a graph capture, it loads here
        cached_build(
            "cuda-lib-" + module_name + "-sm" + std::to_string(arch) + "-" + key + ".cubin",
            [&](const std::filesystem::path& out) {
                append_to_file(out, compile_cubin(source, module_name, arch, library_options(module)));
            },
            [&](const std::filesystem::path&, const std::string& image, EntryLoad) {
                if (m) d.cuModuleUnload(m);
                m = nullptr;
                check(d.cuModuleLoadData(&m, image.data()), "loading Weft's GPU library kernels");
            });
    }
    // Found once: with lazy loading, finding a function loads it, which a capture must allow.
    static std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
    CUfunction& f = functions[{m, name}];
    if (!f) {
        const UnsafeCallsAllowed unsafe;
        check(require_driver().cuModuleGetFunction(&f, m, name.c_str()),
              ("finding library kernel " + name).c_str());
    }
    return f;
}

void launch_library_kernel(int ordinal, LibraryModule module, const char* name, unsigned blocks,
                           unsigned threads, void** params, const std::string& what) {
    const CUfunction f = library_function(ordinal, module, name);
    const auto stream = current_stream(ordinal);
    check(require_driver().cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, stream->stream, params, nullptr),
          name);
    note_launch(*stream, what);
}

}  // namespace weft::runtime::cuda
