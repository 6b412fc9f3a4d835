// One launch as the list of steps of the deterministic protocol: plan, prepare, count, assign,
// execute, resolve. A launch runs them in order; a recording (graph capture) can record the same
// list, since each step says whether it only queues stream-ordered device work.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "device/abi.h"
#include "plan/plan.hpp"
#include "runtime/backend.hpp"
#include "runtime/det/accumulation.hpp"
#include "runtime/det/slots.hpp"
#include "runtime/det/target_locks.hpp"
#include "runtime/device_module.hpp"
#include "weft/error.hpp"
#include "weft/launch.hpp"

namespace weft::runtime {

namespace det {
class ResolveSink;
}

enum class Step : uint8_t {
    Plan,     // strategies, buffer sizes, locks, and whether a failure can be undone (a snapshot)
    Prepare,  // deterministic and slot state allocated and initialised, bound to the arguments
    Count,    // the counting pass (slot allocation): each thread's reservations
    Assign,   // reservations turned into slots
    Execute,  // the kernel
    Resolve,  // accumulated results written into the targets, counters advanced, failures found
};

const char* step_name(Step step);

// What a launch runs: arguments already checked against the kernel's parameters (the API does
// that), on the device of `backend`.
struct LaunchRequest {
    const Backend* backend = nullptr;
    const DeviceModule* code = nullptr;
    const plan::KernelPlan* kernel = nullptr;
    const Options* options = nullptr;
    const std::vector<LaunchArg>* args = nullptr;
    const std::vector<std::string>* param_names = nullptr;
    LaunchGrid grid;
    det::LaunchSite site;
};

class KernelLaunch {
public:
    // Marshals the arguments into the launch ABI (device/abi.h).
    explicit KernelLaunch(LaunchRequest request);
    KernelLaunch(const KernelLaunch&) = delete;
    KernelLaunch& operator=(const KernelLaunch&) = delete;

    // The steps this launch takes, in order: every launch plans, prepares, executes and
    // resolves; one that allocates slots counts and assigns before it executes.
    std::span<const Step> steps() const { return {steps_.data(), step_count_}; }
    // Whether `step` only queues work in stream order (nothing read back on the host, no
    // synchronization), so that a graph capture records it as it runs; known once the plan step
    // has run. Failures of such work are left in the stream's status area and reported at its
    // next synchronization. (On the CPU every step runs to its end as it is queued.) This is the
    // launch run directly: captured, the count and execute steps of a checked launch only queue
    // work too (the kernel is checked at replay), which check_capturable() allows.
    bool stream_ordered(Step step) const;
    void run(Step step);
    // For a captured launch, after the plan step: throws the weft::Error naming the kernel and
    // the first step that is not stream-ordered (a graph could not replay it), before anything
    // is queued.
    void check_capturable() const;
    // After `step` threw `error`: puts back what the launch wrote where it can be undone, and
    // returns the error the user sees instead, if it says more (what stays applied).
    std::optional<weft::Error> recover(Step step, const weft::Error& error);

private:
    void plan();
    void prepare();
    void resolve();
    std::vector<std::string> written_names() const;
    // Whether the launch is being captured into a graph (runtime/graph_capture.hpp): it only
    // queues work, is never undone from a snapshot (a replay cannot be), and must be
    // stream-ordered. Asked of the backend the first time it matters, which is only for a checked
    // launch (bounds_check, debug, deterministic_debug): on a GPU the question is a driver call,
    // which a plain launch then does not make.
    bool captured() const;

    LaunchRequest request_;
    std::array<Step, 6> steps_{};
    size_t step_count_ = 0;

    // The arguments as the kernel entry receives them.
    std::vector<wf::ArrayDescriptor> arrays_;
    std::vector<ScalarArg> scalars_;
    std::vector<void*> pointers_;

    // From the plan step.
    std::vector<det::TargetPlan> target_plans_;
    std::optional<det::SlotPlan> slot_plan_;
    std::optional<det::LaunchLocks> locks_;
    bool exclusive_atomics_ = false;  // no other launch updates the plain atomics' targets meanwhile
    bool undo_ = false;
    bool deterministic_ = false;            // it has deterministic targets or allocates slots
    bool fused_ = false;                    // the counting step ran both slot passes as one kernel
    mutable std::optional<bool> captured_;  // captured(), once asked
    // A copy of the arrays the launch may write, put back if it fails (docs/design/0006).
    std::vector<std::pair<AnyArray, AnyArray>> snapshot_;

    // A distributed sum that takes some of the targets' state after the kernel
    // (runtime/det/deferred.hpp), and the targets' plans it is given.
    det::ResolveSink* sink_ = nullptr;
    std::vector<det::TargetPlan> sink_plans_;

    // From the prepare step.
    std::unique_ptr<det::Accumulation> accumulation_;
    std::unique_ptr<det::SlotAllocation> slots_;
};

// Runs every step of `launch` in order; a failing step's error is turned into the user's by
// KernelLaunch::recover.
void run(KernelLaunch& launch);

}  // namespace weft::runtime
