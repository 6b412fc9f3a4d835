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

class CudaModule final : public DeviceModule {
public:
    static std::shared_ptr<CudaModule> load(codegen::Generated generated, const plan::ProgramPlan& plan,
                                            const Options& options, int ordinal);
    ~CudaModule() override;
    CudaModule(const CudaModule&) = delete;
    CudaModule& operator=(const CudaModule&) = delete;

    // Queues the kernel on the thread's current stream and returns. With bounds checking or
    // debug on, waits for it and reports its errors at once.
    void launch(size_t function, const LaunchGrid& grid, void* const* args,
                const Options& options) const override;
    // A cooperative launch of the resolving entry, whose blocks resolve the deterministic sums
    // after a grid barrier: only where its grid is at most one wave of resident blocks.
    bool launch_resolving(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                          const wf::InKernelResolve& resolve) const override;
    // A cooperative launch of the fused slot entry (both passes, a grid barrier between them):
    // only launches without bounds checks or debug, on the grid the passes would have, where that
    // grid is at most one wave of resident blocks. (Into a capture only where captures take
    // cooperative launches: a refused one would invalidate the capture; the caller checks.)
    bool launch_fused(size_t function, const LaunchGrid& grid, void* const* args,
                      const Options& options) const override;

    // The raw function, for benchmarks that compare against a direct cuLaunchKernel.
    CUfunction function(size_t index) const { return functions_.at(index); }

private:
    CudaModule() = default;
    // Queues `f` (function `function`'s entry) on `blocks` blocks; `cooperative` (set with a
    // `resolve`, or for the fused entry) makes it a cooperative launch, which returns false when
    // the driver refuses it.
    bool launch_with(size_t function, CUfunction f, unsigned blocks, const LaunchGrid& grid,
                     void* const* args, const Options& options, const wf::InKernelResolve* resolve,
                     bool cooperative) const;
    // How many blocks of `block` threads of `f` (a resolving or fused entry) one multiprocessor
    // holds at once.
    int resident_blocks(CUfunction f, int64_t block) const;
    // Whether `blocks` blocks of `block` threads of `f` are all resident at once (one wave), as a
    // cooperative launch's grid barrier needs.
    bool one_wave(CUfunction f, int64_t blocks, int64_t block) const;

    // Function `function`'s resolving entry (null: none), its module compiled and loaded at the
    // first call.
    CUfunction resolving_function(size_t function) const;

    int ordinal_ = 0;
    int arch_ = 0;
    std::vector<std::string> flags_;  // NVRTC's
    CUmodule module_ = nullptr;
    std::vector<CUfunction> functions_;
    std::vector<CUfunction> fused_functions_;  // null where a function has none
    mutable std::mutex resolving_mutex_;
    mutable CUmodule resolving_module_ = nullptr;
    mutable std::vector<CUfunction> resolving_functions_;  // null where a function has none
    mutable std::mutex occupancy_mutex_;
    mutable std::vector<std::tuple<CUfunction, int, int>> occupancy_;  // (entry, block, resident blocks)
};

}  // namespace weft::runtime::cuda
