// The runtime side of deterministic accumulation: per-launch target state, and its resolve.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "weft/device_array.hpp"
#include "weft/options.hpp"

namespace wf {
struct DetTarget;
struct InKernelResolve;
}  // namespace wf

namespace weft::runtime::det {

// The address range of an array argument (a view may have negative or zero strides).
// Slots are per scalar: an array of composite elements (vec3, mat33, ...) has one per component.
struct Span {
    char* base;     // lowest element address
    int64_t count;  // scalar slots from base through the highest element's last component
};
Span span_of(const AnyArray& array);

// How a target's element addresses map to accumulator slots (mirrors the fields of
// wf::DetTarget): `dims == 0` gives one slot per scalar address of the span; a sparse view
// (fewer than half the span's addresses are its elements' components) gets one slot per scalar
// it can reach, its index along dimensions of decreasing byte stride, broadcast dimensions left
// out, a composite element's components the last run (stride the scalar's size, merged with an
// element dimension it continues); a view that would need more than 4 runs gets the dense span.
struct SlotMap {
    char* base = nullptr;  // slot 0's element, the lowest address
    int64_t count = 0;     // slots
    int dims = 0;
    int64_t stride[4] = {0, 0, 0, 0};
    int64_t extent[4] = {0, 0, 0, 0};
    friend bool operator==(const SlotMap&, const SlotMap&) = default;
};
SlotMap slot_map(const AnyArray& array);

// Who launched, for error messages.
struct LaunchSite {
    std::string kernel;
    std::string file;
    uint32_t line = 0;
    int64_t threads = 0;
    int workers = 1;  // the CPU workers the launch runs on (1: serial), each with sums of its own
    // Set when a failure may be found after the launch has returned (on a GPU, a records
    // overflow or a slot divergence is found at the next synchronization), too late to undo
    // the launch: the arrays it writes, so that the error can say what stays applied.
    std::vector<std::string> written;
};

// For an error found after the launch returned: which of the launch's writes stay applied (all
// of site.written but `untouched`); empty when site.written is.
std::string late_failure_note(const LaunchSite& site, const std::vector<std::string>& untouched);

// One target of one launch: its slots, which strategy, and for records their capacity.
struct TargetPlan {
    plan::DetTarget target;
    std::string name;  // the kernel parameter's name
    Span span;         // the addresses its elements lie in (for overlaps)
    SlotMap slots;
    bool records = false;
    bool compact = false;  // compact windows (sums of float32, float16, bfloat16)
    // Exact sums: the launch may add 2^31 or more contributions (a data-dependent loop, or the
    // static estimate times the threads), enough to overflow a digit word, so words carry.
    // Compact: 2^22 or more, enough for a window to need carrying, which also means the check
    // for sums out of range runs (a sum needs far more contributions to leave it).
    bool carrying = false;
    int64_t per_thread = 0;  // records per thread the capacity allows
    int64_t capacity = 0;
    // Records on a GPU: threads in runs of 2^region_shift append to `regions` parts of the
    // capacity with a cursor each (wf::DetTarget's fields of the same names); 1: one cursor.
    int regions = 1;
    int region_shift = 0;
    int64_t region_records = 0;
    // Arguments whose memory overlaps share one target state (one exact sum per element):
    // the index of the plan that owns it, or -1 for an owner.
    int shared_with = -1;
};

// Chooses each target's strategy. Targets whose arrays overlap in memory share the state of the
// first of them (spans merged), so every element gets one exact sum; overlapping targets must
// have the same element type and reduction family.
// Also chooses each target's strategy (DeterministicStrategy, with Auto's rule), whether exact
// words carry, and sizes record buffers: max(1024, per-thread bound x threads), the bound being
// deterministic_max_records when set, else the static estimate. Throws weft::Error when a launch
// would need more than 2^31 - 1 records. `serial`: a CPU launch that runs as one chunk.
std::vector<TargetPlan> plan(const std::vector<plan::DetTarget>& targets,
                             const std::vector<const AnyArray*>& arrays,
                             const std::vector<std::string>& names, const Options& options,
                             const LaunchSite& site, bool serial);

// The message for a launch whose records overflowed.
std::string overflow_message(const TargetPlan& plan, uint64_t emitted, const LaunchSite& site);
// The message for a launch in which `slots` elements' running sums left the exact range.
std::string range_message(const TargetPlan& plan, uint64_t slots, const LaunchSite& site);

// A records target's cursor words on a GPU: one per region, kCursorStride apart, and two more
// in which the counting kernel leaves the records emitted and whether any region overflowed.
int64_t record_cursor_words(const TargetPlan& plan);

// The device memory a GPU launch uses for the target (its state, buffers and the records
// strategy's grouping buffers), for benchmarks and reports.
int64_t workspace_bytes(const TargetPlan& plan);

// Writes the plan's slot map and carrying choice into the state its kernels read; the backend
// fills in the memory (words, flags, records).
void describe_slots(const TargetPlan& plan, wf::DetTarget& state);

// The bytes of `count` items of `size` bytes each, or a weft::Error naming the target when that
// exceeds what memory can hold.
size_t state_bytes(const TargetPlan& plan, int64_t count, size_t size, const LaunchSite& site);
// Throws the weft::Error for deterministic state of `plan` that could not be allocated, `why`.
[[noreturn]] void state_allocation_failed(const TargetPlan& plan, const std::string& why,
                                          const LaunchSite& site);

// One launch's deterministic targets: created before the kernel runs (state allocated and
// initialised), resolved after it (results written into the target arrays). On a GPU both steps
// are queued on the current stream and nothing waits for the host: a records overflow is
// reported at the stream's next synchronization (at once with deterministic_debug), and the
// overflowing target keeps its pre-launch value.
class Accumulation {
public:
    virtual ~Accumulation() = default;
    // The wf::DetTarget* (a device address on a GPU) to put into target i's array descriptor.
    virtual void* state(size_t i) const = 0;
    // Applies the accumulated contributions to the target arrays.
    virtual void resolve() = 0;
    // What the kernel needs to resolve every target itself (docs/design/0024), or null where the
    // targets' strategies do not allow it (resolve() then does it).
    virtual const wf::InKernelResolve* in_kernel() const { return nullptr; }
    // The kernel was launched resolving every target (in_kernel()): resolve() queues nothing.
    virtual void resolved_in_kernel() {}
};

}  // namespace weft::runtime::det
