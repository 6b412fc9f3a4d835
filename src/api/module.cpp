// weft::Module: definitions, options, and the trace -> lower -> compile sequence.
#include "api/module_state.hpp"
#include "codegen/emit.hpp"
#include "frontend/tracer.hpp"
#include "ir/printer.hpp"
#include "transforms/pipeline.hpp"
#include "weft/error.hpp"

namespace weft {

namespace detail {

std::shared_ptr<const ir::Program> ModuleState::lower_locked() {
    if (!traced) traced = std::make_shared<const ir::Program>(frontend::trace_program(name, funcs, kernels));
    if (!lowered) lowered = std::make_shared<const ir::Program>(transforms::lower(*traced, options));
    return lowered;
}

std::shared_ptr<const CompiledModule> ModuleState::compile(Device device) {
    std::lock_guard lock(mutex);
    auto& slot = compiled[device.name()];
    if (!slot) {
        auto c = std::make_shared<CompiledModule>();
        c->program = lower_locked();
        c->options = options;
        c->code = runtime::load_module(*c->program, options, device);
        slot = std::move(c);
    }
    return slot;
}

const std::string& kernel_name(const KernelState& k) {
    return k.body->name;
}

Module kernel_module(const KernelState& k) {
    return Module(k.module);
}

}  // namespace detail

Module::Module(std::string name, const OptionsPatch& options, std::source_location s)
    : state_(std::make_shared<detail::ModuleState>()) {
    state_->name = std::move(name);
    state_->loc = detail::Loc::from(s);
    try {
        state_->options = apply(config(), options);
    } catch (const Error& e) {
        throw Error("module '" + state_->name + "': " + e.message(), "", state_->loc.file, state_->loc.line);
    }
}

const std::string& Module::name() const {
    return state_->name;
}

Options Module::options() const {
    std::lock_guard lock(state_->mutex);
    return state_->options;
}

void Module::set_options(const OptionsPatch& patch) {
    std::lock_guard lock(state_->mutex);
    state_->options = apply(state_->options, patch);
    state_->lowered.reset();
    state_->compiled.clear();
}

void Module::set_option(std::string_view name, const OptionValue& value) {
    std::lock_guard lock(state_->mutex);
    weft::set_option(state_->options, name, value);
    state_->lowered.reset();
    state_->compiled.clear();
}

std::shared_ptr<detail::KernelState> Module::add_kernel(std::shared_ptr<detail::TraceBody> body) {
    std::lock_guard lock(state_->mutex);
    state_->kernels.push_back(body);
    state_->traced.reset();
    state_->lowered.reset();
    state_->compiled.clear();
    return std::make_shared<detail::KernelState>(detail::KernelState{state_, std::move(body)});
}

void Module::add_func(std::shared_ptr<detail::TraceBody> body) {
    std::lock_guard lock(state_->mutex);
    state_->funcs.push_back(std::move(body));
    state_->traced.reset();
    state_->lowered.reset();
    state_->compiled.clear();
}

CompileReport Module::compile(Device device) const {
    const auto compiled = state_->compile(device);
    return {device.name(), compiled->code->loaded_from_cache(), compiled->code->load_milliseconds()};
}

std::string Module::ir() const {
    std::lock_guard lock(state_->mutex);
    return ir::print(*state_->lower_locked());
}

std::string Module::generated_source(Device device) const {
    std::shared_ptr<const ir::Program> program;
    bool bounds_check;
    {
        std::lock_guard lock(state_->mutex);
        program = state_->lower_locked();
        bounds_check = state_->options.bounds_check;
    }
    const auto dialect = device.is_cpu() ? codegen::Dialect::Cpu : codegen::Dialect::Cuda;
    return codegen::emit(*program, {.dialect = dialect, .bounds_check = bounds_check}).source;
}

}  // namespace weft
