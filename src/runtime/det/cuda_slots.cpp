// Slot allocation on a GPU, with no host synchronization. One counter element (the common case:
// compaction): the slots are an exclusive scan of the reservation counts. Several elements: the
// reservations are grouped per element on the device (cuda_slot_groups, docs/design/0021).
#include "runtime/det/cuda_slots.hpp"

#include <algorithm>
#include <optional>
#include <string>

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

constexpr int kCountersPerPublish = 8;
struct CounterChunk {
    wf::SlotCounter counters[kCountersPerPublish];
};

const char* const kKernels = R"(
constexpr int kCountersPerPublish = 8;
struct CounterChunk {
    wf::SlotCounter counters[kCountersPerPublish];
};

// Publishes the launch's state and zeroes its per-launch words (the status, the total, the count
// of finished blocks, the chained scan's words), so that a launch needs no memset node.
extern "C" __global__ void slots_publish(wf::SlotLaunch* launch, wf::SlotLaunch value, wf::SlotCounter* counters,
                                         int count, CounterChunk chunk, unsigned long long* zeroed,
                                         long long zeroed_words) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < zeroed_words; i += stride)
        zeroed[i] = 0;
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    *launch = value;
    for (int i = 0; i < count; ++i) counters[i] = chunk.counters[i];
}
)";

// Built once: a launch looks its kernels up several times, and the prelude is some 60 KB.
const std::string& library_source() {
    static const std::string source = codegen::prelude() + kKernels;
    return source;
}

using Memory = std::shared_ptr<detail::Allocation>;

class CudaSlots final : public SlotAllocation {
public:
    CudaSlots(int ordinal, SlotPlan plan, const LaunchSite& site)
        : ordinal_(ordinal), plan_(std::move(plan)), site_(site) {
        // One allocation per launch: the launch's state, its counters, then the words the publish
        // kernel zeroes (the status, the total, the count of finished blocks, the chained scan's). Counts
        // need no zeroing: the counting pass writes every position, 0 where a thread made no reservation
        // (slots.h).
        const auto n = static_cast<int64_t>(plan_.threads * plan_.per_thread);
        size_t bytes = 0;
        const auto take = [&bytes](size_t size) {
            const size_t at = bytes;
            bytes += (size + 15) / 16 * 16;
            return at;
        };
        const size_t launch_at = take(sizeof(wf::SlotLaunch));
        const size_t counters_at = take(plan_.spans.size() * sizeof(wf::SlotCounter));
        const size_t status_at = take(8);
        const size_t total_at = take(8);
        const size_t done_at = take(8);
        const bool chained = plan_.single_element;
        const size_t words_at = take(chained ? static_cast<size_t>(cu::chained_scan_words(n)) * 8 : 0);
        const size_t zeroed_end = bytes;
        const size_t counts_at = take(static_cast<size_t>(n) * 4);
        const size_t keys_at = take(static_cast<size_t>(n) * 8);
        const size_t offsets_at = take(static_cast<size_t>(n) * 4);
        const size_t reserved_at = take(static_cast<size_t>(plan_.threads) * 4);
        state_ = detail::allocate(Device::cuda(ordinal_), bytes);
        char* const base = static_cast<char*>(state_->ptr);
        launch_ = base + launch_at;
        counters_ = reinterpret_cast<wf::SlotCounter*>(base + counters_at);
        wf::SlotLaunch value{reinterpret_cast<wf::u64*>(base + keys_at),
                             reinterpret_cast<wf::i32*>(base + counts_at),
                             reinterpret_cast<wf::i32*>(base + offsets_at),
                             reinterpret_cast<wf::i32*>(base + reserved_at),
                             plan_.per_thread,
                             reinterpret_cast<wf::u32*>(base + status_at),
                             nullptr,
                             reinterpret_cast<wf::i32*>(base + total_at),
                             nullptr,
                             reinterpret_cast<wf::u32*>(base + done_at)};
        // One element: the execution pass's last block adds the total (slots.h), no kernel after it.
        // Its status word's ticket is held until the execution pass is queued (finish()).
        if (plan_.single_element) {
            ticket_ = status_word();
            value.single = reinterpret_cast<wf::i32*>(plan_.single);
            value.report = ticket_.word();
        }
        counts_ = value.counts;
        offsets_ = value.offsets;
        total_ = reinterpret_cast<wf::i32*>(base + total_at);
        words_ = reinterpret_cast<uint64_t*>(base + words_at);
        // Published by a kernel, not copied from the host, so that the launch can be captured.
        void* zeroed = base + status_at;
        long long zeroed_words = static_cast<long long>((zeroed_end - status_at) / 8);
        for (size_t at = 0; at < plan_.spans.size(); at += kCountersPerPublish) {
            CounterChunk chunk{};
            int count = static_cast<int>(std::min<size_t>(kCountersPerPublish, plan_.spans.size() - at));
            for (int i = 0; i < count; ++i) {
                const size_t owner = plan_.owner[at + i];
                chunk.counters[i] = {static_cast<wf::SlotLaunch*>(launch_), owner, plan_.spans[owner].base};
            }
            void* launch_ptr = launch_;
            void* counters_ptr = counters_ + at;
            void* params[] = {&launch_ptr, &value, &counters_ptr, &count, &chunk, &zeroed, &zeroed_words};
            run("slots_publish", params, std::min<long long>(zeroed_words / 256 + 1, 1024));
            zeroed_words = 0;  // the first chunk's kernel did it
        }
        if (!plan_.single_element) groups_.emplace(ordinal_, plan_, launch_);
    }

    void* counter(size_t i) const override { return counters_ + i; }

    void assign_slots() override {
        if (groups_) return groups_->assign();
        cu::scan_counts(ordinal_, counts_, offsets_, plan_.threads * plan_.per_thread, words_, total_);
    }

    void finish() override {
        if (groups_) return groups_->add_totals(status_word().word());
        ticket_ = {};  // the execution pass, queued, reports to it
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

    void run(const char* name, void** params, long long blocks) const {
        const cu::CUfunction f = cu::library_function(ordinal_, "slots", library_source(), name);
        const auto stream = cu::current_stream(ordinal_);
        cu::check(cu::require_driver().cuLaunchKernel(f, static_cast<unsigned>(blocks), 1, 1, 256, 1, 1, 0,
                                                      stream->stream, params, nullptr),
                  name);
        cu::note_launch(*stream, site_.kernel + " (slot allocation " + name + ")");
    }

    int ordinal_;
    SlotPlan plan_;
    LaunchSite site_;
    Memory state_;  // everything below lies in it
    void* launch_ = nullptr;
    wf::SlotCounter* counters_ = nullptr;
    wf::i32* counts_ = nullptr;
    wf::i32* offsets_ = nullptr;
    wf::i32* total_ = nullptr;              // the single element's total, from the scan
    uint64_t* words_ = nullptr;             // the chained scan's ticket and tile words
    cu::StatusTicket ticket_;               // one element: the status word the execution pass reports to
    std::optional<CudaSlotGroups> groups_;  // several counter elements
};

}  // namespace

std::unique_ptr<SlotAllocation> prepare_cuda_slots(int ordinal, SlotPlan plan, const LaunchSite& site) {
    return std::make_unique<CudaSlots>(ordinal, std::move(plan), site);
}

}  // namespace weft::runtime::det
