// The steps of one launch: the deterministic protocol, its rollback snapshot and debug checks.
#include "runtime/launch_steps.hpp"

#include <algorithm>

#include "runtime/det/deferred.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

const char* step_name(Step step) {
    switch (step) {
        case Step::Plan: return "plan";
        case Step::Prepare: return "prepare";
        case Step::Count: return "count";
        case Step::Assign: return "assign";
        case Step::Execute: return "execute";
        case Step::Resolve: return "resolve";
    }
    return "?";
}

KernelLaunch::KernelLaunch(LaunchRequest request) : request_(std::move(request)) {
    const std::vector<LaunchArg>& args = *request_.args;
    arrays_.resize(args.size());
    scalars_.resize(args.size());
    pointers_.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
        if (const auto* arr = std::get_if<AnyArray>(&args[i])) {
            wf::ArrayDescriptor& d = arrays_[i];
            d.data = static_cast<char*>(arr->data());
            for (int k = 0; k < 4; ++k) {
                d.shape[k] = k < arr->ndim() ? arr->shape()[k] : 1;
                d.strides[k] = k < arr->ndim() ? arr->stride(k) : 0;
            }
            d.det = nullptr;
            pointers_[i] = &d;
        } else {
            scalars_[i] = std::get<ScalarArg>(args[i]);
            pointers_[i] = &scalars_[i].bits;  // little-endian: the value's bytes come first
        }
    }
    const bool counts = request_.kernel->variants.counting >= 0;
    deterministic_ = counts || !request_.kernel->det_targets.empty();
    for (Step s : {Step::Plan, Step::Prepare, Step::Count, Step::Assign, Step::Execute, Step::Resolve})
        if (counts || (s != Step::Count && s != Step::Assign)) steps_[step_count_++] = s;
}

bool KernelLaunch::stream_ordered(Step step) const {
    if (request_.backend->finds_failures_at_launch()) return true;
    const Options& options = *request_.options;
    const bool kernel_checked = options.bounds_check || options.debug;  // waits for the kernel
    switch (step) {
        case Step::Plan: return !(undo_ && options.deterministic_debug);
        case Step::Prepare: return true;
        case Step::Count:
        case Step::Execute: return !kernel_checked;
        case Step::Assign: return true;
        case Step::Resolve: return !(deterministic_ && options.deterministic_debug);
    }
    return false;
}

bool KernelLaunch::captured() const {
    if (!captured_) captured_ = request_.backend->capturing();
    return *captured_;
}

void KernelLaunch::check_capturable() const {
    for (Step step : steps()) {
        // A captured launch's kernels are checked at replay: their steps only queue work then.
        if (stream_ordered(step) || step == Step::Count || step == Step::Execute) continue;
        if (!captured()) return;  // a launch run directly may wait for the device
        const std::string why =
            "runs with the option deterministic_debug, which checks each deterministic launch "
            "on the host (it waits for the GPU). Capture it without that option";
        const det::LaunchSite& site = request_.site;
        throw weft::Error(std::string("this launch cannot be captured into a graph: its ") + step_name(step) +
                              " step " + why,
                          site.kernel, site.file, site.line);
    }
}

void KernelLaunch::run(Step step) {
    const plan::KernelPlan& kernel = *request_.kernel;
    switch (step) {
        case Step::Plan: return plan();
        case Step::Prepare: return prepare();
        case Step::Count:
            // One kernel for both passes where it can (the execution step then has nothing to do).
            if (const wf::FusedSlots* fused = accumulation_ ? nullptr : slots_->fused_state())
                fused_ = !request_.options->deterministic_debug &&
                         request_.code->launch_fused(kernel.variants.forward, request_.grid, pointers_.data(),
                                                     *request_.options, *fused);
            if (fused_) return;
            return request_.code->launch(static_cast<size_t>(kernel.variants.counting), request_.grid,
                                         pointers_.data(), *request_.options, exclusive_atomics_);
        case Step::Assign: return slots_->assign_slots();
        case Step::Execute:
            if (fused_) return;
            // (A distributed sum reads the state after the kernel: the kernel must not resolve it.)
            if (const wf::InKernelResolve* in_kernel =
                    accumulation_ && !sink_ ? accumulation_->in_kernel() : nullptr) {
                if (request_.code->launch_resolving(kernel.variants.forward, request_.grid, pointers_.data(),
                                                    *request_.options, *in_kernel))
                    return accumulation_->resolved_in_kernel();
            }
            return request_.code->launch(kernel.variants.forward, request_.grid, pointers_.data(),
                                         *request_.options, exclusive_atomics_);
        case Step::Resolve: return resolve();
    }
}

// Deterministic targets get fresh accumulation state, resolved into them after the kernel;
// slot-allocation counters get reservation state, and the counting pass runs first.
void KernelLaunch::plan() {
    const plan::KernelPlan& kernel = *request_.kernel;
    const std::vector<LaunchArg>& args = *request_.args;
    const std::vector<std::string>& param_names = *request_.param_names;
    const Options& options = *request_.options;
    det::LaunchSite& site = request_.site;
    std::vector<const AnyArray*> locked;  // targets and counters
    const bool serial = request_.backend->has_serial_launches() &&
                        request_.backend->runs_serial(request_.grid.total(), options);
    site.workers = serial ? 1 : request_.backend->launch_workers(options);
    if (!kernel.det_targets.empty()) {
        std::vector<const AnyArray*> targets;
        std::vector<std::string> names;
        for (const plan::DetTarget& t : kernel.det_targets) {
            targets.push_back(&std::get<AnyArray>(args[t.arg.param]));
            names.push_back(param_names[t.arg.param]);
        }
        target_plans_ = det::plan(kernel.det_targets, targets, names, options, site, serial);
        locked = targets;
        // Targets of a distributed sum on this thread keep their exact state (docs/design/0028).
        if (det::ResolveSink* sink = det::resolve_sink()) {
            bool taken = false;
            for (const det::TargetPlan& p : target_plans_) taken = sink->wants(p, site) || taken;
            if (taken && captured())
                throw weft::Error(
                    "this launch accumulates into a target of a weft::DistributedSum, which cannot be "
                    "captured into a graph (its exact state is read on the host after the launch). "
                    "Launch it directly, outside the capture",
                    site.kernel, site.file, site.line);
            if (taken) {
                sink_ = sink;
                sink_plans_ = target_plans_;
            }
        }
    }
    if (kernel.variants.counting >= 0) {
        std::vector<const AnyArray*> counters;
        std::vector<std::string> names;
        for (const plan::SlotTarget& t : kernel.slots.counters) {
            counters.push_back(&std::get<AnyArray>(args[t.arg.param]));
            names.push_back(param_names[t.arg.param]);
        }
        slot_plan_ = det::plan_slots(kernel.slots, counters, names, options, site);
        locked.insert(locked.end(), counters.begin(), counters.end());
    }
    // Launches from several host threads into the same targets or counters run one at a time, and
    // no plain atomics of another launch into that memory run meanwhile (det::LaunchLocks).
    std::vector<const AnyArray*> atomic_targets;
    if (request_.backend->has_serial_launches())
        for (size_t i = 0; i < args.size(); ++i)
            if (kernel.atomics[i]) atomic_targets.push_back(&std::get<AnyArray>(args[i]));
    if (!locked.empty() || !atomic_targets.empty()) locks_.emplace(locked, atomic_targets, serial);
    exclusive_atomics_ = locks_ ? locks_->atomics_exclusive() : serial;

    // A launch that can fail after it has written is undone from a snapshot (docs/design/0006):
    // with bounds_check, and when a records overflow or a slot divergence is possible and is
    // found at the launch (always on the CPU; on a GPU with deterministic_debug). A GPU finds the
    // others after the launch has returned; their errors say what stays applied.
    const bool found_at_launch = request_.backend->finds_failures_at_launch() || options.deterministic_debug;
    const bool may_overflow = std::any_of(target_plans_.begin(), target_plans_.end(), [](const auto& p) {
        return p.records && (p.target.dynamic || p.per_thread < p.target.records_per_thread);
    });
    const bool may_diverge = slot_plan_ && kernel.slots.reservations_may_diverge;
    const bool diverges_late = may_diverge && !found_at_launch;
    // (A captured launch is never undone: its failures are found in replays.)
    undo_ = (options.bounds_check || (found_at_launch && (may_overflow || may_diverge))) && !captured();
    if (undo_) {
        // A broadcast view is copied once per element it reaches, not once per index.
        for (size_t i = 0; i < args.size(); ++i) {
            if (!kernel.writes[i]) continue;
            const AnyArray reached = detail::without_broadcast(std::get<AnyArray>(args[i]));
            snapshot_.emplace_back(reached, reached.to(reached.device()));
        }
        // Errors of earlier launches surface now, not as this launch's failure.
        if (options.deterministic_debug) request_.backend->synchronize();
    }
    // (A carrying sum that leaves the exact range is not undone: it takes some 2^42 of the
    // largest contributions, too rare to copy every written array of every such launch for.)
    const bool may_leave_range =
        std::any_of(target_plans_.begin(), target_plans_.end(), [](const auto& p) { return p.carrying; });
    if (!found_at_launch && (may_overflow || diverges_late || may_leave_range))
        site.written = written_names();
}

void KernelLaunch::prepare() {
    const plan::KernelPlan& kernel = *request_.kernel;
    if (!target_plans_.empty()) {
        accumulation_ = request_.backend->accumulation(std::move(target_plans_), request_.site);
        for (size_t i = 0; i < kernel.det_targets.size(); ++i)
            arrays_[kernel.det_targets[i].arg.param].det =
                static_cast<wf::DetTarget*>(accumulation_->state(i));
    }
    if (slot_plan_) {
        slots_ = request_.backend->slot_allocation(std::move(*slot_plan_), request_.site);
        for (size_t i = 0; i < kernel.slots.counters.size(); ++i)
            arrays_[kernel.slots.counters[i].arg.param].det = static_cast<wf::DetTarget*>(slots_->counter(i));
    }
}

// Found after the kernel ran: a records overflow or a slot divergence (on a GPU, at the next
// synchronization, which deterministic_debug makes now).
void KernelLaunch::resolve() {
    if (slots_) slots_->finish();
    if (accumulation_ && sink_)
        sink_->take(sink_plans_, *accumulation_, request_.backend->host_addressable(), request_.site);
    if (accumulation_) accumulation_->resolve();
    if ((slots_ || accumulation_) && request_.options->deterministic_debug) request_.backend->synchronize();
}

std::vector<std::string> KernelLaunch::written_names() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < request_.args->size(); ++i)
        if (request_.kernel->writes[i]) names.push_back((*request_.param_names)[i]);
    return names;
}

std::optional<weft::Error> KernelLaunch::recover(Step step, const weft::Error& raised) {
    // A failure of the launch as a whole (a bad WEFT_CPU_THREADS) names the kernel and the launch.
    const det::LaunchSite& site = request_.site;
    const bool unplaced = raised.file().empty();
    const weft::Error error =
        unplaced ? weft::Error(raised.message(), site.kernel, site.file, site.line) : raised;
    const std::optional<weft::Error> as_raised = unplaced ? std::optional<weft::Error>(error) : std::nullopt;
    if (step == Step::Plan || step == Step::Prepare) return as_raised;  // nothing was written yet
    const auto restore = [&] {
        for (auto& [array, copy] : snapshot_) weft::copy(array, copy);
    };
    if (step != Step::Resolve) {
        restore();
        return as_raised;
    }
    std::string what = ". The launch was undone: every array it writes holds its value from before it";
    if (undo_) {
        restore();
    } else {
        std::string names;
        for (const std::string& n : written_names()) names += (names.empty() ? "'" : ", '") + n + "'";
        what = ". The launch was not undone: of the arrays it writes (" + names +
               "), only those named above keep their values from before it";
    }
    return weft::Error(error.message() + what, error.kernel(), error.file(), error.line());
}

void run(KernelLaunch& launch) {
    for (Step step : launch.steps()) {
        try {
            launch.run(step);
            if (step == Step::Plan) launch.check_capturable();
        } catch (const weft::Error& e) {
            if (std::optional<weft::Error> instead = launch.recover(step, e)) throw *instead;
            throw;
        }
    }
}

}  // namespace weft::runtime
