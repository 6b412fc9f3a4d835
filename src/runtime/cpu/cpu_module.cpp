// Loading CPU modules and running their kernels.
#include "runtime/cpu/cpu_module.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cpu/host_compiler.hpp"
#include "runtime/cpu/worker_pool.hpp"
#include "runtime/files.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cpu {

namespace fs = std::filesystem;

std::shared_ptr<CpuModule> CpuModule::load(codegen::Generated generated, const plan::ProgramPlan& plan,
                                           const Options& options) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<CpuModule> m(new CpuModule());
    m->adopt(std::move(generated), plan);

    const HostCompiler& compiler = host_compiler();
    const std::vector<std::string> flags = compile_flags(compiler, options);
    base::Hasher key;
    key.add(codegen::prelude_for(m->generated_)).add(m->generated_.source).add(compiler.key);
    for (const auto& f : flags) key.add(f);
    const std::string name = "cpu-" + key.hex() + ".so";

    const auto build = [&](const fs::path& out) {
        fs::path source;
        try {
            source = create_unique_file(out.string() + ".", ".cpp",
                                        codegen::prelude_for(m->generated_) + "\n" + m->generated_.source);
        } catch (const FileError& e) {
            throw Error("cannot write the generated source of module '" + m->module_name_ +
                        "': " + e.message() +
                        "; free some disk space, or set WEFT_CACHE_DIR to a folder on another disk");
        }
        RemovedOnExit cleanup(source);
        compile_shared_object(compiler, source, out, flags, m->module_name_);
    };
    // Loaded from the bytes the cache checked (a built entry's at the check, a cached entry's
    // once verified): once published, the entry is the same bytes.
    const auto load = [&](const fs::path& path, const std::string& image, EntryLoad why) {
        m->unload();
        try {
            m->open(image, path.parent_path() / name);  // (at the check, `path` is the temporary file)
        } catch (const Error& e) {
            if (why != EntryLoad::Check) throw;
            throw Error("the host C++ compiler '" + compiler.path + "' reported success compiling module '" +
                        m->module_name_ + "', but its output cannot be loaded (" + e.message() +
                        "); check that WEFT_CXX names a working C++ compiler for this machine");
        }
    };
    m->from_cache_ = cached_build(name, build, load).hit;

    m->report(options, "cpu",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    return m;
}

void CpuModule::open(const std::string& image, const fs::path& path) {
    // A file of its own for every load, removed once loaded: what runs is `image`, whatever
    // becomes of the entry between its check and the load, and a name never loaded before, which
    // the dynamic loader cannot take for an object it already has (as it took /proc/self/fd/N
    // with a reused N). Its folder is the cache folder, which only this user can write; a copy a
    // killed process left is removed with the abandoned temporaries (".tmp.").
    fs::path copy;
    try {
        copy = create_unique_file(path.string() + ".tmp.load.", "", image);
    } catch (const FileError& e) {
        throw Error("cannot load " + path.string() + ": " + e.message() +
                    "; free some disk space, or set WEFT_CACHE_DIR to a folder on another disk");
    }
    RemovedOnExit cleanup(copy);
    handle_ = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw Error("cannot load " + path.string() + ": " + dlerror());
    for (const std::string& symbol : generated_.entries) {
        Entry e = nullptr;
        if (!symbol.empty()) {
            e = reinterpret_cast<Entry>(dlsym(handle_, symbol.c_str()));
            if (!e) {
                unload();
                throw Error(path.string() + " lacks entry " + symbol);
            }
        }
        entries_.push_back(e);
    }
}

void CpuModule::unload() {
    if (handle_) dlclose(handle_);
    handle_ = nullptr;
    entries_.clear();
}

CpuModule::~CpuModule() {
    unload();
}
void CpuModule::launch(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                       bool exclusive_atomics) const {
    const Entry entry = entries_.at(function);
    LaunchRecord launch = launch_record(grid, nullptr);
    const int workers = cpu_workers(options);
    // (The caller holds the atomics' targets exclusively only where runs_serial said it would.)
    launch.serial = exclusive_atomics && chunk_count(launch.total, workers) <= 1;
    // Each chunk records its own first fault (it stops there); the launch reports the fault of
    // the earliest chunk that has one, which is the first in thread order. Chunks after a
    // faulting one need not run: the launch is undone.
    std::mutex faults_mutex;
    FaultRecord first{};
    std::atomic<int64_t> first_chunk{INT64_MAX};
    run_chunks(launch.total, workers, [&](int worker, int64_t chunk, int64_t begin, int64_t end) {
        if (chunk > first_chunk.load(std::memory_order_relaxed)) return;
        FaultRecord fault{};
        entry(args, &launch, begin, end, &fault, worker);
        if (fault.code == 0) return;
        std::lock_guard lock(faults_mutex);
        if (chunk < first_chunk.load(std::memory_order_relaxed)) {
            first = fault;
            first_chunk.store(chunk, std::memory_order_relaxed);
        }
    });
    if (generated_.prints[function]) std::fflush(stdout);
    if (first.code != 0) throw_fault(function, first);
}

}  // namespace weft::runtime::cpu
