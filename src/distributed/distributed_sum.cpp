// weft::DistributedSum: takes the exact state of deterministic launches into its targets (through
// runtime/det/deferred.hpp), keeps it as digits per element, and combines it over the ranks.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include <cstring>
#include <weft/distributed.hpp>

#include "distributed/agreement.hpp"
#include "distributed/exact_sum.hpp"
#include "runtime/det/deferred.hpp"
#include "weft/error.hpp"

namespace weft {

namespace det = runtime::det;

namespace {

[[noreturn]] void launch_error(const std::string& message, const det::LaunchSite& site) {
    throw Error(message, site.kernel, site.file, site.line);
}

// Adds the exact state of slot range [0, plan.slots.count) of one launch's target into `sums`,
// then leaves the state as an untouched target's, so that the launch's own resolve skips it.
template <class S>
void take_state(const det::TargetPlan& plan, wf::DetTarget& t, distributed::PartialSums& sums) {
    constexpr int kN = std::is_same_v<S, float> ? 14 : 70;
    const int64_t count = plan.slots.count;
    if (plan.records) {
        for (wf::u64 r = 0; r < *t.cursor; ++r) {
            const wf::u32 slot = t.record_slots[r];
            wf::add_record<S>(sums.at(slot), &sums.flags[slot], t.records[r], false);
        }
        *t.cursor = 0;
    } else if (plan.compact) {
        for (int64_t slot = 0; slot < count; ++slot) {
            wf::CompactCell& cell = t.cells[slot];
            // A CPU launch's float64 sums, one per worker (docs/design/0034), join its cell first.
            for (int c = 0; t.sums && c < t.sum_copies; ++c) {
                double& sum = t.sums[c * t.count + slot];
                if (sum == 0.0) continue;
                wf::fold_sum(&cell, &t, slot, sum);
                sum = 0.0;
            }
            if (cell.meta == 0) continue;
            wf::i64* w = sums.at(static_cast<size_t>(slot));
            if (cell.meta & wf::kSpillReady)
                for (int k = 0; k < wf::kSpillWords; ++k)
                    wf::add_at<kN>(w, t.spill[slot * wf::kSpillWords + k], k * wf::kSpillDigitBits);
            if (cell.meta & wf::kAnchored)
                wf::add_at<kN>(w, cell.window, static_cast<int>(cell.meta >> wf::kAnchorShift));
            sums.flags[slot] |=
                cell.meta & (wf::kFlagPosInf | wf::kFlagNegInf | wf::kFlagNan | wf::kFlagPosZero);
        }
        std::memset(static_cast<void*>(t.cells), 0, static_cast<size_t>(count) * sizeof(wf::CompactCell));
    } else {
        constexpr int kWords = wf::Exact<S>::kWords;
        for (int64_t slot = 0; slot < count; ++slot) {
            wf::i64* w = sums.at(static_cast<size_t>(slot));
            for (int k = 0; k < kWords; ++k) w[k] += t.words[slot * kWords + k];
            sums.flags[slot] |= t.flags[slot];
        }
        std::memset(t.words, 0, static_cast<size_t>(count * kWords) * sizeof(wf::i64));
        std::memset(t.flags, 0, static_cast<size_t>(count) * sizeof(wf::u32));
    }
    sums.normalize(0, static_cast<size_t>(count));
}

}  // namespace

struct DistributedSum::State final : det::ResolveSink {
    Communicator communicator;
    std::vector<AnyArray> targets;
    std::vector<det::SlotMap> maps;
    std::vector<distributed::PartialSums> sums;
    det::ResolveSink* previous = nullptr;

    explicit State(const Communicator& c) : communicator(c) {}

    // The target whose slots `plan` has, or -1; a plan that reaches into a target otherwise (a
    // view of it, or min/max) is an error.
    int target_of(const det::TargetPlan& plan, const det::LaunchSite& site) const {
        for (size_t i = 0; i < targets.size(); ++i) {
            const det::SlotMap& m = maps[i];
            const size_t scalar = dtype_size(targets[i].dtype());
            const char* lo = m.base;
            const char* hi = m.base + m.count * static_cast<int64_t>(scalar);
            const char* plo = plan.span.base;
            const char* phi =
                plan.span.base + plan.span.count * static_cast<int64_t>(dtype_size(plan.target.dtype));
            if (phi <= lo || plo >= hi) continue;
            if (plan.target.family != detail::AtomicOp::Add)
                launch_error(
                    "target '" + plan.name +
                        "' is an array of a weft::DistributedSum, which combines sums only (atomic_add and "
                        "atomic_sub), not min or max",
                    site);
            if (!(plan.slots == m) || plan.target.dtype != targets[i].dtype())
                launch_error(
                    "target '" + plan.name +
                        "' is a view of an array of a weft::DistributedSum, which takes whole arrays: "
                        "accumulate into the whole array, or give the scope the view's own array",
                    site);
            return static_cast<int>(i);
        }
        return -1;
    }

    bool wants(const det::TargetPlan& plan, const det::LaunchSite& site) const override {
        return target_of(plan, site) >= 0;
    }

    void take(const std::vector<det::TargetPlan>& plans, det::Accumulation& accumulation, bool host_state,
              const det::LaunchSite& site) override {
        std::vector<int> owner(plans.size(), -1);
        for (size_t j = 0; j < plans.size(); ++j) owner[j] = target_of(plans[j], site);
        for (size_t j = 0; j < plans.size(); ++j) {
            const int shared = plans[j].shared_with;
            if ((owner[j] >= 0 && shared >= 0) || (shared >= 0 && owner[static_cast<size_t>(shared)] >= 0))
                launch_error("target '" + plans[j].name +
                                 "' overlaps another argument of the launch that is an array of a "
                                 "weft::DistributedSum; pass the scope's arrays to no other parameter",
                             site);
            if (owner[j] >= 0 && !host_state)
                launch_error("target '" + plans[j].name + "' of a weft::DistributedSum lies on a GPU", site);
        }
        // A target whose records overflowed or whose sum left the range (any target of the
        // launch) is the launch's failure: nothing is taken, and the launch's resolve reports it.
        for (size_t j = 0; j < plans.size(); ++j) {
            if (plans[j].shared_with >= 0 || plans[j].target.family != detail::AtomicOp::Add) continue;
            const auto& t = *static_cast<const wf::DetTarget*>(accumulation.state(j));
            if (plans[j].records && *t.cursor > static_cast<uint64_t>(plans[j].capacity)) return;
            if (!plans[j].carrying) continue;
            for (int64_t slot = 0; slot < plans[j].slots.count; ++slot) {
                const wf::u32 flags = plans[j].compact ? t.cells[slot].meta : t.flags[slot];
                if (flags & wf::kFlagOverflow) return;
            }
        }
        for (size_t j = 0; j < plans.size(); ++j) {
            if (owner[j] < 0) continue;
            auto& t = *static_cast<wf::DetTarget*>(accumulation.state(j));
            distributed::PartialSums& s = sums[static_cast<size_t>(owner[j])];
            if (plans[j].target.dtype == DType::Float64)
                take_state<double>(plans[j], t, s);
            else
                take_state<float>(plans[j], t, s);
        }
    }
};

DistributedSum::DistributedSum(const Communicator& communicator, std::vector<AnyArray> targets,
                               std::source_location s)
    : state_(std::make_unique<State>(communicator)) {
    const auto fail = [&](const std::string& message) {
        throw Error("weft::DistributedSum: " + message, {}, s.file_name(), s.line());
    };
    if (det::resolve_sink())
        fail("another distributed sum is active on this thread; give one scope all the arrays");
    for (size_t i = 0; i < targets.size(); ++i) {
        const AnyArray& a = targets[i];
        const std::string which = "target " + std::to_string(i);
        if (!is_float(a.dtype()))
            fail(which + " holds " + dtype_name(a.dtype()) +
                 " elements; a distributed sum takes float16, bfloat16, float32 or float64 arrays (or "
                 "composites)");
        if (!a.device().is_cpu())
            fail(which + " lies on " + a.device().name() +
                 "; a distributed sum keeps exact state of CPU launches (for GPU arrays, all-reduce the "
                 "values with Communicator::allreduce_sum)");
        if (!a.is_contiguous()) fail(which + " is a view; a distributed sum takes whole dense arrays");
        for (size_t j = 0; j < i; ++j)
            if (may_share_memory(a, targets[j]))
                fail(which + " shares memory with target " + std::to_string(j) + "; pass each array once");
        state_->maps.push_back(det::slot_map(a));
        state_->sums.emplace_back();
        state_->sums.back().reset(a.dtype(), static_cast<size_t>(state_->maps.back().count));
    }
    state_->targets = std::move(targets);
    state_->previous = det::exchange_resolve_sink(state_.get());
}

DistributedSum::~DistributedSum() {
    det::exchange_resolve_sink(state_->previous);
}

void DistributedSum::reduce(std::source_location s) {
    const distributed::Engine& engine = state_->communicator.engine_impl();
    std::vector<distributed::Field> fields{{"numbers of targets", state_->targets.size()}};
    for (const AnyArray& a : state_->targets) {
        const size_t bytes = static_cast<size_t>(a.size()) * a.element_bytes();
        fields.push_back({"target element types", static_cast<uint64_t>(a.dtype())});
        fields.push_back({"target component counts", static_cast<uint64_t>(a.components())});
        fields.push_back({"target sizes", static_cast<uint64_t>(a.size())});
        fields.push_back({"target shapes (each rank's targets must have the same extents)",
                          distributed::shape_key(a.shape())});
        fields.push_back({"target values before the sum (each rank's targets must hold the same values)",
                          distributed::content_hash(a.data(), bytes)});
    }
    distributed::agree(engine, "weft::DistributedSum::reduce", fields, {}, s);
    for (size_t i = 0; i < state_->targets.size(); ++i) {
        const AnyArray& a = state_->targets[i];
        distributed::PartialSums& sums = state_->sums[i];
        distributed::exact_reduce(engine, sums, a.data(), sums.size());
        sums.reset(a.dtype(), sums.size());
    }
}

}  // namespace weft
