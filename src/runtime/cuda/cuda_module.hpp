// A module compiled for a GPU: a cubin from NVRTC (via the disk cache), loaded by the driver.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/cuda/driver.hpp"
#include "runtime/device_module.hpp"

namespace weft::runtime::cuda {

// How many blocks of `block` threads a kernel entry of `total` threads is launched with: two
// waves of full occupancy at most (the entries loop over their threads, codegen's cuda_entry).
unsigned entry_blocks(int ordinal, int64_t total, int block);
// The most blocks of `block` threads a device could hold at once (the fused slot entry's grid is
// never larger): its multiprocessors' thread and block limits.
int64_t fused_blocks_at_most(int ordinal, int64_t block);

class CudaModule final : public DeviceModule {
public:
    static std::shared_ptr<CudaModule> load(codegen::Generated generated, const plan::ProgramPlan& plan,
                                            const Options& options, int ordinal);
    ~CudaModule() override;
    CudaModule(const CudaModule&) = delete;
    CudaModule& operator=(const CudaModule&) = delete;

    // Queues the kernel on the thread's current stream and returns. With bounds checking or
    // debug on, waits for it and reports its errors at once.
    void launch(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                bool exclusive_atomics) const override;
    // A cooperative launch of the resolving entry, whose blocks resolve the deterministic sums
    // after a grid barrier: only where its grid is at most one wave of resident blocks.
    bool launch_resolving(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                          const wf::InKernelResolve& resolve) const override;
    // A cooperative launch of the fused slot entry (both passes, every block waiting for every
    // block's count between them) on `slots`: only launches without bounds checks or debug, one
    // block per tile, where those are at most one wave of resident blocks. Its module is compiled
    // at the first such launch. (Into a capture only where captures take cooperative launches: a
    // refused one would invalidate the capture; the caller checks.)
    bool launch_fused(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                      const wf::FusedSlots& slots) const override;

    // The raw function, for benchmarks that compare against a direct cuLaunchKernel.
    CUfunction function(size_t index) const { return functions_.at(index); }

private:
    CudaModule() = default;
    // Queues `f` (function `function`'s entry) on `blocks` blocks, with `resolve` or `slots` in
    // its launch record where set; `cooperative` (set with either) makes it a cooperative launch,
    // which returns false when the driver refuses it.
    bool launch_with(size_t function, CUfunction f, unsigned blocks, const LaunchGrid& grid,
                     void* const* args, const Options& options, const wf::InKernelResolve* resolve,
                     const wf::FusedSlots* slots, bool cooperative) const;
    // How many blocks of `block` threads of `f` (a resolving or fused entry) one multiprocessor
    // holds at once.
    int resident_blocks(CUfunction f, int64_t block) const;
    // Whether `blocks` blocks of `block` threads of `f` are all resident at once (one wave), as a
    // cooperative launch's grid barrier needs.
    bool one_wave(CUfunction f, int64_t blocks, int64_t block) const;

    // A module of entries compiled only when a launch needs one of them (the resolving or the
    // fused entries, codegen::Generated), and its functions once loaded.
    struct LazyEntries {
        std::mutex mutex;
        CUmodule module = nullptr;
        std::vector<CUfunction> functions;  // null where a function has none
    };
    // Function `function`'s entry among `symbols` (null: none), from `source`'s module, compiled
    // and loaded at the first call (reported on stderr with `verbose`, as `what`).
    CUfunction lazy_function(LazyEntries& lazy, const std::string& source,
                             const std::vector<std::string>& symbols, const char* what, size_t function,
                             bool verbose) const;

    int ordinal_ = 0;
    int arch_ = 0;
    std::vector<std::string> flags_;  // NVRTC's
    CUmodule module_ = nullptr;
    std::vector<CUfunction> functions_;
    mutable LazyEntries resolving_;
    mutable LazyEntries fused_;
    mutable std::mutex occupancy_mutex_;
    mutable std::vector<std::tuple<CUfunction, int, int>> occupancy_;  // (entry, block, resident blocks)
};

}  // namespace weft::runtime::cuda
