// Slot allocation: planning, messages, and the CPU backend (the host computes the slots).
#include "runtime/det/slots.hpp"

#include <algorithm>
#include <limits>

#include "device/abi.h"
#include "runtime/det/cpu_slots.hpp"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace {

constexpr int64_t kMaxReservations = (int64_t{1} << 31) - 1;

bool overlap(const Span& a, const Span& b) {
    return a.count > 0 && b.count > 0 && a.base < b.base + b.count * 4 && b.base < a.base + a.count * 4;
}

class CpuSlots final : public SlotAllocation {
public:
    CpuSlots(SlotPlan plan, const LaunchSite& site) : plan_(std::move(plan)), site_(site) {
        const auto n = static_cast<size_t>(plan_.threads * plan_.per_thread);
        keys_.assign(n, 0);
        counts_.assign(n, 0);
        offsets_.assign(n, 0);
        reserved_.assign(static_cast<size_t>(plan_.threads), 0);
        launch_ = {keys_.data(), counts_.data(), offsets_.data(), reserved_.data(), plan_.per_thread,
                   &status_,     nullptr,        nullptr,         nullptr,          nullptr};
        for (size_t i = 0; i < plan_.spans.size(); ++i)
            counters_.push_back({&launch_, plan_.owner[i], plan_.spans[plan_.owner[i]].base});
    }

    void* counter(size_t i) const override { return const_cast<wf::SlotCounter*>(&counters_[i]); }

    void assign_slots() override {
        if (status_ & wf::kSlotsOverflow)
            throw Error(slots_overflow_message(plan_), site_.kernel, site_.file, site_.line);
        // Each element's running total, in an array per counter group (an element's key is its
        // group and its index there), and the elements reached, in the order first reached. A
        // total may go below zero (negative amounts hand slots back): kNotReached marks the others.
        totals_.resize(plan_.spans.size());
        // Per counter element, in thread order, then program order.
        for (int64_t t = 0; t < plan_.threads; ++t) {
            for (int64_t k = 0; k < reserved_[t]; ++k) {
                const auto r = static_cast<size_t>(t * plan_.per_thread + k);
                const wf::u64 key = keys_[r];
                std::vector<int64_t>& group = totals_[key >> 40];
                if (group.empty())
                    group.assign(static_cast<size_t>(plan_.spans[key >> 40].count), kNotReached);
                int64_t& running = group[key & ((uint64_t{1} << 40) - 1)];
                if (running == kNotReached) {
                    running = 0;
                    reached_.push_back(key);
                }
                offsets_[r] = static_cast<wf::i32>(running);
                running += counts_[r];
                if (running > kMaxReservations)
                    throw Error("slot allocation on counter '" + plan_.names[key >> 40] +
                                    "' passes 2^31 - 1 slots in one launch",
                                site_.kernel, site_.file, site_.line);
            }
        }
    }

    void finish() override {
        if (status_ & wf::kSlotsDiverged)
            throw Error(slots_divergence_message(plan_), site_.kernel, site_.file, site_.line);
        for (const wf::u64 key : reached_) {
            const size_t index = key & ((uint64_t{1} << 40) - 1);
            auto* element = reinterpret_cast<int32_t*>(plan_.spans[key >> 40].base) + index;
            *element = static_cast<int32_t>(*element + totals_[key >> 40][index]);
        }
    }

private:
    SlotPlan plan_;
    LaunchSite site_;
    std::vector<wf::u64> keys_;
    std::vector<wf::i32> counts_, offsets_, reserved_;
    wf::u32 status_ = 0;
    wf::SlotLaunch launch_{};
    std::vector<wf::SlotCounter> counters_;
    static constexpr int64_t kNotReached = std::numeric_limits<int64_t>::min();
    std::vector<std::vector<int64_t>> totals_;  // per counter group and element
    std::vector<wf::u64> reached_;
};

}  // namespace

SlotPlan plan_slots(const plan::Slots& slots, const std::vector<const AnyArray*>& counters,
                    const std::vector<std::string>& names, const Options& options, const LaunchSite& site) {
    SlotPlan plan;
    plan.names = names;
    // Counters that share memory share one prefix sum per element: they form a group keyed by
    // its earliest member, whose span covers them all. Groups stay disjoint, so one pass over
    // the earlier groups finds every group a counter joins.
    for (size_t i = 0; i < counters.size(); ++i) {
        Span merged = span_of(*counters[i]);
        size_t leader = i;
        std::vector<size_t> joined{i};
        for (size_t j = 0; j < i; ++j) {
            if (plan.owner[j] != j || !overlap(plan.spans[j], merged)) continue;
            char* const low = std::min(plan.spans[j].base, merged.base);
            char* const high =
                std::max(plan.spans[j].base + plan.spans[j].count * 4, merged.base + merged.count * 4);
            merged = {low, (high - low) / 4};
            leader = std::min(leader, j);
            joined.push_back(j);
        }
        plan.spans.push_back(merged);
        plan.owner.push_back(i);
        for (size_t& owner : plan.owner)
            if (std::find(joined.begin(), joined.end(), owner) != joined.end()) owner = leader;
        plan.spans[leader] = merged;
    }
    plan.per_thread = options.deterministic_max_records > 0
                          ? options.deterministic_max_records
                          : std::max<int64_t>(1, slots.reservations_per_thread);
    plan.dynamic = slots.reservations_dynamic;
    plan.single_element = slots.single_counter_element;
    if (plan.single_element) {
        // Negative indices count from the end, as in kernels; one outside the counter takes the
        // general path, which the kernel's own bounds handling then governs.
        const AnyArray& c = *counters[0];
        char* element = static_cast<char*>(c.data());
        for (int d = 0; d < c.ndim() && plan.single_element; ++d) {
            const int64_t given = slots.single_counter_index[d];
            const int64_t i = given < 0 ? given + c.shape()[d] : given;
            plan.single_element = i >= 0 && i < c.shape()[d];
            if (plan.single_element) element += i * c.stride(d);
        }
        plan.single = plan.single_element ? element : nullptr;
    }
    plan.threads = site.threads;
    plan.block_dim = options.block_dim;
    if (plan.per_thread > kMaxReservations / site.threads)
        throw Error("slot allocation would record more than 2^31 - 1 reservations (" +
                        std::to_string(plan.per_thread) + " per thread x " + std::to_string(site.threads) +
                        " threads); launch fewer threads at a time or lower deterministic_max_records",
                    site.kernel, site.file, site.line);
    return plan;
}

std::string slots_overflow_message(const SlotPlan& plan) {
    std::string counters;
    for (const std::string& n : plan.names) counters += (counters.empty() ? "'" : ", '") + n + "'";
    return "slot allocation on " + counters + ": a thread made more reservations than the " +
           std::to_string(plan.per_thread) + " per thread planned" +
           (plan.dynamic ? " (a data-dependent loop reaches the atomic_add)" : "") +
           "; nothing was written and the counters keep their values. Set the option "
           "deterministic_max_records to "
           "the most reservations one thread makes";
}

std::string slots_too_many_message(const SlotPlan& plan) {
    std::string counters;
    for (const std::string& n : plan.names) counters += (counters.empty() ? "'" : ", '") + n + "'";
    return "slot allocation on " + counters +
           ": a counter element would pass 2^31 - 1 slots in one launch; nothing was written and the "
           "counters keep their values. Launch fewer threads at a time";
}

std::string slots_divergence_message(const SlotPlan& plan) {
    std::string counters;
    for (const std::string& n : plan.names) counters += (counters.empty() ? "'" : ", '") + n + "'";
    return "slot allocation on " + counters +
           ": the execution pass reserved slots differently from the counting pass, so the slots it used are "
           "not the deterministic ones; a reservation must depend only on the kernel's inputs and locals, "
           "not on arrays it writes, values returned by other atomics or the slots of earlier "
           "reservations";
}

std::unique_ptr<SlotAllocation> prepare_cpu_slots(SlotPlan plan, const LaunchSite& site) {
    return std::make_unique<CpuSlots>(std::move(plan), site);
}

}  // namespace weft::runtime::det
