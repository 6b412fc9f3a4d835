// Loading CPU modules and running their kernels.
#include "runtime/cpu/cpu_module.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cpu/host_compiler.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cpu {

namespace fs = std::filesystem;

namespace {

// Mirrors wf::Error and wf::Launch in the prelude.
struct FaultRecord {
    int32_t code;
    int32_t site;
    int32_t dim;
    int32_t pad;
    int64_t index;
    int64_t extent;
};

struct LaunchRecord {
    int64_t dims[4];
    int64_t total;
    int32_t ndim;
    int32_t pad;
    FaultRecord* error;
};

}  // namespace

std::shared_ptr<CpuModule> CpuModule::load(const ir::Program& lowered, const Options& options) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<CpuModule> m(new CpuModule());
    m->module_name_ = lowered.module_name;
    for (const auto& f : lowered.functions) m->function_names_.push_back(f->name);
    m->generated_ = codegen::emit(lowered, {.bounds_check = options.bounds_check});

    const std::vector<std::string> flags = compile_flags(options);
    base::Hasher key;
    key.add(codegen::prelude()).add(m->generated_.source).add(host_compiler_identity());
    for (const auto& f : flags) key.add(f);
    const std::string name = "cpu-" + key.hex() + ".so";

    const CacheEntry entry = cached_build(name, [&](const fs::path& out) {
        const fs::path source = fs::path(out.string() + ".cpp");
        {
            std::ofstream src(source);
            src << codegen::prelude() << "\n" << m->generated_.source;
        }
        try {
            compile_shared_object(source, out, flags);
        } catch (...) {
            fs::remove(source);
            throw;
        }
        fs::remove(source);
    });
    m->from_cache_ = entry.hit;

    m->handle_ = dlopen(entry.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m->handle_)
        throw Error("cannot load compiled module '" + lowered.module_name + "' from " + entry.path.string() + ": " +
                    dlerror());
    for (const std::string& symbol : m->generated_.entries) {
        Entry e = nullptr;
        if (!symbol.empty()) {
            e = reinterpret_cast<Entry>(dlsym(m->handle_, symbol.c_str()));
            if (!e) throw Error("compiled module '" + lowered.module_name + "' lacks entry " + symbol);
        }
        m->entries_.push_back(e);
    }

    if (options.verbose) {
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "weft: module '%s' for cpu %s in %.1f ms\n", lowered.module_name.c_str(),
                     entry.hit ? "loaded from cache" : "compiled", ms);
    }
    return m;
}

CpuModule::~CpuModule() {
    if (handle_) dlclose(handle_);
}

void CpuModule::launch(size_t function, const LaunchGrid& grid, void* const* args) const {
    FaultRecord fault{};
    LaunchRecord launch{};
    launch.total = 1;
    launch.ndim = grid.ndim;
    for (int d = 0; d < 4; ++d) {
        launch.dims[d] = grid.dims[d];
        if (d < grid.ndim) launch.total *= grid.dims[d];
    }
    launch.error = &fault;
    entries_.at(function)(args, &launch);
    if (generated_.prints[function]) std::fflush(stdout);
    if (fault.code == 0) return;
    const codegen::AccessSite& site = generated_.sites.at(fault.site);
    throw Error("index " + std::to_string(fault.index) + " is out of bounds for dimension " +
                    std::to_string(fault.dim) + " of array '" + site.array + "' (extent " +
                    std::to_string(fault.extent) + ")" +
                    (site.function != function_names_[function] ? " in function '" + site.function + "'" : "") +
                    "; the launch was undone, so the arrays hold their values from before it",
                function_names_[function], site.file, site.line);
}

}  // namespace weft::runtime::cpu
