// Compiling, caching, loading and launching GPU modules.
#include "runtime/cuda/cuda_module.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/nvrtc.hpp"
#include "runtime/files.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> nvrtc_flags(const Options& options) {
    // GpuToGpu: the same arithmetic on every architecture, so no FMA contraction.
    if (options.deterministic == Deterministic::GpuToGpu) return {"--fmad=false"};
    return {};
}

// `source` compiled for `arch` (through the disk cache) and loaded; sets `hit` when the cubin
// came from the cache.
CUmodule build_and_load(const std::string& source, const std::string& module_name, int arch,
                        const std::vector<std::string>& flags, bool& hit) {
    base::Hasher key;
    key.add(source).add(nvrtc_version()).add(static_cast<uint64_t>(arch));
    for (const auto& f : flags) key.add(f);
    const std::string name = "cuda-sm" + std::to_string(arch) + "-" + key.hex() + ".cubin";
    const Driver& d = require_driver();
    CUmodule module = nullptr;
    const auto build = [&](const fs::path& out) {
        append_to_file(out, compile_cubin(source, module_name, arch, flags));
    };
    // The driver loads from memory: what was checked is what runs, under any name.
    const auto load = [&](const fs::path&, const std::string& image, EntryLoad) {
        if (module) d.cuModuleUnload(module);
        module = nullptr;
        check(d.cuModuleLoadData(&module, image.data()), ("loading module '" + module_name + "'").c_str());
    };
    hit = cached_build(name, build, load).hit;
    return module;
}

}  // namespace

std::shared_ptr<CudaModule> CudaModule::load(codegen::Generated generated, const plan::ProgramPlan& plan,
                                             const Options& options, int ordinal) {
    const auto start = std::chrono::steady_clock::now();
    const DeviceContext& c = context(ordinal);
    std::shared_ptr<CudaModule> m(new CudaModule());
    m->ordinal_ = ordinal;
    m->adopt(std::move(generated), plan);

    m->arch_ = c.cc_major * 10 + c.cc_minor;
    m->flags_ = nvrtc_flags(options);
    const Driver& d = require_driver();
    m->module_ = build_and_load(codegen::prelude_for(m->generated_) + "\n" + m->generated_.source,
                                m->module_name_, m->arch_, m->flags_, m->from_cache_);
    const auto function_of = [&](const std::string& symbol) {
        CUfunction f = nullptr;
        if (!symbol.empty())
            check(d.cuModuleGetFunction(&f, m->module_, symbol.c_str()), "cuModuleGetFunction");
        return f;
    };
    for (const std::string& symbol : m->generated_.entries) m->functions_.push_back(function_of(symbol));
    m->report(options, ("cuda:" + std::to_string(ordinal)).c_str(),
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    return m;
}

CUfunction CudaModule::lazy_function(LazyEntries& lazy, const std::string& source,
                                     const std::vector<std::string>& symbols, const char* what,
                                     size_t function, bool verbose) const {
    if (symbols[function].empty()) return nullptr;
    std::lock_guard lock(lazy.mutex);
    if (!lazy.module) {
        const UnsafeCallsAllowed unsafe;  // first used inside a graph capture, it loads here
        const auto start = std::chrono::steady_clock::now();
        const std::string name = module_name_ + " (" + what + ")";
        bool hit = false;
        lazy.module = build_and_load(codegen::prelude() + "\n" + source, name, arch_, flags_, hit);
        for (const std::string& symbol : symbols) {
            CUfunction f = nullptr;
            if (!symbol.empty())
                check(require_driver().cuModuleGetFunction(&f, lazy.module, symbol.c_str()),
                      "cuModuleGetFunction");
            lazy.functions.push_back(f);
        }
        if (verbose)
            std::fprintf(
                stderr, "weft: module '%s' for cuda:%d %s in %.1f ms\n", name.c_str(), ordinal_,
                hit ? "loaded from cache" : "compiled",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return lazy.functions[function];
}

CudaModule::~CudaModule() {
    if (!bind_for_release(ordinal_)) return;
    // A module replaced while this thread captures a stream (a module compiled again with its
    // adjoints for a captured backward pass) is unloaded in the relaxed capture mode: in the
    // global one the unload would invalidate the capture. (No graph uses it: a captured launch
    // keeps its module.)
    const Driver& d = *driver();
    int previous = CU_STREAM_CAPTURE_MODE_RELAXED;
    d.cuThreadExchangeStreamCaptureMode(&previous);
    if (module_) d.cuModuleUnload(module_);
    if (resolving_.module) d.cuModuleUnload(resolving_.module);
    if (fused_.module) d.cuModuleUnload(fused_.module);
    d.cuThreadExchangeStreamCaptureMode(&previous);
}

unsigned entry_blocks(int ordinal, int64_t total, int block) {
    const int64_t waves = static_cast<int64_t>(context(ordinal).sm_count) * (2048 / block) * 2;
    return static_cast<unsigned>(std::min<int64_t>((total + block - 1) / block, waves));
}

bool CudaModule::launch_resolving(size_t function, const LaunchGrid& grid, void* const* args,
                                  const Options& options, const wf::InKernelResolve& resolve) const {
    if (generated_.resolving_entries[function].empty() || !context(ordinal_).cooperative) return false;
    const CUfunction f = lazy_function(resolving_, generated_.resolving_source, generated_.resolving_entries,
                                       "resolving entries", function, options.verbose);
    // Only a launch whose grid (a thread per launch thread and per slot) is one wave of the
    // resolving entry anyway: a larger one, capped to a wave, would lose more in its loop than the
    // separate resolve costs.
    const auto block = static_cast<int64_t>(options.block_dim);
    const int64_t blocks = (std::max<int64_t>(grid.total(), resolve.slots) + block - 1) / block;
    if (!one_wave(f, blocks, block)) return false;
    return launch_with(function, f, static_cast<unsigned>(blocks), grid, args, options, &resolve, nullptr,
                       true);
}

bool CudaModule::launch_fused(size_t function, const LaunchGrid& grid, void* const* args,
                              const Options& options, const wf::FusedSlots& slots) const {
    if (generated_.fused_entries[function].empty() || !context(ordinal_).cooperative ||
        options.bounds_check || options.debug)
        return false;
    // One block per tile of the launch, only where they can all be resident (so that a grid
    // that never could compiles no fused module), then where they are for this entry.
    const auto block = static_cast<int64_t>(options.block_dim);
    const int64_t blocks = (grid.total() + block - 1) / block;
    if (blocks > fused_blocks_at_most(ordinal_, block)) return false;
    const CUfunction f = lazy_function(fused_, generated_.fused_source, generated_.fused_entries,
                                       "fused entries", function, options.verbose);
    if (!one_wave(f, blocks, block)) return false;
    return launch_with(function, f, static_cast<unsigned>(blocks), grid, args, options, nullptr, &slots,
                       true);
}

int64_t fused_blocks_at_most(int ordinal, int64_t block) {
    return static_cast<int64_t>(context(ordinal).sm_count) * std::min<int64_t>(32, 2048 / block);
}

int CudaModule::resident_blocks(CUfunction f, int64_t block) const {
    std::lock_guard lock(occupancy_mutex_);
    for (const auto& [known, threads, blocks] : occupancy_)
        if (known == f && threads == block) return blocks;
    int blocks = 0;
    const UnsafeCallsAllowed unsafe;  // (asked while capturing too: not stream-ordered)
    check(
        require_driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, static_cast<int>(block), 0),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    occupancy_.emplace_back(f, static_cast<int>(block), blocks);
    return blocks;
}

bool CudaModule::one_wave(CUfunction f, int64_t blocks, int64_t block) const {
    return blocks <= static_cast<int64_t>(context(ordinal_).sm_count) * resident_blocks(f, block);
}

void CudaModule::launch(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                        bool) const {
    launch_with(function, functions_[function], entry_blocks(ordinal_, grid.total(), options.block_dim), grid,
                args, options, nullptr, nullptr, false);
}

bool CudaModule::launch_with(size_t function, CUfunction f, unsigned blocks, const LaunchGrid& grid,
                             void* const* args, const Options& options, const wf::InKernelResolve* resolve,
                             const wf::FusedSlots* slots, bool cooperative) const {
    const auto stream = current_stream(ordinal_);
    const Driver& d = require_driver();

    // Bounds faults go to the kernel's fault record in the stream's status area, which the next
    // synchronization reads: at once for a direct launch, after a replay for captured work.
    StatusTicket fault;
    const bool captured = (options.bounds_check || options.debug) && capturing(*stream);
    if (options.bounds_check) {
        const auto self = std::static_pointer_cast<const CudaModule>(shared_from_this());
        fault = status_fault(
            stream,
            (captured ? "captured fault\n" : "fault\n") + std::to_string(reinterpret_cast<uintptr_t>(this)) +
                "\n" + std::to_string(function),
            [module = std::weak_ptr<const CudaModule>(self), function, captured](const FaultRecord& f) {
                if (const auto m = module.lock()) m->throw_fault(function, f, !captured);
            });
    }
    LaunchRecord record = launch_record(grid, fault.fault());
    if (resolve) record.resolve = *resolve;
    if (slots) record.slots = *slots;
    void* params[64];
    const size_t count = generated_.params[function];
    if (count + 1 > std::size(params))
        throw Error("a kernel takes at most 63 parameters", function_names_[function]);
    for (size_t i = 0; i < count; ++i) params[i] = args[i];
    params[count] = &record;

    const auto block = static_cast<unsigned>(options.block_dim);
    if (cooperative) {
        // Refused (a grid the driver cannot keep resident): the caller launches it plainly.
        if (d.cuLaunchCooperativeKernel(f, blocks, 1, 1, block, 1, 1, 0, stream->stream, params) !=
            CUDA_SUCCESS)
            return false;
    } else {
        // (The message is built only on failure: a launch allocates nothing for it.)
        const CUresult r = d.cuLaunchKernel(f, blocks, 1, 1, block, 1, 1, 0, stream->stream, params, nullptr);
        if (r != CUDA_SUCCESS) check(r, ("launching kernel '" + function_names_[function] + "'").c_str());
    }
    note_launch(*stream, function_names_[function]);

    if ((options.bounds_check || options.debug) && !captured) {
        fault = {};  // queued: the synchronization may read it
        synchronize(*stream);
    }
    return true;
}

}  // namespace weft::runtime::cuda
