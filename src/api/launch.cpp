// weft::launch: run-time argument checks, then the launch's steps (runtime/launch_steps.hpp).
#include "weft/launch.hpp"

#include <cstdio>
#include <optional>

#include "api/launch_checks.hpp"
#include "api/module_state.hpp"
#include "api/prepared_launch.hpp"
#include "base/text.hpp"
#include "runtime/backend.hpp"
#include "runtime/graph_capture.hpp"
#include "runtime/launch_steps.hpp"
#include "weft/error.hpp"
#include "weft/tape.hpp"

namespace weft {

namespace detail {

namespace {

constexpr int64_t kMaxThreads = (int64_t{1} << 31) - 1;

// "float32", or "3 float32 components per element" for a composite element (a vec3).
std::string element_text(DType dtype, int components) {
    if (components == 1) return dtype_name(dtype);
    return std::to_string(components) + " " + dtype_name(dtype) + " components per element";
}

std::string describe(const detail::ParamSpec& p) {
    if (!p.is_array) return base::with_article(dtype_name(p.dtype)) + " scalar";
    return std::string("a ") + std::to_string(p.ndim) + "-D array of " + element_text(p.dtype, p.components);
}

std::string describe(const LaunchArg& a) {
    if (const auto* s = std::get_if<ScalarArg>(&a))
        return base::with_article(dtype_name(s->dtype)) + " scalar";
    const auto& arr = std::get<AnyArray>(a);
    return std::string("a ") + std::to_string(arr.ndim()) + "-D array of " +
           element_text(arr.dtype(), arr.components());
}

[[noreturn]] void fail(const detail::KernelState& kernel, const Dim& dim, const std::string& message) {
    throw Error(message, kernel.body->name, dim.loc.file, dim.loc.line);
}

}  // namespace

// The launch's thread count, after checking its dimensions.
int64_t checked_threads(const detail::KernelState& kernel, const Dim& dim) {
    if (dim.ndim < 1 || dim.ndim > 4)
        fail(kernel, dim, "a launch has 1 to 4 dimensions, got " + std::to_string(dim.ndim));
    int64_t total = 1;
    for (int d = 0; d < dim.ndim; ++d) {
        if (dim.dims[d] <= 0)
            fail(kernel, dim,
                 "launch dimension " + std::to_string(d) + " is " + std::to_string(dim.dims[d]) +
                     "; every dimension must be at least 1 (skip the launch when there is no work)");
        if (dim.dims[d] > kMaxThreads || total * dim.dims[d] > kMaxThreads)
            fail(kernel, dim, "the launch has more than 2^31 - 1 threads; split it into several launches");
        total *= dim.dims[d];
    }
    return total;
}

void refuse_retired(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args) {
    for (size_t i = 0; i < args.size(); ++i)
        if (const auto* arr = std::get_if<AnyArray>(&args[i]))
            if (const char* why = detail::retired(*arr))
                fail(kernel, dim,
                     "argument " + std::to_string(i) + " ('" + kernel.body->param_names[i] + "') " + why);
}

// The device the launch runs on (its arrays', else the default), after checking each argument
// against its parameter.
Device checked_device(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args) {
    const detail::TraceBody& body = *kernel.body;
    if (args.size() != body.params.size())
        fail(
            kernel, dim,
            "takes " + std::to_string(body.params.size()) + " arguments, got " + std::to_string(args.size()));
    std::optional<Device> device;
    for (size_t i = 0; i < args.size(); ++i) {
        const detail::ParamSpec& p = body.params[i];
        const auto which = [&] {
            return "argument " + std::to_string(i) + " ('" + body.param_names[i] + "')";
        };
        const auto* arr = std::get_if<AnyArray>(&args[i]);
        const bool fits = arr ? (p.is_array && arr->dtype() == p.dtype && arr->ndim() == p.ndim &&
                                 arr->components() == p.components)
                              : (!p.is_array && std::get<ScalarArg>(args[i]).dtype == p.dtype);
        if (!fits) fail(kernel, dim, which() + " must be " + describe(p) + ", got " + describe(args[i]));
        if (!arr) continue;
        if (!arr->valid()) fail(kernel, dim, which() + " is an empty (default-constructed) array");
        if (device && *device != arr->device())
            fail(kernel, dim,
                 which() + " is on " + arr->device().name() + " but earlier arrays are on " + device->name() +
                     "; copy the arrays to one device");
        device = arr->device();
    }
    return device ? *device : default_device();  // (the default is looked up only when needed)
}

// What the compiled kernel requires of the launch: tid()'s dimensionality, and extents that
// shape() reads fitting an int32.
void check_against_plan(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                        const plan::KernelPlan& plan) {
    if (plan.tid_ndim != 0 && plan.tid_ndim != dim.ndim)
        fail(kernel, dim,
             "the kernel uses " +
                 std::string(plan.tid_ndim == 1 ? "tid()" : "tid<" + std::to_string(plan.tid_ndim) + ">()") +
                 " but is launched with " + std::to_string(dim.ndim) + " dimensions; launch it with " +
                 std::to_string(plan.tid_ndim));
    for (size_t i = 0; i < args.size(); ++i)
        if (const auto* arr = std::get_if<AnyArray>(&args[i]))
            for (int d = 0; d < arr->ndim(); ++d)
                if ((plan.shape_reads[i] >> d & 1) && arr->shape()[d] > INT32_MAX)
                    fail(kernel, dim,
                         "argument " + std::to_string(i) + " ('" + kernel.body->param_names[i] +
                             "') has extent " + std::to_string(arr->shape()[d]) + " in dimension " +
                             std::to_string(d) +
                             ", but the kernel reads it with shape(), an int32 (at most 2^31 - 1); pass the "
                             "extent as an Int64 argument instead, or split the array into smaller views");
}

std::string floating_text(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

std::string holds_text(DType dtype) {
    switch (dtype) {
        case DType::Bool: return "false or true (0 or 1)";
        case DType::Int32: return "whole numbers from -2147483648 to 2147483647";
        case DType::UInt32: return "whole numbers from 0 to 4294967295";
        case DType::Int64: return "whole numbers from -9223372036854775808 to 9223372036854775807";
        case DType::UInt64: return "whole numbers from 0 to 18446744073709551615";
        case DType::Float16: return "finite values up to 65504 in magnitude";
        case DType::BFloat16: return "finite values up to 3.38953139e+38 in magnitude";
        case DType::Float32: return "finite values up to 3.40282347e+38 in magnitude";
        case DType::Float64: return "finite values up to 1.7976931348623157e+308 in magnitude";
    }
    return "";
}

void reject_scalar(const KernelState& kernel, const Dim& dim, size_t index, const std::string& value) {
    const TraceBody& body = *kernel.body;
    const DType dtype = body.params.at(index).dtype;
    const char* const name = dtype_name(dtype);
    throw Error("argument " + std::to_string(index) + " ('" + body.param_names.at(index) + "') is " + value +
                    ", which its " + name + " parameter cannot hold (" + name + " holds " +
                    holds_text(dtype) +
                    "); pass a value in that range, or declare the parameter with a type that holds it",
                body.name, dim.loc.file, dim.loc.line);
}

}  // namespace detail

Dim::Dim(int64_t n, std::source_location s) : ndim(1), dims{n, 1, 1, 1}, loc(detail::Loc::from(s)) {}

Dim::Dim(std::initializer_list<int64_t> extents, std::source_location s)
    : ndim(static_cast<int>(extents.size())), loc(detail::Loc::from(s)) {
    int d = 0;
    for (int64_t e : extents) {
        if (d < 4) dims[d] = e;
        ++d;
    }
}

namespace detail {

CheckedLaunch check_launch(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args) {
    CheckedLaunch c;
    c.threads = checked_threads(kernel, dim);
    c.target = checked_device(kernel, dim, args);
    c.compiled = kernel.module->compile(c.target, dim.loc);
    c.plan = c.compiled->plan->find(kernel.body->name);
    check_against_plan(kernel, dim, args, *c.plan);
    return c;
}

PreparedLaunch prepare_launch(const KernelState& kernel, const Dim& dim, std::vector<LaunchArg> args) {
    CheckedLaunch checked = check_launch(kernel, dim, args);
    return {kernel, dim, std::move(args), std::move(checked)};
}

void recheck_launch(PreparedLaunch& p) {
    const int64_t threads = checked_threads(p.kernel, p.dim);
    const Device device = checked_device(p.kernel, p.dim, p.args);
    if (device != p.checked.target)
        fail(p.kernel, p.dim,
             "the launch was recorded for " + p.checked.target.name() + " but its arguments are now on " +
                 device.name() + "; record a launch for each device");
    check_against_plan(p.kernel, p.dim, p.args, *p.checked.plan);
    p.checked.threads = threads;
}

runtime::Capture* hold_for_capture(Device target, const std::shared_ptr<const CompiledModule>& compiled,
                                   const std::vector<LaunchArg>& args) {
    runtime::Capture* capture = runtime::active_capture(target);
    if (!capture) return nullptr;
    capture->keep.push_back(compiled);
    for (const LaunchArg& a : args)
        if (const auto* arr = std::get_if<AnyArray>(&a))
            capture->keep.push_back(std::make_shared<AnyArray>(*arr));
    return capture->records_operations ? capture : nullptr;
}

void issue(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
           const CheckedLaunch& checked) {
    refuse_retired(kernel, dim, args);  // (here: a recorded launch and a CPU graph's replay come too)
    // (Counted before it runs: a launch that fails part way may have written.)
    for (size_t i = 0; i < args.size(); ++i)
        if (checked.plan->writes[i]) bump_version(std::get<AnyArray>(args[i]));
    if (runtime::Capture* capture = hold_for_capture(checked.target, checked.compiled, args)) {
        capture->bodies.back().push_back([p = PreparedLaunch{kernel, dim, args, checked}] { issue(p); });
        return;
    }
    runtime::LaunchRequest request;
    request.backend = &runtime::backend(checked.target);
    request.code = checked.compiled->code.get();
    request.kernel = checked.plan;
    request.options = &checked.compiled->options;
    request.args = &args;
    request.param_names = &kernel.body->param_names;
    request.grid.ndim = dim.ndim;
    for (int d = 0; d < 4; ++d) request.grid.dims[d] = dim.dims[d];
    request.site = {kernel.body->name, dim.loc.file, dim.loc.line, checked.threads};
    runtime::KernelLaunch launch(std::move(request));
    runtime::run(launch);  // plan, prepare, (count, assign,) execute, resolve
}

}  // namespace detail

void launch(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args) {
    const detail::CheckedLaunch checked = detail::check_launch(kernel, dim, args);
    if (!checked.compiled->options.enable_backward) return detail::issue(kernel, dim, args, checked);
    const std::vector<uint64_t> versions = detail::tape_ready(args, checked.plan->writes);
    detail::issue(kernel, dim, args, checked);
    detail::tape_record(kernel, dim, args, checked.plan->writes, versions);
}

}  // namespace weft
