// The runtime side of deterministic slot allocation: state between the counting pass and the
// execution pass of one launch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "device/abi.h"
#include "plan/plan.hpp"
#include "runtime/det/accumulation.hpp"

namespace weft::runtime::det {

struct SlotPlan {
    std::vector<std::string> names;  // counter parameter names
    // Per counter: the counter whose span it shares (itself, or an earlier counter whose memory
    // it overlaps); only an owner's span is used, and it covers every counter it owns.
    std::vector<size_t> owner;
    std::vector<Span> spans;
    int64_t per_thread = 0;       // reservation positions per thread
    bool dynamic = false;         // a data-dependent loop reaches a reservation
    bool single_element = false;  // one counter element: slots are a plain prefix sum
    char* single = nullptr;       // that element
    int64_t threads = 0;
    int block_dim = 256;  // the passes' block size (a GPU's one-element path scans per block)
};

// Groups counters that share memory (one prefix sum per element, so aliases never hand out the
// same slot twice) and sizes the reservation buffers: per thread, deterministic_max_records when
// set, else the static estimate of `slots` (at least 1). Throws weft::Error beyond 2^31 - 1 reservations
// per launch.
SlotPlan plan_slots(const plan::Slots& slots, const std::vector<const AnyArray*>& counters,
                    const std::vector<std::string>& names, const Options& options, const LaunchSite& site);

// One launch's slot allocation. On a GPU every step is queued on the current stream; errors
// (too many reservations, or an execution pass that reserves differently from the counting
// pass) surface at the next synchronization, or at once with deterministic_debug. When the
// counting pass overflows, the execution pass does nothing and the counters keep their values.
class SlotAllocation {
public:
    virtual ~SlotAllocation() = default;
    // The SlotCounter* (a device address on a GPU) for counter i's array descriptor.
    virtual void* counter(size_t i) const = 0;
    // After the counting pass: turns reservations into slots.
    virtual void assign_slots() = 0;
    // After the execution pass: checks it and advances the counters.
    virtual void finish() = 0;
    // Where the two passes may run as one kernel (DeviceModule::launch_fused), the state it
    // takes; null where they may not (their state needs a step between them: anything but a
    // GPU's one counter element with one position per thread).
    virtual const wf::FusedSlots* fused_state() const { return nullptr; }
};

// Error messages shared by the backends.
std::string slots_overflow_message(const SlotPlan& plan);
std::string slots_divergence_message(const SlotPlan& plan);
std::string slots_too_many_message(const SlotPlan& plan);

}  // namespace weft::runtime::det
