// The state behind weft::Module and weft::Kernel handles, and its compile-once cache.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "frontend/tracer.hpp"
#include "ir/ir.hpp"
#include "plan/plan.hpp"
#include "runtime/device_module.hpp"
#include "transforms/pipeline.hpp"
#include "weft/module.hpp"

namespace weft::detail {

// A module compiled for a device: the plan of the lowered program and the loaded code.
struct CompiledModule {
    std::shared_ptr<const transforms::Lowered> lowered;  // keeps `plan` alive
    const plan::ProgramPlan* plan = nullptr;
    std::shared_ptr<runtime::DeviceModule> code;
    Options options;
};

struct ModuleState {
    std::string name;
    Loc loc;

    std::mutex mutex;  // guards everything below
    Options options;
    std::vector<std::shared_ptr<const TraceBody>> funcs;
    std::vector<std::shared_ptr<const TraceBody>> kernels;
    std::vector<frontend::CustomDerivative> derivatives;  // custom adjoints and replays
    // Whether lowering generates adjoint kernels: set by the first backward launch of one of its
    // kernels, so modules that are never differentiated compile no adjoints.
    bool adjoints = false;
    std::shared_ptr<const ir::Program> traced;           // dropped when definitions change
    std::shared_ptr<const transforms::Lowered> lowered;  // dropped when definitions or options change
    // Per device; dropped when options or definitions change.
    std::map<std::string, std::shared_ptr<const CompiledModule>> compiled;

    // Traces and lowers (once), then compiles or loads from the cache (once per device and
    // options). `loc` is the caller's line (a launch's) for the error if a lambda of this
    // module, while traced, calls it.
    // With `adjoints`, the module (re)compiles with its kernels' adjoints if it has not yet.
    std::shared_ptr<const CompiledModule> compile(Device device, Loc loc = {}, bool adjoints = false);
    std::shared_ptr<const transforms::Lowered> lower_locked();
};

// Holds a module's mutex. Tracing runs the module's kernel and function lambdas under it, so a
// lambda that calls back into its own module (ir(), kernel(), a launch, ...) would lock it a
// second time and deadlock; that is a weft::Error naming `call`, the traced kernel and `loc`.
class StateLock {
public:
    StateLock(ModuleState& state, const char* call, Loc loc = {});
    ~StateLock();
    StateLock(const StateLock&) = delete;
    StateLock& operator=(const StateLock&) = delete;

    // Whether this thread holds `state`'s mutex (it is tracing that module).
    static bool held(const ModuleState& state);

private:
    ModuleState& state_;
};

struct KernelState {
    std::shared_ptr<ModuleState> module;
    std::shared_ptr<const TraceBody> body;
};

}  // namespace weft::detail
