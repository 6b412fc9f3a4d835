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

std::shared_ptr<CpuModule> CpuModule::load(const ir::Program& lowered, const Options& options) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<CpuModule> m(new CpuModule());
    m->module_name_ = lowered.module_name;
    for (const auto& f : lowered.functions) m->function_names_.push_back(f->name);
    m->generated_ =
        codegen::emit(lowered, {.dialect = codegen::Dialect::Cpu, .bounds_check = options.bounds_check});

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
        throw Error("cannot load compiled module '" + lowered.module_name + "' from " + entry.path.string() +
                    ": " + dlerror());
    for (const std::string& symbol : m->generated_.entries) {
        Entry e = nullptr;
        if (!symbol.empty()) {
            e = reinterpret_cast<Entry>(dlsym(m->handle_, symbol.c_str()));
            if (!e) throw Error("compiled module '" + lowered.module_name + "' lacks entry " + symbol);
        }
        m->entries_.push_back(e);
    }

    m->report(options, "cpu",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    return m;
}

CpuModule::~CpuModule() {
    if (handle_) dlclose(handle_);
}

void CpuModule::launch(size_t function, const LaunchGrid& grid, void* const* args, const Options&) const {
    FaultRecord fault{};
    const LaunchRecord launch = launch_record(grid, &fault);
    entries_.at(function)(args, &launch);
    if (generated_.prints[function]) std::fflush(stdout);
    if (fault.code != 0) throw_fault(function, fault);
}

}  // namespace weft::runtime::cpu
