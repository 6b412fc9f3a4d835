// weft::launch_adjoint: a kernel's generated backward, launched with explicit gradient arrays.
#include <string>

#include "api/launch_checks.hpp"
#include "api/module_state.hpp"
#include "runtime/backend.hpp"
#include "runtime/launch_steps.hpp"
#include "weft/error.hpp"
#include "weft/tape.hpp"

namespace weft {

namespace {

[[noreturn]] void fail(const detail::KernelState& kernel, const Dim& dim, const std::string& message) {
    throw Error("backward pass: " + message, kernel.body->name, dim.loc.file, dim.loc.line);
}

std::string shape_text(const Shape& s) {
    std::string t = "(";
    for (int d = 0; d < s.ndim; ++d) t += (d ? ", " : "") + std::to_string(s.dims[d]);
    return t + ")";
}

}  // namespace

void launch_adjoint(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                    const std::vector<AnyArray>& grads) {
    const int64_t threads = detail::checked_threads(kernel, dim);
    const Device target = detail::checked_device(kernel, dim, args);
    const std::vector<std::string>& names = kernel.body->param_names;
    if (grads.size() != args.size())
        fail(kernel, dim,
             "takes one gradient entry per argument (" + std::to_string(args.size()) + "), got " +
                 std::to_string(grads.size()) + "; pass an empty weft::AnyArray() for arguments without one");
    const auto compiled = kernel.module->compile(target, dim.loc, true);
    if (!compiled->options.enable_backward)
        fail(kernel, dim,
             "module '" + kernel.module->name +
                 "' has enable_backward = false, so its kernels have no backward pass; set it to true");
    const plan::ProgramPlan& program = *compiled->plan;
    const plan::KernelPlan& forward = *program.find(kernel.body->name);
    detail::check_against_plan(kernel, dim, args, forward);
    if (forward.no_adjoint)
        throw Error(forward.no_adjoint->message, kernel.body->name, forward.no_adjoint->file,
                    forward.no_adjoint->line);
    std::vector<bool> differentiable(args.size(), false);
    for (uint32_t p : forward.differentiable) differentiable[p] = true;
    for (size_t i = 0; i < grads.size(); ++i)
        if (grads[i].valid() && !differentiable[i])
            fail(kernel, dim,
                 "argument " + std::to_string(i) + " ('" + names[i] +
                     "') is not a float array and has no gradient; pass an empty weft::AnyArray() for it");
    if (forward.adjoint < 0) return;  // no float arrays: nothing to differentiate

    // The adjoint's arguments: the forward ones, then each float array's gradient and whether
    // it is given. A missing gradient is an inert one-element array (its reads are skipped and
    // its deterministic target is left out of the launch).
    plan::KernelPlan adjoint = program.kernels[static_cast<size_t>(forward.adjoint)];
    std::vector<LaunchArg> all = args;
    std::vector<std::string> all_names = names;
    for (uint32_t p : forward.differentiable) {
        const auto& array = std::get<AnyArray>(args[p]);
        const AnyArray& g = grads[p];
        const auto param = static_cast<uint32_t>(all.size());
        all_names.push_back("adj_" + names[p]);
        all_names.push_back("has_adj_" + names[p]);
        if (g.valid()) {
            if (g.dtype() != array.dtype() || !(g.shape() == array.shape()) || g.device() != array.device())
                fail(kernel, dim,
                     "the gradient of argument " + std::to_string(p) + " ('" + names[p] +
                         "') must be an array of " + dtype_name(array.dtype()) + " of shape " +
                         shape_text(array.shape()) + " on " + array.device().name() + ", got one of " +
                         dtype_name(g.dtype()) + " of shape " + shape_text(g.shape()) + " on " +
                         g.device().name());
            all.emplace_back(g);
            all.emplace_back(scalar_arg(true));
            continue;
        }
        AnyArray inert(array.dtype(), Shape(1), target);
        inert.zero_();
        all.emplace_back(inert.broadcast(array.shape()));
        all.emplace_back(scalar_arg(false));
        std::erase_if(adjoint.det_targets, [&](const plan::DetTarget& t) { return t.arg.param == param; });
        adjoint.writes[param] = false;
    }

    runtime::LaunchRequest request;
    request.backend = &runtime::backend(target);
    request.code = compiled->code.get();
    request.kernel = &adjoint;
    request.options = &compiled->options;
    request.args = &all;
    request.param_names = &all_names;
    request.grid.ndim = dim.ndim;
    for (int d = 0; d < 4; ++d) request.grid.dims[d] = dim.dims[d];
    request.site = {kernel.body->name, dim.loc.file, dim.loc.line, threads};
    runtime::KernelLaunch launch(std::move(request));
    runtime::run(launch);
}

}  // namespace weft
