// A module compiled and loaded for one device; the interface the launch path uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/generated.hpp"
#include "plan/plan.hpp"
#include "weft/device.hpp"
#include "weft/options.hpp"

namespace weft::runtime {

struct LaunchGrid {
    int ndim = 1;
    int64_t dims[4] = {1, 1, 1, 1};
    int64_t total() const;
};

// Mirrors wf::Error in the prelude: the first fault a launch reports.
struct FaultRecord {
    int32_t code;
    int32_t site;
    int32_t dim;
    int32_t pad;
    int64_t index;
    int64_t extent;
};

// Mirrors wf::Launch in the prelude.
struct LaunchRecord {
    int64_t dims[4];
    int64_t total;
    int32_t ndim;
    int32_t pad;
    FaultRecord* error;
};

class DeviceModule {
public:
    virtual ~DeviceModule() = default;
    // Runs (CPU) or queues (GPU) kernel `function` over `grid`. `args` point at each argument's
    // value: an array descriptor or a scalar. A fault the kernel reports (an index out of
    // bounds, with bounds checking on) is thrown as weft::Error.
    virtual void launch(size_t function, const LaunchGrid& grid, void* const* args,
                        const Options& options) const = 0;

    const codegen::Generated& generated() const { return generated_; }
    bool loaded_from_cache() const { return from_cache_; }
    // How long generating the code and compiling or loading it took.
    double load_milliseconds() const { return load_ms_; }

protected:
    // Takes the module's name and the names users know its functions by from `plan`, and the
    // generated code.
    void adopt(codegen::Generated generated, const plan::ProgramPlan& plan);
    LaunchRecord launch_record(const LaunchGrid& grid, FaultRecord* fault) const;
    // The weft::Error for `fault`, raised by kernel `function`.
    [[noreturn]] void throw_fault(size_t function, const FaultRecord& fault) const;
    // Records the load time `ms`, and prints the "compiled" / "loaded from cache" line when
    // options.verbose is set.
    void report(const Options& options, const char* device, double ms);

    std::string module_name_;
    std::vector<std::string> function_names_;  // per function of the program, as users know them
    codegen::Generated generated_;
    bool from_cache_ = false;
    double load_ms_ = 0;
};

// Compiles `generated` (the code of a program planned by `plan`) for `device`, or loads it from
// the disk cache.
std::shared_ptr<DeviceModule> load_module(codegen::Generated generated, const plan::ProgramPlan& plan,
                                          const Options& options, Device device);

}  // namespace weft::runtime
