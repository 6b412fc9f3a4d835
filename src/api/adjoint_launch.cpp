// weft::launch_adjoint: a kernel's generated backward, launched with explicit gradient arrays.
#include "api/adjoint_launch.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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
    // The checkpoints' scratch is this launch's alone, taken when it runs (a tape prepares every
    // launch before it runs any) and given back after it (a graph keeps it for its replays).
    const size_t own = args_.size();
    if (plan_.checkpoint_floats + plan_.checkpoint_ints > 0) add_checkpoints();
    if (runtime::Capture* capture = hold_for_capture(target_, compiled_, args_)) {
        capture->bodies.back().push_back([adjoint = *this] { adjoint.launch(); });
    } else {
        try {
            launch();
        } catch (...) {
            args_.resize(own);
            throw;
        }
    }
    args_.resize(own);
    names_.resize(own);
}

// The scratch of the loops' checkpoints (docs/design/0031): C checkpoints per level, as many as
// WEFT_ADJOINT_CHECKPOINT_MB (256 by default) of memory holds for every thread, from 1 to 4,096.
void PreparedAdjoint::add_checkpoints() {
    int64_t megabytes = 256;
    if (const char* env = std::getenv("WEFT_ADJOINT_CHECKPOINT_MB"); env && *env) {
        char* end = nullptr;
        errno = 0;
        megabytes = std::strtoll(env, &end, 10);
        if (errno != 0 || *end != '\0' || megabytes < 1 || megabytes > (int64_t{1} << 40))
            fail(kernel_, dim_,
                 "WEFT_ADJOINT_CHECKPOINT_MB is '" + std::string(env) +
                     "'; set it to the megabytes a backward launch may take for its loops' checkpoints "
                     "(a whole number from 1), or unset it for 256");
    }
    const int64_t floats = plan_.checkpoint_floats, ints = plan_.checkpoint_ints;
    // Both levels of every register of every thread, 8 bytes each, per checkpoint.
    const double per_checkpoint =
        2.0 * 8.0 * static_cast<double>(floats + ints) * static_cast<double>(threads_);
    const double fits = static_cast<double>(megabytes) * 1048576.0 / per_checkpoint;
    const int64_t per_level =
        fits >= kMaxCheckpoints ? kMaxCheckpoints : std::max<int64_t>(1, static_cast<int64_t>(fits));
    const auto scratch = [&](DType type, int64_t registers) {
        AnyArray a(type, Shape({std::max<int64_t>(1, 2 * per_level * registers), threads_}), target_);
        args_.emplace_back(a);
        plan_.writes[args_.size() - 1] = false;  // nothing to undo or lock: no one else sees it
    };
    scratch(DType::Float64, floats);
    scratch(DType::Int64, ints);
    args_.emplace_back(scalar_arg(per_level));
    for (const char* name : {"checkpoint_floats", "checkpoint_ints", "checkpoints"}) names_.push_back(name);
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
