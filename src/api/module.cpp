// weft::Module: definitions, options, and the trace -> lower -> compile sequence.
#include <algorithm>

#include "api/module_state.hpp"
#include "base/text.hpp"
#include "codegen/emit.hpp"
#include "frontend/tracer.hpp"
#include "ir/printer.hpp"
#include "runtime/backend.hpp"
#include "transforms/pipeline.hpp"
#include "weft/error.hpp"

namespace weft {

namespace detail {

namespace {

thread_local std::vector<const ModuleState*> held_modules;  // the modules this thread has locked

// Kernel, function and parameter names become parts of C++ identifiers in generated code and
// name things in errors: letters, digits and _, not starting with a digit.
bool is_identifier(const std::string& name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// A module name is only text (messages, a comment in generated code), so any printable
// characters will do; control characters (a newline above all) are refused.
bool is_printable_text(const std::string& name) {
    return !name.empty() && std::none_of(name.begin(), name.end(), [](char c) {
        const auto b = static_cast<unsigned char>(c);
        return b < 0x20 || b == 0x7f;
    });
}

const char* const kIdentifierRule =
    "names are C++ identifiers (letters, digits and _, not starting with a digit)";

void check_definition_names(const TraceBody& body, bool is_kernel, const std::string& module) {
    const std::string what = is_kernel ? "kernel" : "function";
    auto fail = [&](const std::string& message) {
        throw Error("module '" + module + "': " + message, "", body.loc.file, body.loc.line);
    };
    if (!is_identifier(body.name))
        fail(what + " name " + base::c_string_literal(body.name) +
             " is not an identifier; kernel and function " + kIdentifierRule);
    const std::vector<std::string>& names = body.user_param_names;
    if (names.size() > body.user_param_count)
        fail(what + " '" + body.name + "' takes " + std::to_string(body.user_param_count) +
             " parameters but " + std::to_string(names.size()) + " parameter names were given");
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& p = names[i];
        if (!is_identifier(p))
            fail("parameter name " + base::c_string_literal(p) + " of " + what + " '" + body.name +
                 "' is not an identifier; parameter " + kIdentifierRule);
        for (size_t j = 0; j < i; ++j)
            if (names[j] == p)
                fail(what + " '" + body.name + "' has two parameters named '" + p +
                     "'; give each its own name");
    }
}

}  // namespace

StateLock::StateLock(ModuleState& state, const char* call, Loc loc) : state_(state) {
    if (held(state)) {
        if (loc.line == 0) loc = last_loc();
        throw Error("module '" + state.name + "': " + call +
                        " was called from inside a kernel or function lambda while the module traces it; "
                        "the module is busy until tracing ends, so call it outside the lambda",
                    frontend::traced_function_name(), loc.file, loc.line);
    }
    state.mutex.lock();
    try {
        held_modules.push_back(&state);
    } catch (...) {
        state.mutex.unlock();
        throw;
    }
}

StateLock::~StateLock() {
    held_modules.erase(std::find(held_modules.begin(), held_modules.end(), &state_));
    state_.mutex.unlock();
}

bool StateLock::held(const ModuleState& state) {
    return std::find(held_modules.begin(), held_modules.end(), &state) != held_modules.end();
}

std::shared_ptr<const transforms::Lowered> ModuleState::lower_locked() {
    if (!traced)
        traced =
            std::make_shared<const ir::Program>(frontend::trace_program(name, funcs, kernels, derivatives));
    if (!lowered)
        lowered = std::make_shared<const transforms::Lowered>(transforms::lower(*traced, options, adjoints));
    return lowered;
}

namespace {

codegen::Generated generate(const transforms::Lowered& lowered, const Options& options, Device device) {
    const codegen::Dialect dialect = runtime::backend(device).dialect();
    return codegen::emit(lowered.program, lowered.plan,
                         {.dialect = dialect, .bounds_check = options.bounds_check});
}

}  // namespace

std::shared_ptr<const CompiledModule> ModuleState::compile(Device device, Loc loc, bool with_adjoints) {
    StateLock lock(*this, "a launch of one of its kernels (or compile())", loc);
    if (with_adjoints && !adjoints) {
        adjoints = true;
        lowered.reset();
        compiled.clear();
    }
    auto& slot = compiled[device.name()];
    if (!slot) {
        auto c = std::make_shared<CompiledModule>();
        c->lowered = lower_locked();
        c->plan = &c->lowered->plan;
        c->options = options;
        c->code =
            runtime::backend(device).load_module(generate(*c->lowered, options, device), *c->plan, options);
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
    if (!detail::is_printable_text(state_->name))
        throw Error("module name " + base::c_string_literal(state_->name) +
                        (state_->name.empty() ? " is empty" : " holds a control character") +
                        "; a module name is text for messages, so give it printable characters only",
                    "", state_->loc.file, state_->loc.line);
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
    // A kernel lambda may read its module's options while it is traced (this thread holds the
    // lock then, so nothing changes them).
    if (detail::StateLock::held(*state_)) return state_->options;
    std::lock_guard lock(state_->mutex);
    return state_->options;
}

void Module::set_options(const OptionsPatch& patch, std::source_location s) {
    detail::StateLock lock(*state_, "set_options()");
    try {
        state_->options = apply(state_->options, patch, s);
    } catch (const Error& e) {
        throw Error("module '" + state_->name + "': " + e.message(), "", e.file(), e.line());
    }
    state_->lowered.reset();
    state_->compiled.clear();
}

void Module::set_option(std::string_view name, const OptionValue& value, std::source_location s) {
    detail::StateLock lock(*state_, "set_option()");
    try {
        weft::set_option(state_->options, name, value, s);
    } catch (const Error& e) {
        throw Error("module '" + state_->name + "': " + e.message(), "", e.file(), e.line());
    }
    state_->lowered.reset();
    state_->compiled.clear();
}

std::shared_ptr<detail::KernelState> Module::add_kernel(std::shared_ptr<detail::TraceBody> body) {
    detail::StateLock lock(*state_, "kernel()", body->loc);
    detail::check_definition_names(*body, true, state_->name);
    state_->kernels.push_back(body);
    state_->traced.reset();
    state_->lowered.reset();
    state_->compiled.clear();
    return std::make_shared<detail::KernelState>(detail::KernelState{state_, std::move(body)});
}

void Module::add_func(std::shared_ptr<detail::TraceBody> body) {
    detail::StateLock lock(*state_, "func()", body->loc);
    detail::check_definition_names(*body, false, state_->name);
    state_->funcs.push_back(std::move(body));
    state_->traced.reset();
    state_->lowered.reset();
    state_->compiled.clear();
}

void Module::add_derivative(const std::shared_ptr<const detail::TraceBody>& of,
                            std::shared_ptr<detail::TraceBody> body, bool replay) {
    detail::StateLock lock(*state_, replay ? "func_replay()" : "func_grad()", body->loc);
    auto fail = [&](const std::string& message) {
        throw Error("module '" + state_->name + "': " + message, "", body->loc.file, body->loc.line);
    };
    const std::string what = replay ? "custom replay" : "custom adjoint";
    if (std::find(state_->funcs.begin(), state_->funcs.end(), of) == state_->funcs.end())
        fail("the " + what + " is for function '" + of->name + "', which belongs to another module");
    if (of->composite_result > 0)
        fail("function '" + of->name +
             "' returns a composite, so it is inlined at each call and has no function boundary for a " +
             what + "; return its components through an array parameter instead");
    std::vector<detail::ParamSpec> expected = of->params;
    if (!replay && of->has_return) expected.push_back(of->ret);
    auto same = [](const detail::ParamSpec& a, const detail::ParamSpec& b) {
        return a.is_array == b.is_array && a.dtype == b.dtype && a.ndim == b.ndim;
    };
    const bool fits =
        body->params.size() == expected.size() &&
        std::equal(expected.begin(), expected.end(), body->params.begin(), same) &&
        (!replay || (body->has_return == of->has_return && (!of->has_return || same(body->ret, of->ret))));
    if (!fits)
        fail("the " + what + " of function '" + of->name + "' must take " +
             (replay ? "the function's parameters and return what it returns"
                     : "the function's parameters, then the adjoint of its result if it returns one, and "
                       "return nothing"));
    if (!replay && body->has_return)
        fail("the custom adjoint of function '" + of->name + "' must return nothing");
    for (const auto& d : state_->derivatives)
        if (d.function == of && d.replay == replay) fail("function '" + of->name + "' already has a " + what);
    body->param_names = of->param_names;
    if (!replay && of->has_return) body->param_names.push_back("adj_ret");
    state_->derivatives.push_back({of, std::move(body), replay});
    state_->traced.reset();
    state_->lowered.reset();
    state_->compiled.clear();
}

CompileReport Module::compile(Device device) const {
    const auto compiled = state_->compile(device);
    return {device.name(), compiled->code->loaded_from_cache(), compiled->code->load_milliseconds()};
}

std::string Module::ir() const {
    detail::StateLock lock(*state_, "ir()");
    return ir::print(state_->lower_locked()->program);
}

std::string Module::generated_source(Device device) const {
    std::shared_ptr<const transforms::Lowered> lowered;
    Options options;
    {
        detail::StateLock lock(*state_, "generated_source()");
        lowered = state_->lower_locked();
        options = state_->options;
    }
    return detail::generate(*lowered, options, device).source;
}

}  // namespace weft
