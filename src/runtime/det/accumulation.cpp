// Spans of target arrays, strategy choice and capacity, and the messages of failed targets.
#include "runtime/det/accumulation.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "device/abi.h"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace {

constexpr int64_t kMaxRecords = (int64_t{1} << 31) - 1;
// Exact sums: contributions per target below which no digit word can overflow (each adds less
// than 2^32 to a word).
constexpr int64_t kUncarriedContributions = (int64_t{1} << 31) - 1;
constexpr int64_t kRecordFloor = 1024;
// Auto: float64 sums use exact digits (528 bytes per element) up to this many elements.
constexpr int64_t kExactFloat64Limit = 65536;
// Auto: float32 (and half) sums into targets of more elements than this use compact windows
// (16 bytes zeroed per element, one atomic per contribution); smaller ones keep exact digits,
// whose warp and block pre-aggregation wins on hot elements (docs/design/0023).
constexpr int64_t kCompactFrom = 4096;
// Compact windows: contributions per target below which no window can reach 2^62 (each adds
// less than 2^40).
constexpr int64_t kUncarriedWindowAdds = int64_t{1} << 22;

bool use_records(const plan::DetTarget& t, const SlotMap& slots, DeterministicStrategy strategy) {
    if (t.family != detail::AtomicOp::Add) return false;  // min/max always use order keys
    switch (strategy) {
        case DeterministicStrategy::Exact: return false;
        case DeterministicStrategy::Records: return true;
        case DeterministicStrategy::Compact: return false;  // float64 targets: exact digits
        case DeterministicStrategy::Auto:
            return t.dtype == DType::Float64 && slots.count > kExactFloat64Limit;
    }
    return false;
}

// A launch that runs as one chunk on the CPU (`serial`) takes compact windows at every size: with
// no pre-aggregation to win on hot elements, a window's one add beats the exact digits' two or
// three, its 16-byte cell their 76 bytes, and its resolve their rounding of 11 limbs (1,024 adds
// into 4,096 elements: 0.019 ms against 0.058; 1M adds into one: 7.8 ms against 16.3).
bool use_compact(const plan::DetTarget& t, const SlotMap& slots, DeterministicStrategy strategy,
                 bool serial) {
    if (t.family != detail::AtomicOp::Add || t.dtype == DType::Float64) return false;
    return strategy == DeterministicStrategy::Compact ||
           (strategy == DeterministicStrategy::Auto && (serial || slots.count > kCompactFrom));
}

// Whether the launch may add `limit` or more contributions to the target: a data-dependent
// loop reaches it, or the static per-thread estimate times the threads is that large (an
// estimate of 0 means none was made, which is treated as unknown).
bool may_exceed(const plan::DetTarget& t, int64_t threads, int64_t limit) {
    if (t.dynamic || t.records_per_thread <= 0) return true;
    return t.records_per_thread > limit / threads;
}

// Records: where each thread's bound is proven (a static estimate with no data-dependent loop,
// not lowered by deterministic_max_records), the threads are split into at most kMaxRegions runs
// of 2^shift (at least kRegionThreads), each appending to its own part of the records with its
// own cursor. A region's part holds the bound times its threads, so no region can overflow while
// the whole would not; elsewhere one cursor serves the whole capacity, as before.
constexpr int64_t kRegionThreads = 1024;

void plan_regions(TargetPlan& p, int64_t threads) {
    const bool bounded =
        !p.target.dynamic && p.target.records_per_thread > 0 && p.per_thread >= p.target.records_per_thread;
    if (!bounded || threads <= kRegionThreads) return;
    int shift = 10;  // log2(kRegionThreads)
    while (((threads - 1) >> shift) + 1 > wf::kMaxRegions) ++shift;
    p.region_shift = shift;
    p.regions = static_cast<int>(((threads - 1) >> shift) + 1);
    p.region_records = p.per_thread << shift;
}

SlotMap dense(const Span& span) {
    SlotMap m;
    m.base = span.base;
    m.count = span.count;
    return m;
}

bool overlap(const Span& a, const Span& b, DType dtype) {
    const auto element = static_cast<int64_t>(dtype_size(dtype));
    return a.count > 0 && b.count > 0 && a.base < b.base + b.count * element &&
           b.base < a.base + a.count * element;
}

}  // namespace

Span span_of(const AnyArray& array) {
    if (array.size() == 0) return {static_cast<char*>(array.data()), 0};
    int64_t low = 0;
    int64_t high = 0;
    for (int d = 0; d < array.ndim(); ++d) {
        const int64_t reach = (array.shape()[d] - 1) * array.stride(d);
        (reach < 0 ? low : high) += reach;
    }
    // Slots are per scalar: from the lowest element's first component to the highest's last.
    const auto scalar = static_cast<int64_t>(dtype_size(array.dtype()));
    return {static_cast<char*>(array.data()) + low, (high - low) / scalar + array.components()};
}

SlotMap slot_map(const AnyArray& array) {
    const Span span = span_of(array);
    if (array.size() == 0) return dense(span);
    struct Run {
        int64_t stride, extent;
    };
    std::vector<Run> runs;
    for (int d = 0; d < array.ndim(); ++d)
        if (array.shape()[d] > 1 && array.stride(d) != 0)
            runs.push_back({std::abs(array.stride(d)), array.shape()[d]});
    // A composite element's components are a run of scalars (slots are per component).
    if (array.components() > 1)
        runs.push_back({static_cast<int64_t>(dtype_size(array.dtype())), array.components()});
    std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.stride > b.stride; });
    // A dimension that continues the next one without a gap joins it (less work per address).
    for (size_t d = runs.size(); d-- > 1;) {
        if (runs[d - 1].stride == runs[d].stride * runs[d].extent) {
            runs[d - 1] = {runs[d].stride, runs[d].extent * runs[d - 1].extent};
            runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(d));
        }
    }
    if (runs.size() > 4) return dense(span);  // (wf::DetTarget maps at most 4 runs)
    // Each stride must pass the reach of the dimensions after it, so that an address has one index.
    int64_t reach = 0;
    int64_t reachable = 1;
    for (size_t d = runs.size(); d-- > 0;) {
        if (runs[d].stride <= reach) return dense(span);
        reach += (runs[d].extent - 1) * runs[d].stride;
        reachable *= runs[d].extent;
    }
    if (reachable > span.count / 2) return dense(span);
    SlotMap m;
    m.base = span.base;
    m.count = reachable;
    m.dims = static_cast<int>(runs.size());
    for (size_t d = 0; d < runs.size(); ++d) {
        m.stride[d] = runs[d].stride;
        m.extent[d] = runs[d].extent;
    }
    return m;
}

std::vector<TargetPlan> plan(const std::vector<plan::DetTarget>& targets,
                             const std::vector<const AnyArray*>& arrays,
                             const std::vector<std::string>& names, const Options& options,
                             const LaunchSite& site, bool serial) {
    std::vector<TargetPlan> plans;
    for (size_t i = 0; i < targets.size(); ++i) {
        TargetPlan p{targets[i], names[i], span_of(*arrays[i]), slot_map(*arrays[i])};
        for (size_t j = 0; j < plans.size() && p.shared_with < 0; ++j) {
            TargetPlan& owner = plans[j];
            if (owner.shared_with >= 0 || !overlap(owner.span, p.span, arrays[i]->dtype())) continue;
            if (owner.target.dtype != p.target.dtype || owner.target.family != p.target.family)
                throw Error(
                    "arrays '" + owner.name + "' and '" + p.name +
                        "' share memory but get different deterministic reductions (or element types); "
                        "pass separate arrays",
                    site.kernel, site.file, site.line);
            char* const low = std::min(owner.span.base, p.span.base);
            const auto element = static_cast<int64_t>(dtype_size(p.target.dtype));
            char* const high =
                std::max(owner.span.base + owner.span.count * element, p.span.base + p.span.count * element);
            owner.span = {low, (high - low) / element};
            // One map must serve both: theirs when they are the same view, else the dense span.
            if (!(owner.slots == p.slots)) owner.slots = dense(owner.span);
            owner.target.records_per_thread += p.target.records_per_thread;
            owner.target.dynamic = owner.target.dynamic || p.target.dynamic;
            p.shared_with = static_cast<int>(j);
        }
        plans.push_back(std::move(p));
    }
    for (TargetPlan& p : plans) {
        if (p.shared_with >= 0) continue;
        p.records = use_records(p.target, p.slots, options.deterministic_strategy);
        p.compact = use_compact(p.target, p.slots, options.deterministic_strategy, serial);
        p.carrying =
            !p.records && p.target.family == detail::AtomicOp::Add &&
            may_exceed(p.target, site.threads, p.compact ? kUncarriedWindowAdds : kUncarriedContributions);
        if (p.records && p.slots.count > int64_t{UINT32_MAX})
            throw Error("array '" + p.name + "' has " + std::to_string(p.slots.count) +
                            " elements, more than the records strategy can address (2^32 - 1); use "
                            "deterministic_strategy = Exact",
                        site.kernel, site.file, site.line);
        if (p.records) {
            p.per_thread = options.deterministic_max_records > 0
                               ? options.deterministic_max_records
                               : std::max<int64_t>(1, p.target.records_per_thread);
            const int64_t wanted =
                p.per_thread > kMaxRecords / site.threads ? kMaxRecords + 1 : p.per_thread * site.threads;
            if (wanted > kMaxRecords)
                throw Error(
                    "deterministic records for array '" + p.name + "' would exceed 2^31 - 1 (" +
                        std::to_string(p.per_thread) + " per thread x " + std::to_string(site.threads) +
                        " threads); launch fewer threads at a time, lower deterministic_max_records, or "
                        "use deterministic_strategy = Exact",
                    site.kernel, site.file, site.line);
            p.capacity = std::max(kRecordFloor, wanted);
            plan_regions(p, site.threads);
        }
    }
    return plans;
}

// Found at the launch, the launch is undone and says so (launch_steps.cpp); found after it has
// returned, the array keeps its value and the note names the writes that were applied.
static std::string kept_after_launch(const LaunchSite& site, const std::string& name) {
    const std::string late = late_failure_note(site, {name});
    return late.empty() ? "" : ". The array '" + name + "' keeps its value from before the launch" + late;
}

std::string overflow_message(const TargetPlan& plan, uint64_t emitted, const LaunchSite& site) {
    const int64_t needed = (static_cast<int64_t>(emitted) + site.threads - 1) / site.threads;
    return "deterministic records for array '" + plan.name + "' overflowed: the launch emitted " +
           std::to_string(emitted) + " records but had room for " + std::to_string(plan.capacity) + " (" +
           std::to_string(plan.per_thread) + " per thread" +
           (plan.target.dynamic ? ", and a data-dependent loop reaches the atomic" : "") +
           "). Set the option deterministic_max_records to at least " + std::to_string(needed) +
           " (or the true per-thread bound), or use deterministic_strategy = Exact" +
           kept_after_launch(site, plan.name);
}

std::string late_failure_note(const LaunchSite& site, const std::vector<std::string>& untouched) {
    if (site.written.empty()) return "";
    std::string applied;
    for (const std::string& name : site.written)
        if (std::find(untouched.begin(), untouched.end(), name) == untouched.end())
            applied += (applied.empty() ? "'" : ", '") + name + "'";
    return ". The launch was not undone (a GPU finds this after the launch has returned; with "
           "deterministic_debug it is found at the launch and undone): " +
           (applied.empty() ? std::string("it writes no other array")
                            : "its writes to " + applied + " were applied");
}

std::string range_message(const TargetPlan& plan, uint64_t slots, const LaunchSite& site) {
    return "the deterministic sum of " + std::to_string(slots) + " element(s) of array '" + plan.name +
           "' went beyond the exact accumulator's range (2^" +
           (plan.target.dtype == DType::Float64 ? "1068" : "169") + ", far past the largest " +
           dtype_name(plan.target.dtype) +
           ") on the way, so it cannot be rounded exactly. The array keeps its value from before the launch. "
           "Scale the values down, or split the accumulation over several launches" +
           late_failure_note(site, {plan.name});
}

size_t state_bytes(const TargetPlan& plan, int64_t count, size_t size, const LaunchSite& site) {
    size_t bytes = 0;
    if (count < 0 || __builtin_mul_overflow(static_cast<size_t>(count), size, &bytes) ||
        bytes > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
        state_allocation_failed(plan, "it needs more bytes than memory can address", site);
    return bytes;
}

void state_allocation_failed(const TargetPlan& plan, const std::string& why, const LaunchSite& site) {
    throw Error(
        "cannot allocate the deterministic state for array '" + plan.name + "' (" +
            std::to_string(plan.slots.count) + " elements): " + why +
            ". Accumulate into a smaller array (or view), or launch with deterministic = NotGuaranteed",
        site.kernel, site.file, site.line);
}

int64_t record_cursor_words(const TargetPlan& p) {
    return static_cast<int64_t>(std::max(p.regions, 1)) * wf::kCursorStride + 2;
}

int64_t workspace_bytes(const TargetPlan& p) {
    const int64_t n = p.slots.count;
    // The published state and the grid barrier's word (docs/design/0024).
    int64_t bytes = static_cast<int64_t>(sizeof(wf::DetTarget)) + 4;
    if (p.records && n == 1)  // + the cursors and the sum's words (no grouping)
        return bytes + record_cursor_words(p) * 8 + 12 * p.capacity +
               (p.target.dtype == DType::Float64 ? 67 : 10) * 8;
    if (p.records)  // + the cursors, counts, ends, grouped
        return bytes + record_cursor_words(p) * 8 + 12 * p.capacity + 8 * n + 8 * p.capacity;
    if (p.carrying) bytes += 8;
    // (+ 1 byte per slot of kept anchors where the state serves several launches: not carrying)
    if (p.compact)
        return bytes +
               (static_cast<int64_t>(sizeof(wf::CompactCell)) + 8 * wf::kSpillWords + !p.carrying) * n;
    if (p.target.family != detail::AtomicOp::Add) return bytes + 8 * n;
    return bytes + (p.target.dtype == DType::Float64 ? 66 * 8 + 4 : 9 * 8 + 4) * n;
}

void describe_slots(const TargetPlan& plan, wf::DetTarget& state) {
    const SlotMap& m = plan.slots;
    state.base = m.base;
    state.count = m.count;
    state.dims = m.dims;
    state.carrying = plan.carrying ? 1 : 0;
    for (int d = 0; d < 4; ++d) {
        state.stride[d] = m.stride[d];
        state.extent[d] = m.extent[d];
        state.inverse[d] = m.stride[d] != 0 ? 1.0 / static_cast<double>(m.stride[d]) : 0.0;
    }
}

}  // namespace weft::runtime::det
