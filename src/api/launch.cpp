// weft::launch: run-time argument checks, then the device's launch; undone on a fault.
#include "weft/launch.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "api/module_state.hpp"
#include "device/abi.h"
#include "runtime/backend.hpp"
#include "runtime/det/accumulation.hpp"
#include "runtime/det/slots.hpp"
#include "runtime/det/target_locks.hpp"
#include "weft/error.hpp"

namespace weft {

namespace {

constexpr int64_t kMaxThreads = (int64_t{1} << 31) - 1;

std::string describe(const detail::ParamSpec& p) {
    if (!p.is_array) return std::string("a ") + dtype_name(p.dtype) + " scalar";
    return std::string("a ") + std::to_string(p.ndim) + "-D array of " + dtype_name(p.dtype);
}

std::string describe(const LaunchArg& a) {
    if (const auto* s = std::get_if<ScalarArg>(&a))
        return std::string("a ") + dtype_name(s->dtype) + " scalar";
    const auto& arr = std::get<AnyArray>(a);
    return std::string("a ") + std::to_string(arr.ndim()) + "-D array of " + dtype_name(arr.dtype());
}

// A copy of the arrays a launch may write, put back if the launch faults. A broadcast view is
// copied once per element it reaches, not once per index.
class Snapshot {
public:
    void add(const AnyArray& a) {
        const AnyArray reached = detail::without_broadcast(a);
        saved_.push_back({reached, reached.to(reached.device())});
    }
    void restore() {
        for (auto& [array, copy] : saved_) weft::copy(array, copy);
    }

private:
    std::vector<std::pair<AnyArray, AnyArray>> saved_;
};

}  // namespace

namespace detail {

std::string floating_text(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

void reject_scalar(const KernelState& kernel, const Dim& dim, size_t index, const std::string& value) {
    const TraceBody& body = *kernel.body;
    const DType dtype = body.params.at(index).dtype;
    const char* const name = dtype_name(dtype);
    std::string holds;
    switch (dtype) {
        case DType::Bool: holds = "false or true (0 or 1)"; break;
        case DType::Int32: holds = "whole numbers from -2147483648 to 2147483647"; break;
        case DType::UInt32: holds = "whole numbers from 0 to 4294967295"; break;
        case DType::Int64: holds = "whole numbers from -9223372036854775808 to 9223372036854775807"; break;
        case DType::UInt64: holds = "whole numbers from 0 to 18446744073709551615"; break;
        default:
            holds = std::string("finite values up to ") +
                    (dtype == DType::Float32 ? "3.40282347e+38" : "1.7976931348623157e+308") +
                    " in magnitude";
    }
    throw Error("argument " + std::to_string(index) + " ('" + body.param_names.at(index) + "') is " + value +
                    ", which its " + name + " parameter cannot hold (" + name + " holds " + holds +
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

void launch(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args) {
    const detail::TraceBody& body = *kernel.body;
    auto fail = [&](const std::string& message) -> void {
        throw Error(message, body.name, dim.loc.file, dim.loc.line);
    };

    if (dim.ndim < 1 || dim.ndim > 4) fail("a launch has 1 to 4 dimensions, got " + std::to_string(dim.ndim));
    int64_t total = 1;
    for (int d = 0; d < dim.ndim; ++d) {
        if (dim.dims[d] <= 0)
            fail("launch dimension " + std::to_string(d) + " is " + std::to_string(dim.dims[d]) +
                 "; every dimension must be at least 1 (skip the launch when there is no work)");
        if (dim.dims[d] > kMaxThreads || total * dim.dims[d] > kMaxThreads)
            fail("the launch has more than 2^31 - 1 threads; split it into several launches");
        total *= dim.dims[d];
    }

    if (args.size() != body.params.size())
        fail("takes " + std::to_string(body.params.size()) + " arguments, got " +
             std::to_string(args.size()));
    std::optional<Device> device;
    for (size_t i = 0; i < args.size(); ++i) {
        const detail::ParamSpec& p = body.params[i];
        const std::string which = "argument " + std::to_string(i) + " ('" + body.param_names[i] + "')";
        const auto* arr = std::get_if<AnyArray>(&args[i]);
        const bool fits = arr ? (p.is_array && arr->dtype() == p.dtype && arr->ndim() == p.ndim)
                              : (!p.is_array && std::get<ScalarArg>(args[i]).dtype == p.dtype);
        if (!fits) fail(which + " must be " + describe(p) + ", got " + describe(args[i]));
        if (!arr) continue;
        if (!arr->valid()) fail(which + " is an empty (default-constructed) array");
        if (device && *device != arr->device())
            fail(which + " is on " + arr->device().name() + " but earlier arrays are on " + device->name() +
                 "; copy the arrays to one device");
        device = arr->device();
    }

    const Device target = device.value_or(default_device());
    const auto compiled = kernel.module->compile(target, dim.loc);
    const plan::KernelPlan& fn = *compiled->plan->find(body.name);
    const uint32_t index = fn.variants.forward;
    if (fn.tid_ndim != 0 && fn.tid_ndim != dim.ndim)
        fail("the kernel uses " +
             std::string(fn.tid_ndim == 1 ? "tid()" : "tid<" + std::to_string(fn.tid_ndim) + ">()") +
             " but is launched with " + std::to_string(dim.ndim) + " dimensions; launch it with " +
             std::to_string(fn.tid_ndim));
    // shape() is an int32, so an extent the kernel reads with it must fit one.
    for (size_t i = 0; i < args.size(); ++i)
        if (const auto* arr = std::get_if<AnyArray>(&args[i]))
            for (int d = 0; d < arr->ndim(); ++d)
                if ((fn.shape_reads[i] >> d & 1) && arr->shape()[d] > INT32_MAX)
                    fail("argument " + std::to_string(i) + " ('" + body.param_names[i] + "') has extent " +
                         std::to_string(arr->shape()[d]) + " in dimension " + std::to_string(d) +
                         ", but the kernel reads it with shape(), an int32 (at most 2^31 - 1); pass the "
                         "extent as an Int64 argument instead, or split the array into smaller views");

    std::vector<wf::ArrayDescriptor> arrays(args.size());
    std::vector<ScalarArg> scalars(args.size());
    std::vector<void*> pointers(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
        if (const auto* arr = std::get_if<AnyArray>(&args[i])) {
            wf::ArrayDescriptor& d = arrays[i];
            d.data = static_cast<char*>(arr->data());
            for (int k = 0; k < 4; ++k) {
                d.shape[k] = k < arr->ndim() ? arr->shape()[k] : 1;
                d.strides[k] = k < arr->ndim() ? arr->stride(k) : 0;
            }
            pointers[i] = &d;
        } else {
            scalars[i] = std::get<ScalarArg>(args[i]);
            pointers[i] = &scalars[i].bits;  // little-endian: the value's bytes come first
        }
    }

    runtime::det::LaunchSite site{body.name, dim.loc.file, dim.loc.line, total};
    const Options& options = compiled->options;
    // Deterministic targets get fresh accumulation state, resolved into them after the kernel;
    // slot-allocation counters get reservation state, and the counting pass runs first.
    std::vector<runtime::det::TargetPlan> target_plans;
    std::vector<const AnyArray*> locked;  // targets and counters
    if (!fn.det_targets.empty()) {
        std::vector<const AnyArray*> targets;
        std::vector<std::string> names;
        for (const plan::DetTarget& t : fn.det_targets) {
            targets.push_back(&std::get<AnyArray>(args[t.arg.param]));
            names.push_back(body.param_names[t.arg.param]);
        }
        target_plans = runtime::det::plan(fn.det_targets, targets, names, options, site);
        locked = targets;
    }
    std::optional<runtime::det::SlotPlan> slot_plan;
    if (fn.variants.counting >= 0) {
        std::vector<const AnyArray*> counters;
        std::vector<std::string> names;
        for (const plan::SlotTarget& t : fn.slots.counters) {
            counters.push_back(&std::get<AnyArray>(args[t.arg.param]));
            names.push_back(body.param_names[t.arg.param]);
        }
        slot_plan = runtime::det::plan_slots(fn.slots, counters, names, options, site);
        locked.insert(locked.end(), counters.begin(), counters.end());
    }
    // Launches from several host threads into the same targets or counters run one at a time.
    std::optional<runtime::det::TargetLocks> locks;
    if (!locked.empty()) locks.emplace(locked);

    // A launch that can fail after it has written is undone from a snapshot (docs/design/0006):
    // with bounds_check, and when a records overflow or a slot divergence is possible and is
    // found at the launch (always on the CPU; on a GPU with deterministic_debug, and a
    // divergence on the several-element slot path, which synchronizes). A GPU finds the others
    // after the launch has returned; their errors say what stays applied.
    const runtime::Backend& backend = runtime::backend(target);
    const bool found_at_launch = backend.finds_failures_at_launch() || options.deterministic_debug;
    const bool may_overflow = std::any_of(target_plans.begin(), target_plans.end(), [](const auto& p) {
        return p.records && (p.target.dynamic || p.per_thread < p.target.records_per_thread);
    });
    const bool may_diverge = slot_plan && fn.slots.reservations_may_diverge;
    const bool diverges_late = may_diverge && slot_plan->single_element && !found_at_launch;
    const bool undo = options.bounds_check || (found_at_launch && (may_overflow || may_diverge)) ||
                      (may_diverge && !diverges_late);
    auto written_names = [&] {
        std::vector<std::string> names;
        for (size_t i = 0; i < args.size(); ++i)
            if (fn.writes[i]) names.push_back(body.param_names[i]);
        return names;
    };
    Snapshot snapshot;
    if (undo) {
        for (size_t i = 0; i < args.size(); ++i)
            if (fn.writes[i]) snapshot.add(std::get<AnyArray>(args[i]));
        // Errors of earlier launches surface now, not as this launch's failure.
        if (options.deterministic_debug) backend.synchronize();
    }
    // (A carrying sum that leaves the exact range is not undone: it takes some 2^42 of the
    // largest contributions, too rare to copy every written array of every such launch for.)
    const bool may_leave_range =
        std::any_of(target_plans.begin(), target_plans.end(), [](const auto& p) { return p.carrying; });
    if (!found_at_launch && (may_overflow || diverges_late || may_leave_range))
        site.written = written_names();

    std::unique_ptr<runtime::det::Accumulation> accumulation;
    if (!target_plans.empty()) {
        accumulation = backend.accumulation(std::move(target_plans), site);
        for (size_t i = 0; i < fn.det_targets.size(); ++i)
            arrays[fn.det_targets[i].arg.param].det = static_cast<wf::DetTarget*>(accumulation->state(i));
    }
    std::unique_ptr<runtime::det::SlotAllocation> slots;
    if (slot_plan) {
        slots = backend.slot_allocation(std::move(*slot_plan), site);
        for (size_t i = 0; i < fn.slots.counters.size(); ++i)
            arrays[fn.slots.counters[i].arg.param].det = static_cast<wf::DetTarget*>(slots->counter(i));
    }

    runtime::LaunchGrid grid;
    grid.ndim = dim.ndim;
    for (int d = 0; d < 4; ++d) grid.dims[d] = dim.dims[d];
    try {
        if (slots) {
            compiled->code->launch(static_cast<size_t>(fn.variants.counting), grid, pointers.data(), options);
            slots->assign_slots();
        }
        compiled->code->launch(static_cast<size_t>(index), grid, pointers.data(), options);
    } catch (const Error&) {
        snapshot.restore();
        throw;
    }
    // Found after the kernel ran: a records overflow or a slot divergence.
    try {
        if (slots) slots->finish();
        if (accumulation) accumulation->resolve();
        if ((slots || accumulation) && options.deterministic_debug) backend.synchronize();
    } catch (const Error& e) {
        std::string what = ". The launch was undone: every array it writes holds its value from before it";
        if (undo) {
            snapshot.restore();
        } else {
            std::string names;
            for (const std::string& n : written_names()) names += (names.empty() ? "'" : ", '") + n + "'";
            what = ". The launch was not undone: of the arrays it writes (" + names +
                   "), only those named above keep their values from before it";
        }
        throw Error(e.message() + what, e.kernel(), e.file(), e.line());
    }
}

}  // namespace weft
