// A module compiled and loaded for one device; the interface the launch path uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/generated.hpp"
#include "device/abi.h"
#include "plan/plan.hpp"
#include "weft/device.hpp"
#include "weft/options.hpp"

namespace weft::runtime {

struct LaunchGrid {
    int ndim = 1;
    int64_t dims[4] = {1, 1, 1, 1};
    int64_t total() const;
};

// The first fault a launch reports, and the record every kernel entry receives (device/abi.h).
using FaultRecord = wf::Error;
using LaunchRecord = wf::Launch;

class DeviceModule : public std::enable_shared_from_this<DeviceModule> {
public:
    virtual ~DeviceModule() = default;
    // Runs (CPU) or queues (GPU) kernel `function` over `grid`. `args` point at each argument's
    // value: an array descriptor or a scalar. A fault the kernel reports (an index out of
    // bounds, with bounds checking on) is thrown as weft::Error. `exclusive_atomics`: no other
    // launch updates the targets of the kernel's plain atomics while this one runs
    // (det::LaunchLocks), so that a CPU launch that runs as one chunk may update them without
    // atomic instructions.
    virtual void launch(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                        bool exclusive_atomics) const = 0;
    // As launch(), with the kernel resolving its deterministic sums as `resolve` says
    // (wf::InKernelResolve); returns false, having queued nothing, where it cannot (the CPU, an
    // entry without the resolve, a GPU that refuses a cooperative launch of the kernel).
    virtual bool launch_resolving(size_t function, const LaunchGrid& grid, void* const* args,
                                  const Options& options, const wf::InKernelResolve& resolve) const {
        (void)function, (void)grid, (void)args, (void)options, (void)resolve;
        return false;
    }
    // Runs a slot-allocating kernel's counting and execution passes (`function`: the execution
    // pass) as one kernel on the state `slots`; returns false, having queued nothing, where it
    // cannot (the CPU, an entry without the fused twin, a grid larger than one wave, a refused
    // cooperative launch).
    virtual bool launch_fused(size_t function, const LaunchGrid& grid, void* const* args,
                              const Options& options, const wf::FusedSlots& slots) const {
        (void)function, (void)grid, (void)args, (void)options, (void)slots;
        return false;
    }

    const codegen::Generated& generated() const { return generated_; }
    bool loaded_from_cache() const { return from_cache_; }
    // How long generating the code and compiling or loading it took.
    double load_milliseconds() const { return load_ms_; }

protected:
    // Takes the module's name and the names users know its functions by from `plan`, and the
    // generated code.
    void adopt(codegen::Generated generated, const plan::ProgramPlan& plan);
    LaunchRecord launch_record(const LaunchGrid& grid, FaultRecord* fault) const;
    // The weft::Error for `fault`, raised by kernel `function`: in a launch that was undone, or
    // (`undone` false) in work replayed from a captured graph, whose writes stay applied.
    [[noreturn]] void throw_fault(size_t function, const FaultRecord& fault, bool undone = true) const;
    // Records the load time `ms`, and prints the "compiled" / "loaded from cache" line when
    // options.verbose is set.
    void report(const Options& options, const char* device, double ms);

    std::string module_name_;
    std::vector<std::string> function_names_;  // per function of the program, as users know them
    codegen::Generated generated_;
    bool from_cache_ = false;
    double load_ms_ = 0;
};

}  // namespace weft::runtime
