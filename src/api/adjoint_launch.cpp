// weft::launch_adjoint: a kernel's generated backward, launched with explicit gradient arrays.
#include "api/adjoint_launch.hpp"

#include <algorithm>
#include <string>

#include "api/launch_checks.hpp"
#include "api/module_state.hpp"
#include "api/prepared_launch.hpp"
#include "runtime/backend.hpp"
#include "runtime/graph_capture.hpp"
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

// "float32", or "float32 x 3" for an array of three-component elements.
std::string element_text(const AnyArray& a) {
    return std::string(dtype_name(a.dtype())) +
           (a.components() > 1 ? " x " + std::to_string(a.components()) : "");
}

}  // namespace

namespace detail {

PreparedAdjoint::PreparedAdjoint(const KernelState& kernel, const Dim& dim,
                                 const std::vector<LaunchArg>& args, const std::vector<AnyArray>& grads)
    : kernel_(kernel), dim_(dim) {
    threads_ = checked_threads(kernel, dim);
    target_ = checked_device(kernel, dim, args);
    refuse_retired(kernel, dim, args);
    const std::vector<std::string>& names = kernel.body->param_names;
    if (grads.size() != args.size())
        fail(kernel, dim,
             "takes one gradient entry per argument (" + std::to_string(args.size()) + "), got " +
                 std::to_string(grads.size()) + "; pass an empty weft::AnyArray() for arguments without one");
    // A launch none of whose arrays has a gradient has nothing to differentiate (even when its
    // kernel could not be: a compaction on the way, say).
    if (std::none_of(grads.begin(), grads.end(), [](const AnyArray& g) { return g.valid(); })) return;
    compiled_ = kernel.module->compile(target_, dim.loc, true);
    if (!compiled_->options.enable_backward)
        fail(kernel, dim,
             "module '" + kernel.module->name +
                 "' has enable_backward = false, so its kernels have no backward pass; set it to true");
    const plan::ProgramPlan& program = *compiled_->plan;
    const plan::KernelPlan& forward = *program.find(kernel.body->name);
    check_against_plan(kernel, dim, args, forward);
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
    plan_ = program.kernels[static_cast<size_t>(forward.adjoint)];
    args_ = args;
    names_ = names;
    for (uint32_t p : forward.differentiable) {
        const auto& array = std::get<AnyArray>(args[p]);
        const AnyArray& g = grads[p];
        const auto param = static_cast<uint32_t>(args_.size());
        names_.push_back("adj_" + names[p]);
        names_.push_back("has_adj_" + names[p]);
        if (g.valid()) {
            if (g.dtype() != array.dtype() || g.components() != array.components() ||
                !(g.shape() == array.shape()) || g.device() != array.device())
                fail(kernel, dim,
                     "the gradient of argument " + std::to_string(p) + " ('" + names[p] +
                         "') must be an array of " + element_text(array) + " of shape " +
                         shape_text(array.shape()) + " on " + array.device().name() + ", got one of " +
                         element_text(g) + " of shape " + shape_text(g.shape()) + " on " + g.device().name());
            args_.emplace_back(g);
            args_.emplace_back(scalar_arg(true));
            continue;
        }
        AnyArray inert(array.dtype(), array.components(), Shape(1), target_);
        inert.zero_();
        args_.emplace_back(inert.broadcast(array.shape()));
        args_.emplace_back(scalar_arg(false));
        std::erase_if(plan_.det_targets, [&](const plan::DetTarget& t) { return t.arg.param == param; });
        plan_.writes[param] = false;
    }
    runs_ = true;
}

void PreparedAdjoint::run() {
    if (!runs_) return;
    if (runtime::Capture* capture = hold_for_capture(target_, compiled_, args_)) {
        capture->bodies.back().push_back([adjoint = *this] { adjoint.launch(); });
        return;
    }
    launch();
}

void PreparedAdjoint::launch() const {
    runtime::LaunchRequest request;
    request.backend = &runtime::backend(target_);
    request.code = compiled_->code.get();
    request.kernel = &plan_;
    request.options = &compiled_->options;
    request.args = &args_;
    request.param_names = &names_;
    request.grid.ndim = dim_.ndim;
    for (int d = 0; d < 4; ++d) request.grid.dims[d] = dim_.dims[d];
    request.site = {kernel_.body->name, dim_.loc.file, dim_.loc.line, threads_};
    runtime::KernelLaunch launch(std::move(request));
    runtime::run(launch);
}

}  // namespace detail

void launch_adjoint(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                    const std::vector<AnyArray>& grads) {
    detail::PreparedAdjoint(kernel, dim, args, grads).run();
}

}  // namespace weft
