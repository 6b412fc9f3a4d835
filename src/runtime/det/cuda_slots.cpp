// Slot allocation on a GPU, with no host synchronization. One counter element (the common case:
// compaction): the slots are an exclusive scan of the reservation counts. Several elements: the
// reservations are grouped per element on the device (cuda_slot_groups, docs/design/0021).
#include "runtime/det/cuda_slots.hpp"

#include <optional>

#include "codegen/generated.hpp"
#include "device/abi.h"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/det/cuda_slot_groups.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

const char* const kKernels = R"(
extern "C" __global__ void slots_publish(wf::SlotLaunch* launch, wf::SlotLaunch value, wf::SlotCounter* counter,
                                         wf::SlotCounter counter_value) {
    *launch = value;
    *counter = counter_value;
}

// After the execution pass: the counter element advances by the total reserved, unless a pass
// failed (then nothing changes, and the failure goes to the launch's status word, which the
// stream's next synchronization reports).
extern "C" __global__ void slots_add_total(const wf::SlotLaunch* launch, wf::i32* element, long long n,
                                           wf::u64* report) {
    if (*launch->status != 0) {
        atomicOr(report, static_cast<wf::u64>(*launch->status));
        return;
    }
    if (n == 0) return;
    *element += launch->offsets[n - 1] + launch->counts[n - 1];
}
)";

using Memory = std::shared_ptr<detail::Allocation>;

class CudaSlots final : public SlotAllocation {
public:
    CudaSlots(int ordinal, SlotPlan plan, const LaunchSite& site)
        : ordinal_(ordinal), plan_(std::move(plan)), site_(site) {
        const auto n = static_cast<size_t>(plan_.threads * plan_.per_thread);
        keys_ = allocate(n * 8);
        counts_ = allocate(n * 4);
        offsets_ = allocate(n * 4);
        reserved_ = allocate(static_cast<size_t>(plan_.threads) * 4);
        status_ = allocate(4);
        zero(counts_);
        zero(status_);
        launch_ = allocate(sizeof(wf::SlotLaunch));
        const wf::SlotLaunch value{static_cast<wf::u64*>(keys_->ptr),
                                   static_cast<wf::i32*>(counts_->ptr),
                                   static_cast<wf::i32*>(offsets_->ptr),
                                   static_cast<wf::i32*>(reserved_->ptr),
                                   plan_.per_thread,
                                   static_cast<wf::u32*>(status_->ptr)};
        for (size_t i = 0; i < plan_.spans.size(); ++i) {
            counters_.push_back(allocate(sizeof(wf::SlotCounter)));
            const size_t owner = plan_.owner[i];
            wf::SlotCounter c{static_cast<wf::SlotLaunch*>(launch_->ptr), owner, plan_.spans[owner].base};
            void* launch_ptr = launch_->ptr;
            void* counter_ptr = counters_.back()->ptr;
            wf::SlotLaunch v = value;
            void* params[] = {&launch_ptr, &v, &counter_ptr, &c};
            run("slots_publish", params);
        }
        if (!plan_.single_element) groups_.emplace(ordinal_, plan_, launch_->ptr);
    }

    void* counter(size_t i) const override { return counters_[i]->ptr; }

    void assign_slots() override {
        if (groups_) return groups_->assign();
        cu::scan(ordinal_, DType::Int32, counts_->ptr, offsets_->ptr, plan_.threads * plan_.per_thread,
                 false);
    }

    void finish() override {
        const cu::StatusTicket ticket = status_word();
        wf::u64* report = ticket.word();
        if (groups_) return groups_->add_totals(report);
        void* launch_ptr = launch_->ptr;
        void* element = plan_.single;
        long long n = plan_.threads * plan_.per_thread;
        void* params[] = {&launch_ptr, &element, &n, &report};
        run("slots_add_total", params);
    }

private:
    // Where the launch's failures go (its status bits), reported at the stream's next
    // synchronization; work captured into a graph keeps its word.
    cu::StatusTicket status_word() const {
        const SlotPlan& plan = plan_;
        const LaunchSite& site = site_;
        std::string key = "slots\n" + site.kernel + "\n" + site.file + ":" + std::to_string(site.line) +
                          "\n" + slots_overflow_message(plan) + late_failure_note(site, plan.names);
        return cu::status_word(cu::current_stream(ordinal_), key, [plan, site](uint64_t bits) {
            if (bits & wf::kSlotsOverflow)
                throw Error(slots_overflow_message(plan), site.kernel, site.file, site.line);
            if (bits & wf::kSlotsTooMany)
                throw Error(slots_too_many_message(plan), site.kernel, site.file, site.line);
            throw Error(slots_divergence_message(plan) + late_failure_note(site, plan.names), site.kernel,
                        site.file, site.line);
        });
    }

    Memory allocate(size_t bytes) const {
        return detail::allocate(Device::cuda(ordinal_), bytes == 0 ? 1 : bytes);
    }
    void zero(const Memory& m) const { detail::zero_bytes(m->ptr, Device::cuda(ordinal_), m->bytes); }

    void run(const char* name, void** params) const {
        const cu::CUfunction f = cu::library_function(ordinal_, "slots", codegen::prelude() + kKernels, name);
        const auto stream = cu::current_stream(ordinal_);
        cu::check(
            cu::require_driver().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream->stream, params, nullptr),
            name);
        cu::note_launch(*stream, site_.kernel + " (slot allocation " + name + ")");
    }

    int ordinal_;
    SlotPlan plan_;
    LaunchSite site_;
    Memory keys_, counts_, offsets_, reserved_, status_, launch_;
    std::vector<Memory> counters_;
    std::optional<CudaSlotGroups> groups_;  // several counter elements
};

}  // namespace

std::unique_ptr<SlotAllocation> prepare_cuda_slots(int ordinal, SlotPlan plan, const LaunchSite& site) {
    return std::make_unique<CudaSlots>(ordinal, std::move(plan), site);
}

}  // namespace weft::runtime::det
