// The state behind weft::Module and weft::Kernel handles, and its compile-once cache.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/written_arrays.hpp"
#include "ir/ir.hpp"
#include "runtime/device_module.hpp"
#include "weft/module.hpp"

namespace weft::detail {

// A module compiled for a device: the lowered IR it came from and the loaded code.
struct CompiledModule {
    std::shared_ptr<const ir::Program> program;
    std::shared_ptr<runtime::DeviceModule> code;
    Options options;

    // Per function, the array parameters it may write (analysis::written_array_params), worked
    // out at the first launch that needs them.
    const std::vector<std::vector<bool>>& written_params() const {
        std::call_once(written_once_, [this] { written_ = analysis::written_array_params(*program); });
        return written_;
    }

private:
    mutable std::once_flag written_once_;
    mutable std::vector<std::vector<bool>> written_;
};

struct ModuleState {
    std::string name;
    Loc loc;

    std::mutex mutex;  // guards everything below
    Options options;
    std::vector<std::shared_ptr<const TraceBody>> funcs;
    std::vector<std::shared_ptr<const TraceBody>> kernels;
    std::shared_ptr<const ir::Program> traced;   // dropped when definitions change
    std::shared_ptr<const ir::Program> lowered;  // dropped when definitions or options change
    // Per device; dropped when options or definitions change.
    std::map<std::string, std::shared_ptr<const CompiledModule>> compiled;

    // Traces and lowers (once), then compiles or loads from the cache (once per device and
    // options).
    std::shared_ptr<const CompiledModule> compile(Device device);
    std::shared_ptr<const ir::Program> lower_locked();
};

struct KernelState {
    std::shared_ptr<ModuleState> module;
    std::shared_ptr<const TraceBody> body;
};

}  // namespace weft::detail
