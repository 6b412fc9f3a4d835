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

// The same for a one-pass launch: the total is the last tile's inclusive prefix. An element
// outside the counter (null) reserved nothing with bounds_check, and is left alone without it.
extern "C" __global__ void slots_add_total_one_pass(const wf::SlotLaunch* launch, wf::i32* element,
                                                    long long tiles, wf::u64* report) {
    if (*launch->status != 0) {
        atomicOr(report, static_cast<wf::u64>(*launch->status));
        return;
    }
    if (element == nullptr || tiles == 0) return;
    *element = static_cast<wf::i32>(static_cast<wf::u32>(*element) +
                                    static_cast<wf::u32>(launch->tile_states[tiles - 1]));
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
        if (!plan_.one_pass) zero(counts_);  // one pass: a count is read only where a thread reserved
        zero(status_);
        wf::u64* next_tile = nullptr;
        if (plan_.one_pass) {
            tiles_ = (plan_.threads + plan_.block_dim - 1) / plan_.block_dim;
            tile_states_ = allocate(static_cast<size_t>(tiles_ + 1) * 8);
            zero(tile_states_);
            next_tile = static_cast<wf::u64*>(tile_states_->ptr);
        }
        launch_ = allocate(sizeof(wf::SlotLaunch));
        const wf::SlotLaunch value{static_cast<wf::u64*>(keys_->ptr),
                                   static_cast<wf::i32*>(counts_->ptr),
                                   static_cast<wf::i32*>(offsets_->ptr),
                                   static_cast<wf::i32*>(reserved_->ptr),
                                   plan_.per_thread,
                                   static_cast<wf::u32*>(status_->ptr),
                                   next_tile ? next_tile + 1 : nullptr,
                                   next_tile};
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
        if (!plan_.single_element && !plan_.one_pass) groups_.emplace(ordinal_, plan_, launch_->ptr);
    }

    void* counter(size_t i) const override { return counters_[i]->ptr; }

    void assign_slots() override {
        if (plan_.one_pass) return;  // the counting entry assigns
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
        if (plan_.one_pass) {
            long long tiles = tiles_;
            void* params[] = {&launch_ptr, &element, &tiles, &report};
            return run("slots_add_total_one_pass", params);
        }
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
    Memory tile_states_;  // one pass: the next tile, then each tile's look-back state
    int64_t tiles_ = 0;
    std::vector<Memory> counters_;
    std::optional<CudaSlotGroups> groups_;  // several counter elements
};

}  // namespace

std::unique_ptr<SlotAllocation> prepare_cuda_slots(int ordinal, SlotPlan plan, const LaunchSite& site) {
    return std::make_unique<CudaSlots>(ordinal, std::move(plan), site);
}

}  // namespace weft::runtime::det
