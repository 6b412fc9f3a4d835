// Slot allocation on a GPU, with no host synchronization. One counter element (the common case:
// compaction): the slots are an exclusive scan of the reservation counts, done inside the two
// passes where each thread has one reservation position (src/device/slots.h), else by a scan
// kernel. Several elements: the reservations are grouped per element on the device
// (cuda_slot_groups, docs/design/0021).
#include "runtime/det/cuda_slots.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "device/library_abi.h"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/cuda_module.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/det/cuda_slot_groups.hpp"
#include "runtime/det/state_cache.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

using wf::kernels::slots::CounterChunk;
using wf::kernels::slots::kCountersPerPublish;

using Memory = std::shared_ptr<detail::Allocation>;

// The key of a launch's status word: launches whose failures would read alike share one word.
// Made of what the messages are made of (the site, the counters, the reservations planned, the
// other arrays the launch writes), not of the messages, which are built only when one is raised:
// the key is made at every launch. (Names are identifiers: a newline separates them unambiguously.)
std::string status_key(const SlotPlan& plan, const LaunchSite& site) {
    std::string key = "slots\n";
    key += site.kernel;
    key += '\n';
    key += site.file;
    key += ':';
    key += std::to_string(site.line);
    key += '\n';
    key += std::to_string(plan.per_thread);
    key += plan.dynamic ? " dynamic" : " fixed";
    for (const std::string& name : plan.names) {
        key += '\n';
        key += name;
    }
    // late_failure_note's part: none without written arrays, else those the counters are not.
    key += site.written.empty() ? "\n-" : "\n+";
    for (const std::string& name : site.written)
        if (std::find(plan.names.begin(), plan.names.end(), name) == plan.names.end()) {
            key += '\n';
            key += name;
        }
    return key;
}

// Whether a capture records a cooperative launch (the fused entry's) as a node that runs: tried
// once per device on a private stream's capture, where a refusal invalidates only that capture,
// then instantiated and run. Asked only while the caller's stream is capturing.
bool cooperative_launches_capture(int ordinal) {
    static std::mutex mutex;
    static std::vector<std::pair<int, bool>> known;
    std::lock_guard lock(mutex);
    for (const auto& [device, works] : known)
        if (device == ordinal) return works;
    const cu::UnsafeCallsAllowed unsafe;
    const cu::CUfunction f = cu::library_function(ordinal, cu::LibraryModule::Slots, "slots_probe");
    const cu::Driver& d = cu::require_driver();
    bool works = false;
    cu::CUstream side = nullptr;
    if (cu::context(ordinal).cooperative && d.cuStreamCreate(&side, cu::CU_STREAM_NON_BLOCKING) == 0) {
        if (d.cuStreamBeginCapture(side, cu::CU_STREAM_CAPTURE_MODE_RELAXED) == 0) {
            const bool launched = d.cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, side, nullptr) == 0;
            cu::CUgraph graph = nullptr;
            const bool captured = d.cuStreamEndCapture(side, &graph) == 0 && launched && graph;
            cu::CUgraphExec exec = nullptr;
            works = captured && d.cuGraphInstantiateWithFlags(&exec, graph, 0) == 0 &&
                    d.cuGraphLaunch(exec, side) == 0 && d.cuStreamSynchronize(side) == 0;
            if (exec) d.cuGraphExecDestroy(exec);
            if (graph) d.cuGraphDestroy(graph);
        }
        d.cuStreamDestroy(side);
    }
    known.emplace_back(ordinal, works);
    return works;
}

// What the publish kernel writes at the front of the state: the launch's words and its counters.
struct Published {
    wf::SlotLaunch value{};
    std::vector<wf::SlotCounter> counters;
    bool operator==(const Published& o) const {
        return std::memcmp(&value, &o.value, sizeof value) == 0 && counters.size() == o.counters.size() &&
               std::memcmp(counters.data(), o.counters.data(), counters.size() * sizeof(wf::SlotCounter)) ==
                   0;
    }
};

// One-element state kept between direct launches of the same shape on the same stream
// (reduce-then-scan only: its words are reset by their last user on the device, slots.h), so that
// such a launch queues only its two passes. A launch takes its entry out while it runs.
struct Kept {
    Memory memory;
    Published published;
};

// Never destroyed: entries hold device memory that must not be freed after the driver is gone.
StateCache<std::string, Kept>& state_cache() {
    static auto* cache = new StateCache<std::string, Kept>;
    return *cache;
}

class CudaSlots final : public SlotAllocation {
public:
    CudaSlots(int ordinal, SlotPlan plan, const LaunchSite& site)
        : ordinal_(ordinal), plan_(std::move(plan)), site_(site) {
        // One element, one position per thread: reduce-then-scan inside the two passes (slots.h),
        // no scan kernel, no keys (every reservation is on the one element) and no offsets (the
        // execution pass hands each thread its own).
        tiled_ = plan_.single_element && plan_.per_thread == 1;
        const unsigned blocks = tiled_ ? cu::entry_blocks(ordinal_, plan_.threads, plan_.block_dim) : 0;
        // The fused entry's grid, one block per tile, where the device could hold it at once.
        const int64_t tiles = (plan_.threads + plan_.block_dim - 1) / plan_.block_dim;
        const int64_t fused_blocks =
            tiled_ && tiles <= cu::fused_blocks_at_most(ordinal_, plan_.block_dim) ? tiles : 0;
        // One allocation per launch: the launch's state, its counters, then the words the publish
        // kernel zeroes (the status, the total, the two counts of finished blocks, the chained
        // scan's, the fused entry's). Counts need no zeroing: the counting pass writes every
        // position, 0 where a thread made no reservation (slots.h); nor do the block totals, which
        // every counting block writes.
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
        const size_t counted_at = take(8);
        const bool chained = plan_.single_element && !tiled_;
        const size_t words_at = take(chained ? static_cast<size_t>(cu::chained_scan_words(n)) * 8 : 0);
        const size_t finished_at = take(fused_blocks ? 8 : 0);
        const size_t fused_totals_at = take(static_cast<size_t>(fused_blocks) * 8);
        const size_t fused_groups_at = take(static_cast<size_t>((fused_blocks + 31) / 32) * 8);
        const size_t zeroed_end = bytes;
        const size_t blocks_at = take(static_cast<size_t>(blocks) * 8);
        const size_t counts_at = take(static_cast<size_t>(n) * 4);
        const size_t keys_at = take(tiled_ ? 0 : static_cast<size_t>(n) * 8);
        const size_t offsets_at = take(tiled_ ? 0 : static_cast<size_t>(n) * 4);
        const size_t reserved_at = take(static_cast<size_t>(plan_.threads) * 4);

        const auto stream = cu::current_stream(ordinal_);
        const bool capturing = cu::capturing(*stream);
        captured_ = capturing;
        std::optional<Kept> kept;
        if (tiled_ && !capturing) {
            const void* s = stream.get();
            cache_key_.assign(reinterpret_cast<const char*>(&s), sizeof s);
            cache_key_ += std::to_string(ordinal_) + " " + std::to_string(plan_.threads) + " " +
                          std::to_string(plan_.block_dim) + " " + std::to_string(blocks) + " " +
                          std::to_string(plan_.spans.size()) + " " + std::to_string(bytes);
            kept = state_cache().take(cache_key_);
        }
        state_ = kept ? kept->memory : detail::allocate(Device::cuda(ordinal_), bytes);
        char* const base = static_cast<char*>(state_->ptr);
        launch_ = base + launch_at;
        counters_ = reinterpret_cast<wf::SlotCounter*>(base + counters_at);
        wf::SlotLaunch value{tiled_ ? nullptr : reinterpret_cast<wf::u64*>(base + keys_at),
                             reinterpret_cast<wf::i32*>(base + counts_at),
                             tiled_ ? nullptr : reinterpret_cast<wf::i32*>(base + offsets_at),
                             reinterpret_cast<wf::i32*>(base + reserved_at),
                             plan_.per_thread,
                             reinterpret_cast<wf::u32*>(base + status_at),
                             nullptr,
                             reinterpret_cast<wf::i32*>(base + total_at),
                             nullptr,
                             reinterpret_cast<wf::u32*>(base + done_at),
                             tiled_ ? reinterpret_cast<wf::i64*>(base + blocks_at) : nullptr,
                             reinterpret_cast<wf::u32*>(base + counted_at)};
        // One element: the execution pass's last block adds the total (slots.h), no kernel after it.
        // Its status word's ticket is held until the execution pass is queued (finish()).
        if (plan_.single_element) {
            ticket_ = status_word();
            value.single = reinterpret_cast<wf::i32*>(plan_.single);
            value.report = ticket_.word();
        }
        if (fused_blocks)
            fused_ = {reinterpret_cast<wf::u64*>(base + fused_totals_at),
                      reinterpret_cast<wf::u64*>(base + fused_groups_at),
                      reinterpret_cast<wf::u64*>(base + finished_at), value.single, value.report};
        counts_ = value.counts;
        offsets_ = value.offsets;
        total_ = value.total;
        words_ = reinterpret_cast<uint64_t*>(base + words_at);
        published_.value = value;
        for (size_t i = 0; i < plan_.spans.size(); ++i) {
            const size_t owner = plan_.owner[i];
            published_.counters.push_back(
                {static_cast<wf::SlotLaunch*>(launch_), owner, plan_.spans[owner].base});
        }
        if (kept) {
            // Its words are clean (their last users reset them); only a changed counter or
            // status word is published again.
            if (!(kept->published == published_)) publish(value, nullptr, 0);
        } else if ((tiled_ || (!plan_.single_element && CudaSlotGroups::resets_status(plan_))) &&
                   state_->captured) {
            // Memory that a graph holds for all its replays (allocated outside the capture):
            // written once, outside the capture, so that the graph has no publish node (the
            // words it zeroes are left clean by their last users).
            write_outside_capture(base, launch_at, counters_at, zeroed_end);
        } else {
            // Published by a kernel, not copied from the host, so that the launch can be captured.
            publish(value, base + status_at, static_cast<long long>((zeroed_end - status_at) / 8));
        }
        if (!plan_.single_element) groups_.emplace(ordinal_, plan_, launch_, value);
    }

    void* counter(size_t i) const override { return counters_ + i; }
    // Captured work only where captures take cooperative launches (else the capture would fail),
    // and not in a conditional body (not probed).
    const wf::FusedSlots* fused_state() const override {
        if (!fused_.totals) return nullptr;
        if (captured_ && (cu::current_stream(ordinal_)->conditional_bodies.load() != 0 ||
                          !cooperative_launches_capture(ordinal_)))
            return nullptr;
        return &fused_;
    }

    void assign_slots() override {
        if (groups_) return groups_->assign();
        if (tiled_) return;  // the passes scan (slots.h)
        cu::scan_counts(ordinal_, counts_, offsets_, plan_.threads * plan_.per_thread, words_, total_);
    }

    void finish() override {
        if (groups_) return groups_->add_totals(status_word().word());
        ticket_ = {};  // the execution pass, queued, reports to it
        // In stream order after the execution pass, whose last block leaves the words clean.
        if (!cache_key_.empty()) state_cache().put(std::move(cache_key_), {state_, published_});
    }

private:
    // Where the launch's failures go (its status bits), reported at the stream's next
    // synchronization; work captured into a graph keeps its word.
    cu::StatusTicket status_word() const {
        const SlotPlan& plan = plan_;
        const LaunchSite& site = site_;
        return cu::status_word(
            cu::current_stream(ordinal_), status_key(plan, site), [plan, site](uint64_t bits) {
                if (bits & wf::kSlotsOverflow)
                    throw Error(slots_overflow_message(plan), site.kernel, site.file, site.line);
                if (bits & wf::kSlotsTooMany)
                    throw Error(slots_too_many_message(plan), site.kernel, site.file, site.line);
                // Found at the launch (deterministic_debug), the launch is undone and says so;
                // found later, the counters keep their values and the note names what was applied.
                const std::string late = late_failure_note(site, plan.names);
                throw Error(
                    slots_divergence_message(plan) +
                        (late.empty() ? ""
                                      : ". The counters keep their values from before the launch" + late),
                    site.kernel, site.file, site.line);
            });
    }

    // The publish kernels: the launch's state and counters, and `zeroed_words` words zeroed.
    void publish(wf::SlotLaunch value, void* zeroed, long long zeroed_words) const {
        for (size_t at = 0; at < published_.counters.size(); at += kCountersPerPublish) {
            CounterChunk chunk{};
            int count =
                static_cast<int>(std::min<size_t>(kCountersPerPublish, published_.counters.size() - at));
            for (int i = 0; i < count; ++i) chunk.counters[i] = published_.counters[at + i];
            void* launch_ptr = launch_;
            void* counters_ptr = counters_ + at;
            void* params[] = {&launch_ptr, &value, &counters_ptr, &count, &chunk, &zeroed, &zeroed_words};
            run("slots_publish", params, std::min<long long>(zeroed_words / 256 + 1, 1024));
            zeroed_words = 0;  // the first chunk's kernel did it
        }
    }

    // The front of the state ([0, zeroed_end): the launch, its counters, its zeroed words) copied
    // from the host on a stream of its own, which no capture records, and waited for.
    void write_outside_capture(char* base, size_t launch_at, size_t counters_at, size_t zeroed_end) const {
        std::vector<char> image(zeroed_end, 0);
        std::memcpy(image.data() + launch_at, &published_.value, sizeof published_.value);
        std::memcpy(image.data() + counters_at, published_.counters.data(),
                    published_.counters.size() * sizeof(wf::SlotCounter));
        const cu::UnsafeCallsAllowed unsafe;
        const cu::Driver& d = cu::require_driver();
        cu::CUstream side = nullptr;
        cu::check(d.cuStreamCreate(&side, cu::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        const cu::CUresult copied =
            d.cuMemcpyHtoDAsync(reinterpret_cast<cu::CUdeviceptr>(base), image.data(), image.size(), side);
        const cu::CUresult waited = copied == 0 ? d.cuStreamSynchronize(side) : copied;
        d.cuStreamDestroy(side);
        cu::check(waited, "writing slot allocation state for a graph");
    }

    void run(const char* name, void** params, long long blocks) const {
        cu::launch_library_kernel(ordinal_, cu::LibraryModule::Slots, name, static_cast<unsigned>(blocks),
                                  256, params, site_.kernel + " (slot allocation " + name + ")");
    }

    int ordinal_;
    SlotPlan plan_;
    LaunchSite site_;
    bool tiled_ = false;     // one element, one position per thread: no scan kernel
    bool captured_ = false;  // queued into a capture
    Memory state_;           // everything below lies in it
    Published published_;    // what lies at its front
    std::string cache_key_;  // set when the state goes back to the cache after the launch
    void* launch_ = nullptr;
    wf::SlotCounter* counters_ = nullptr;
    wf::i32* counts_ = nullptr;
    wf::i32* offsets_ = nullptr;
    wf::FusedSlots fused_{};                // the fused entry's words (null: no fused launch)
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
