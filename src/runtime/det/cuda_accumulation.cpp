// Deterministic accumulation on a GPU: state in stream-ordered device memory, initialised and
// resolved by library kernels (src/device/kernels/accumulation.cu, records.cu, exact_f64.cu) built
// from the same device header the generated code uses.
#include "runtime/det/cuda_accumulation.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "device/library_abi.h"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/det/state_cache.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

using wf::kernels::det::kExactF64Threads;
using wf::kernels::det::kLongRecords;
using wf::kernels::det::kSumChunk;
using wf::kernels::det::kThreads;
// Digit words per slot of the exact strategy (wf::Exact<float> and wf::Exact<double>).
constexpr int64_t kWordsF32 = 9;
constexpr int64_t kWordsF64 = 66;

// The library kernel `name` on GPU `ordinal`, looked up once per process: a launch's host time
// is mostly these lookups otherwise (the library's source text is built and hashed per lookup).
cu::CUfunction function(int ordinal, const std::string& name) {
    static std::mutex mutex;
    static std::map<std::pair<int, std::string>, cu::CUfunction> found;
    {
        std::lock_guard lock(mutex);
        const auto it = found.find({ordinal, name});
        if (it != found.end()) return it->second;
    }
    const cu::CUfunction f = cu::library_function(ordinal, cu::LibraryModule::Deterministic, name);
    std::lock_guard lock(mutex);
    found[{ordinal, name}] = f;
    return f;
}

using Memory = std::shared_ptr<detail::Allocation>;

// A target's state left clean by its resolve (cells, digit words and flags zeroed; the published
// wf::DetTarget still in place), for the next direct launch into the same target with the same
// plan on the same stream: that launch skips allocating, zeroing and publishing. The stream
// orders the reuse after the resolve; a launch takes the entry out while it runs, so no two
// launches share it; launches being captured into a graph neither take nor leave entries (the
// graph keeps its own state). Sums only, and not carrying ones (their resolve may stop before
// cleaning when a sum left the range).
struct Cached {
    Memory memory;
    wf::DetTarget value;
    wf::DetTarget* state;
    wf::u32* barrier;
    int in_kernel_left;
};

// A compact state's kept anchors are changed only by the resolve kernel (the kernel resolving
// itself keeps them as they are: docs/design/0025), so a direct launch that could resolve in its
// kernel leaves that to the resolve kernel where the state is fresh (its anchors are kept from
// its first launch on) and once in this many launches (slots whose magnitudes moved anchor
// afresh).
constexpr int kInKernelRuns = 16;

// What a cached state must match: the described target (its slot map, before any buffer is
// set), its strategy and element type, its stream and device. Compared bytewise: a described
// wf::DetTarget is value-initialised, so its bytes are its fields.
struct CacheKey {
    wf::DetTarget described;
    const cu::StreamState* stream;
    int ordinal;
    bool compact;
    DType dtype;
    friend bool operator==(const CacheKey& a, const CacheKey& b) {
        return std::memcmp(&a.described, &b.described, sizeof a.described) == 0 && a.stream == b.stream &&
               a.ordinal == b.ordinal && a.compact == b.compact && a.dtype == b.dtype;
    }
};

// Never destroyed: entries hold device memory that must not be freed after the driver is gone.
StateCache<CacheKey, Cached>& state_cache() {
    static auto* cache = new StateCache<CacheKey, Cached>;
    return *cache;
}

int family_code(detail::AtomicOp f) {
    return f == detail::AtomicOp::Add ? 0 : f == detail::AtomicOp::Min ? 1 : 2;
}

// Sums whose resolve leaves their state zeroed on every path (compact cells, exact words and
// flags of the slots it read): not records, min/max or carrying sums, whose resolves may stop
// before cleaning when a sum left the range. Their state can serve the next launch, or every
// replay of a graph, without zeroing.
bool self_cleaning(const TargetPlan& p) {
    return p.target.family == detail::AtomicOp::Add && !p.records && !p.carrying;
}

// A stream of GPU `ordinal` that no capture records: a captured target's state is initialised
// on it once, at capture (never destroyed, as the state cache).
cu::CUstream side_stream(int ordinal) {
    static std::mutex mutex;
    static std::map<int, cu::CUstream> streams;
    std::lock_guard lock(mutex);
    cu::CUstream& s = streams[ordinal];
    if (!s) cu::check(cu::require_driver().cuStreamCreate(&s, cu::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return s;
}

class CudaAccumulation final : public Accumulation {
public:
    CudaAccumulation(int ordinal, std::vector<TargetPlan> plans, const LaunchSite& site)
        : ordinal_(ordinal), site_(site) {
        const auto stream = cu::current_stream(ordinal_);
        const bool captured = cu::capturing(*stream);
        // Direct launches only: in a graph the barrier costs about what the resolve's node does,
        // and a cooperative kernel could not be in a conditional body before CUDA 12.6.
        bool in_kernel = !captured && plans.size() <= size_t{wf::kResolveTargets};
        for (TargetPlan& p : plans) {
            shared_with_.push_back(p.shared_with);
            if (p.shared_with >= 0) {
                owner_index_.push_back(owner_index_[static_cast<size_t>(p.shared_with)]);
                continue;
            }
            in_kernel = in_kernel && self_cleaning(p) && p.target.dtype != DType::Float64;
            targets_.push_back(make_target(std::move(p), *stream, captured));
            in_kernel = in_kernel && (!targets_.back().value.anchors || targets_.back().in_kernel_left > 0);
            owner_index_.push_back(targets_.size() - 1);
        }
        if (!in_kernel) return;
        in_kernel_ = wf::InKernelResolve{};
        for (size_t i = 0; i < shared_with_.size(); ++i)
            if (shared_with_[i] < 0) in_kernel_->targets[i] = targets_[owner_index_[i]].state;
        in_kernel_->barrier = targets_.front().barrier;
        for (const Target& t : targets_)
            in_kernel_->slots = std::max<wf::i64>(in_kernel_->slots, t.plan.slots.count);
    }

    void* state(size_t i) const override { return targets_[owner_index_[i]].state; }

    const wf::InKernelResolve* in_kernel() const override { return in_kernel_ ? &*in_kernel_ : nullptr; }
    void resolved_in_kernel() override { resolved_in_kernel_ = true; }

    void resolve() override {
        for (Target& t : targets_) {
            // (A kernel that resolved its targets left their state clean.)
            if (!resolved_in_kernel_ && t.plan.records)
                resolve_records(t);
            else if (!resolved_in_kernel_ && t.plan.compact)
                resolve_compact(t);
            else if (!resolved_in_kernel_)
                resolve_exact(t);
            if (t.value.anchors)
                t.in_kernel_left = resolved_in_kernel_ ? t.in_kernel_left - 1 : kInKernelRuns - 1;
            if (t.cache_key)
                state_cache().put(*t.cache_key, {t.memory, t.value, t.state, t.barrier, t.in_kernel_left});
        }
        targets_.clear();  // freed in stream order, after the resolve kernels
    }

private:
    struct Target {
        TargetPlan plan;
        Memory memory;  // the state and every buffer its kernels write, in one allocation
        wf::DetTarget value{};
        wf::DetTarget* state = nullptr;
        wf::u32* barrier = nullptr;         // the grid barrier's word of a kernel resolving it (sums)
        int in_kernel_left = 0;             // launches it may resolve in the kernel (kInKernelRuns)
        std::optional<CacheKey> cache_key;  // set when the state goes back to the cache after the resolve
    };

    // Where each buffer of a target lies in its one allocation (each 16-byte aligned). One
    // allocation per target keeps the host's work per launch small, and puts the buffers that
    // start at zero side by side, so that one memset clears them.
    class Layout {
    public:
        Layout(const TargetPlan& p, const LaunchSite& site) : plan_(p), site_(site) {}
        size_t add(int64_t count, size_t size) {
            const size_t at = bytes_;
            const size_t n = state_bytes(plan_, count, size, site_);
            if (__builtin_add_overflow(at, (n + 15) / 16 * 16, &bytes_))
                state_allocation_failed(plan_, "it needs more bytes than memory can address", site_);
            return at;
        }
        size_t bytes() const { return bytes_; }

    private:
        const TargetPlan& plan_;
        const LaunchSite& site_;
        size_t bytes_ = 0;
    };

    // `bytes` of device memory for target `p`; failure names the target.
    Memory allocate(const TargetPlan& p, size_t bytes) const {
        try {
            return detail::allocate(Device::cuda(ordinal_), bytes);
        } catch (const Error& e) {
            state_allocation_failed(p, e.message(), site_);
        }
    }
    // On stream `on`, or on the current stream when it is null.
    void zero(void* p, size_t bytes, cu::CUstream on) const {
        if (!on) return detail::zero_bytes(p, Device::cuda(ordinal_), bytes);
        cu::check(cu::require_driver().cuMemsetD8Async(reinterpret_cast<cu::CUdeviceptr>(p), 0, bytes, on),
                  "memset");
    }
    // Half-precision targets keep float32's state; only their resolve kernels are their own.
    bool f32_state(const Target& t) const { return t.plan.target.dtype != DType::Float64; }
    // A records target's words zeroed by its publishing kernel: the cursors and summary, and for
    // a one-element target its sum's digit words, then its flags and pieces counted (two u32s).
    int64_t record_zeroed_words(const Target& t) const {
        const int64_t sum = t.plan.slots.count == 1 ? (f32_state(t) ? kWordsF32 : kWordsF64) + 1 : 0;
        return record_cursor_words(t.plan) + sum;
    }
    std::string resolve_kernel(const Target& t, const char* prefix) const {
        switch (t.plan.target.dtype) {
            case DType::Float16: return std::string(prefix) + "_f16";
            case DType::BFloat16: return std::string(prefix) + "_bf16";
            case DType::Float64: return std::string(prefix) + "_f64";
            default: return std::string(prefix) + "_f32";
        }
    }

    Target make_target(TargetPlan plan, cu::StreamState& stream, bool captured) {
        Target t{std::move(plan)};
        const TargetPlan& p = t.plan;
        const SlotMap& m = p.slots;
        describe_slots(p, t.value);
        const bool add = p.target.family == detail::AtomicOp::Add;
        if (self_cleaning(p) && !captured) {
            t.cache_key = CacheKey{t.value, &stream, ordinal_, p.compact, p.target.dtype};
            if (std::optional<Cached> c = state_cache().take(*t.cache_key)) {
                t.memory = std::move(c->memory);
                t.value = c->value;
                t.state = c->state;
                t.barrier = c->barrier;
                t.in_kernel_left = c->in_kernel_left;
                return t;
            }
        }
        // Records appended, or a carrying target's count of slots out of range.
        const bool cursor = p.records || p.carrying;
        Layout layout(p, site_);
        const size_t state_at = layout.add(1, sizeof(wf::DetTarget));
        const size_t zero_from = layout.bytes();
        const size_t cursor_at = cursor ? layout.add(p.records ? record_zeroed_words(t) : 1, 8) : 0;
        size_t words_at = 0, flags_at = 0, records_at = 0, record_slots_at = 0, cells_at = 0, spill_at = 0,
               anchors_at = 0;
        // Anchors kept between launches: only where the state serves more than one.
        const bool keeps_anchors = p.compact && self_cleaning(p);
        int64_t n = 0;
        if (p.records) {
            records_at = layout.add(p.capacity, 8);
            record_slots_at = layout.add(p.capacity, 4);
        } else if (p.compact) {
            cells_at = layout.add(m.count, sizeof(wf::CompactCell));
            spill_at = layout.add(__builtin_mul_overflow(m.count, int64_t{wf::kSpillWords}, &n) ? -1 : n, 8);
            if (keeps_anchors) anchors_at = layout.add(m.count, 1);
        } else {
            const int64_t per_slot = !add ? 1 : f32_state(t) ? kWordsF32 : kWordsF64;
            words_at = layout.add(__builtin_mul_overflow(m.count, per_slot, &n) ? -1 : n, 8);
            if (add) flags_at = layout.add(m.count, 4);
        }
        const size_t barrier_at = layout.add(1, 4);  // (zeroed with the digits, or by the publish)
        const size_t zero_to = layout.bytes();
        t.memory = allocate(p, layout.bytes());
        char* base = static_cast<char*>(t.memory->ptr);
        t.state = reinterpret_cast<wf::DetTarget*>(base + state_at);
        t.barrier = reinterpret_cast<wf::u32*>(base + barrier_at);
        if (cursor) t.value.cursor = reinterpret_cast<wf::u64*>(base + cursor_at);
        // A captured state that every resolve leaves clean is initialised once, now, outside the
        // graph (its memory is allocated outside stream order, so it exists already): a replay
        // then runs no publishing node, only the kernel and the resolve (docs/design/0024).
        const bool once = captured && self_cleaning(p) && t.memory->captured;
        std::optional<cu::UnsafeCallsAllowed> unsafe;
        if (once) unsafe.emplace();
        const cu::CUstream on = once ? side_stream(ordinal_) : nullptr;  // null: the launch's stream
        void* state_ptr = t.state;
        void* barrier_ptr = t.barrier;
        if (p.compact) {
            // Cells zeroed and anchors cleared by the publishing kernel (and the barrier and
            // cursor); spill blocks where a slot first spills.
            t.value.cells = reinterpret_cast<wf::CompactCell*>(base + cells_at);
            t.value.spill = reinterpret_cast<wf::i64*>(base + spill_at);
            if (keeps_anchors) t.value.anchors = reinterpret_cast<wf::u8*>(base + anchors_at);
            void* params[] = {&state_ptr, &t.value, &barrier_ptr};
            launch("det_publish_compact", m.count, params, kThreads, on);
            if (once) wait(on);
            return t;
        }
        if (p.records) {
            t.value.records = reinterpret_cast<wf::u64*>(base + records_at);
            t.value.record_slots = reinterpret_cast<wf::u32*>(base + record_slots_at);
            t.value.capacity = p.capacity;
            t.value.regions = p.regions;
            t.value.region_shift = p.region_shift;
            t.value.region_records = p.region_records;
            // The cursors zeroed by the publishing kernel: one node of a captured graph.
            int words = static_cast<int>(record_zeroed_words(t));
            void* params[] = {&state_ptr, &t.value, &words};
            launch("det_publish_records", words, params);
            return t;
        } else {
            t.value.words = reinterpret_cast<wf::i64*>(base + words_at);
            if (add) {  // the barrier, cursor, digit words and flags: one memset
                t.value.flags = reinterpret_cast<wf::u32*>(base + flags_at);
                zero(base + zero_from, zero_to - zero_from, on);
            }
        }
        int keys = !add ? 1 : 0;
        int is_max = p.target.family == detail::AtomicOp::Max ? 1 : 0;
        void* params[] = {&state_ptr, &t.value, &keys, &is_max};
        launch(f32_state(t) ? "det_publish_f32" : "det_publish_f64", keys ? m.count : 1, params, kThreads,
               on);
        if (once) wait(on);
        return t;
    }

    // Waits for the initialisation of a captured target's state on `side` (a stream no capture
    // records).
    static void wait(cu::CUstream side) {
        cu::check(cu::require_driver().cuStreamSynchronize(side),
                  "initialising deterministic state for a graph");
    }

    void resolve_compact(Target& t) const {
        cu::StatusTicket ticket;  // a carrying target reports the slots out of range
        if (t.plan.carrying) {
            ticket = status_word(t, false);
            void* check_params[] = {&t.value};
            launch("det_count_compact_out_of_range", t.plan.slots.count, check_params);
        }
        wf::u64* report = ticket.word();
        void* params[] = {&t.state, &t.value, &report};
        launch(resolve_kernel(t, "det_resolve_compact").c_str(), t.plan.slots.count, params);
    }

    void resolve_exact(Target& t) const {
        cu::StatusTicket ticket;  // a carrying target reports the slots out of range
        if (t.plan.carrying) {
            ticket = status_word(t, false);
            void* check_params[] = {&t.value};
            launch("det_count_out_of_range", t.plan.slots.count, check_params);
        }
        int family = family_code(t.plan.target.family);
        wf::u64* report = ticket.word();
        int clean = self_cleaning(t.plan) ? 1 : 0;
        if (family == 0 && !f32_state(t)) {  // float64 sums: a warp per 32 slots (kernels/exact_f64.cu)
            void* params[] = {&t.value, &report, &clean};
            launch("det_resolve_sum_f64", t.plan.slots.count, params, kExactF64Threads);
            return;
        }
        void* params[] = {&t.value, &family, &report, &clean};
        launch(resolve_kernel(t, "det_resolve").c_str(), t.plan.slots.count, params);
    }

    // The status word in which the resolve kernels leave the target's count (records emitted,
    // past the capacity, or slots out of range); the stream's next synchronization reports it.
    // Work captured into a graph keeps its word, so a replay that fails reports too.
    cu::StatusTicket status_word(const Target& t, bool records) const {
        const LaunchSite& site = site_;
        const std::string message =
            records ? overflow_message(t.plan, 0, site) : range_message(t.plan, 0, site);
        const std::string key =
            site.kernel + "\n" + site.file + ":" + std::to_string(site.line) + "\n" + message;
        return cu::status_word(
            cu::current_stream(ordinal_), key, [plan = t.plan, site, records](uint64_t count) {
                throw Error(records ? overflow_message(plan, count, site) : range_message(plan, count, site),
                            site.kernel, site.file, site.line);
            });
    }

    // Counted, scanned, grouped, then reduced in one kernel: short segments one warp each, long
    // ones by blocks of kSumChunk records (the last block to add to a long segment rounds it).
    void resolve_records(Target& t) const {
        const int64_t slots = t.plan.slots.count;
        const int64_t wave = static_cast<int64_t>(cu::context(ordinal_).sm_count) * 2048;
        const int64_t chunks = (t.plan.capacity + kSumChunk - 1) / kSumChunk;
        const cu::StatusTicket ticket = status_word(t, true);
        wf::u64* report = ticket.word();
        if (slots == 1) {  // no counting or grouping: one kernel sums the records as emitted
            wf::i64* acc = reinterpret_cast<wf::i64*>(t.value.cursor + record_cursor_words(t.plan));
            wf::u32* acc_flags = reinterpret_cast<wf::u32*>(acc + (f32_state(t) ? kWordsF32 : kWordsF64));
            unsigned* done = acc_flags + 1;
            void* params[] = {&t.value, &acc, &acc_flags, &done, &report};
            launch(resolve_kernel(t, "det_sum_one_element").c_str(), std::min(chunks * kThreads, wave),
                   params);
            return;
        }
        const int64_t ids = (t.plan.capacity + kLongRecords - 1) / kLongRecords;
        const int64_t words = f32_state(t) ? kWordsF32 : kWordsF64;
        const int64_t record_threads = std::min<int64_t>(t.plan.capacity, wave);
        // One allocation; the buffers that start at zero (the counts, the long segments'
        // accumulators) first, cleared by one memset.
        Layout layout(t.plan, site_);
        const size_t counts_at = layout.add(slots, 4);
        int64_t n = 0;
        const size_t words_at = layout.add(__builtin_mul_overflow(ids, words, &n) ? -1 : n, 8);
        const size_t flags_at = layout.add(ids, 4);
        const size_t done_at = layout.add(ids, 4);
        const size_t zero_to = layout.bytes();
        // Each counting block's hot slot and count, for the grouping block of the same number.
        const size_t block_hot_at = layout.add((record_threads + kThreads - 1) / kThreads, 8);
        const size_t ends_at = layout.add(slots, 4);
        const size_t grouped_at = layout.add(t.plan.capacity, 8);
        const Memory buffers = allocate(t.plan, layout.bytes());
        char* base = static_cast<char*>(buffers->ptr);
        detail::zero_bytes(base, Device::cuda(ordinal_), zero_to);
        void* counts_ptr = base + counts_at;
        void* ends_ptr = base + ends_at;
        void* grouped_ptr = base + grouped_at;
        void* long_words = base + words_at;
        void* long_flags = base + flags_at;
        void* long_done = base + done_at;
        void* block_hot = base + block_hot_at;
        void* count_params[] = {&t.value, &counts_ptr, &report, &block_hot};
        launch("det_count_records", record_threads, count_params);
        cu::scan(ordinal_, DType::Int32, counts_ptr, ends_ptr, slots, true);
        void* group_params[] = {&t.value, &counts_ptr, &ends_ptr, &grouped_ptr, &block_hot};
        launch("det_group_records", record_threads, group_params);
        // Long segments by the first blocks (at most a wave, striding over chunks), short ones a
        // warp each by the rest.
        auto sum_blocks = static_cast<unsigned>(std::min(chunks, wave / kThreads));
        const int64_t reduce_threads = slots * 32;
        void* sum_params[] = {&t.value,    &ends_ptr,  &grouped_ptr, &long_words,
                              &long_flags, &long_done, &sum_blocks};
        launch(resolve_kernel(t, "det_sum_records").c_str(), sum_blocks * int64_t{kThreads} + reduce_threads,
               sum_params);
    }

    // Queues library kernel `name` over `threads` threads, `block` a block, on `on` (the current
    // stream when null); a kernel on the current stream is noted for the reports of its
    // asynchronous failures.
    void launch(const char* name, int64_t threads, void** params, int block = kThreads,
                cu::CUstream on = nullptr) const {
        const cu::CUfunction f = function(ordinal_, name);
        const auto stream = on ? nullptr : cu::current_stream(ordinal_);
        const auto blocks = static_cast<unsigned>((threads + block - 1) / block);
        cu::check(cu::require_driver().cuLaunchKernel(f, blocks == 0 ? 1 : blocks, 1, 1,
                                                      static_cast<unsigned>(block), 1, 1, 0,
                                                      on ? on : stream->stream, params, nullptr),
                  name);
        if (stream) cu::note_launch(*stream, site_.kernel + " (deterministic " + name + ")");
    }

    int ordinal_;
    LaunchSite site_;
    std::vector<Target> targets_;                   // owners only
    std::vector<int> shared_with_;                  // per plan
    std::vector<size_t> owner_index_;               // per plan: its (or its owner's) index in targets_
    std::optional<wf::InKernelResolve> in_kernel_;  // set when the kernel may resolve every target
    bool resolved_in_kernel_ = false;
};

}  // namespace

std::unique_ptr<Accumulation> prepare_cuda(int ordinal, std::vector<TargetPlan> plans,
                                           const LaunchSite& site) {
    return std::make_unique<CudaAccumulation>(ordinal, std::move(plans), site);
}

}  // namespace weft::runtime::det
