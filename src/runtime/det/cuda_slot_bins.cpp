// Slot allocation into at most 65,536 counter elements on a GPU. Above 256 elements the
// reservations are first partitioned, stably, into 256 buckets by the high byte of their compact
// key (a counting kernel that also packs each position's key and count into one word, then a
// scatter whose tiles chain their bucket counts by decoupled look-back); then one kernel ranks
// each bucket's reservations (or, in position order, all of them) by the key's low byte in
// chunks of 2,304 chained by look-back, and writes each reservation's offset and each element's
// total. Each launch leaves its words clean, so state a graph holds is written once, outside the
// capture. The kernels: src/device/kernels/slot_bins.cu.
#include "runtime/det/cuda_slot_bins.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/det/cuda_slot_spans.hpp"
#include "runtime/det/state_cache.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

using wf::kernels::kSpansPerPublish;
using wf::kernels::SpanChunk;
using namespace wf::kernels::slot_bins;

size_t rounded(size_t bytes) {
    return (bytes + 15) / 16 * 16;
}

// Copies `bytes` from the host to `device` on a stream of its own, which no capture records, and
// waits for it: state that a graph holds for all its replays, written before the capture's work.
void write_outside_capture(void* device, const void* host, size_t bytes) {
    const cu::UnsafeCallsAllowed unsafe;
    const cu::Driver& d = cu::require_driver();
    cu::CUstream side = nullptr;
    cu::check(d.cuStreamCreate(&side, cu::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    const cu::CUresult copied =
        d.cuMemcpyHtoDAsync(reinterpret_cast<cu::CUdeviceptr>(device), host, bytes, side);
    const cu::CUresult waited = copied == 0 ? d.cuStreamSynchronize(side) : copied;
    d.cuStreamDestroy(side);
    cu::check(waited, "writing slot allocation state for a graph");
}

// State kept between direct launches of the same shape on the same stream: every launch leaves
// its words clean, so the next one publishes only a changed span table. A launch takes its entry
// out while it runs.
struct Kept {
    std::shared_ptr<detail::Allocation> memory;
    std::vector<GroupSpan> table;
};

// Never destroyed: entries hold device memory that must not be freed after the driver is gone.
StateCache<std::string, Kept>& state_cache() {
    static auto* cache = new StateCache<std::string, Kept>;
    return *cache;
}

bool same_table(const std::vector<GroupSpan>& a, const std::vector<GroupSpan>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(GroupSpan)) == 0;
}

}  // namespace

CudaSlotBins::CudaSlotBins(int ordinal, const SlotPlan& plan, const wf::SlotLaunch& launch)
    : ordinal_(ordinal),
      launch_(launch),
      n_(plan.threads * plan.per_thread),
      per_thread_(static_cast<unsigned>(plan.per_thread)) {
    unsigned long long elements = 0;
    const std::vector<GroupSpan> table = group_spans(plan, elements);
    elements_ = static_cast<long long>(elements);
    span_count_ = static_cast<long long>(table.size());
    partitioned_ = elements_ > kBins;
    tiles_ = partitioned_ ? (n_ + kTile - 1) / kTile : 0;
    const long long buckets = partitioned_ ? (elements_ + kBins - 1) / kBins : 1;
    // A bucket's chunks: its reservations over kChunk, rounded up (at most one part-filled each).
    chunks_ = (n_ + kChunk - 1) / kChunk + (partitioned_ && n_ > 0 ? buckets : 0);
    const auto n = static_cast<size_t>(n_);
    const size_t counts = static_cast<size_t>(tiles_ * kBins);
    scan_words_ = partitioned_ ? cu::chained_scan_words(static_cast<int64_t>(counts)) : 0;
    // One allocation: the span table, the zeroed words (control, the chunks' look-back words,
    // the scan's words), the partition's item words, records, tile counts and bases, and the
    // per-key totals.
    size_t bytes = 0;
    const auto take = [&bytes](size_t size) {
        const size_t at = bytes;
        bytes += rounded(size);
        return at;
    };
    const size_t spans_at = take(table.size() * sizeof(GroupSpan));
    const size_t zeroed_at = take(sizeof(Control));
    const size_t chunk_words_at = take(static_cast<size_t>(chunks_ * kBins) * 8);
    const size_t scan_words_at = take(static_cast<size_t>(scan_words_) * 8);
    const size_t zeroed_end = bytes;
    const size_t items_at = take(partitioned_ ? n * 4 : 0);
    const size_t records_at = take(partitioned_ ? n * 4 : 0);
    const size_t positions_at = take(partitioned_ ? n * 4 : 0);
    const size_t tile_counts_at = take(counts * 4);
    const size_t tile_bases_at = take(counts * 4);
    const size_t reached_at = take(4);
    const size_t totals_at = take(static_cast<size_t>(buckets * kBins) * 4);
    std::optional<Kept> kept;
    if (!cu::capturing(*cu::current_stream(ordinal_))) {
        const void* stream = cu::current_stream(ordinal_).get();
        cache_key_.assign(reinterpret_cast<const char*>(&stream), sizeof stream);
        cache_key_ += std::to_string(ordinal_) + " " + std::to_string(n_) + " " +
                      std::to_string(per_thread_) + " " + std::to_string(elements_) + " " +
                      std::to_string(bytes);
        kept = state_cache().take(cache_key_);
    }
    state_ = kept ? kept->memory : detail::allocate(Device::cuda(ordinal_), bytes);
    table_ = table;
    char* const base = static_cast<char*>(state_->ptr);
    spans_ = base + spans_at;
    control_ = base + zeroed_at;
    chunk_words_ = base + chunk_words_at;
    scan_words_ptr_ = base + scan_words_at;
    items_ = base + items_at;
    tile_counts_ = base + tile_counts_at;
    tile_bases_ = base + tile_bases_at;
    reached_ = base + reached_at;
    records_ = base + records_at;
    positions_ = base + positions_at;
    totals_ = base + totals_at;
    if (state_->captured) {
        // Memory that a graph holds for all its replays: every replay leaves the words clean
        // (slot_bins_totals), so the graph needs no publish node.
        std::vector<char> image(zeroed_end, 0);
        std::copy_n(reinterpret_cast<const char*>(table.data()), table.size() * sizeof(GroupSpan),
                    image.data());
        write_outside_capture(base, image.data(), image.size());
        return;
    }
    if (kept && same_table(kept->table, table)) return;
    // Published by a kernel, not a copy from the host, so that the launch queues no host work;
    // kept state has clean words.
    void* zeroed = control_;
    auto zeroed_words = kept ? 0ll : static_cast<long long>((zeroed_end - zeroed_at) / 8);
    for (size_t at = 0; at < table.size(); at += kSpansPerPublish) {
        SpanChunk chunk{};
        int count = static_cast<int>(std::min<size_t>(kSpansPerPublish, table.size() - at));
        std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(at), count, chunk.spans);
        void* table_ptr = spans_;
        int first_index = static_cast<int>(at);
        void* params[] = {&table_ptr, &first_index, &count, &chunk, &zeroed, &zeroed_words};
        run("slot_bins_publish", std::min<long long>(zeroed_words / kThreads + 1, 1024), kThreads, params);
        zeroed_words = 0;  // the first chunk's kernel did it
    }
}

void CudaSlotBins::assign() {
    if (n_ == 0) return;
    wf::SlotLaunch launch = launch_;
    void* spans = spans_;
    long long n = n_;
    Partition partition{nullptr, nullptr, tiles_};
    if (partitioned_) {
        long long tiles = tiles_;
        void* count_params[] = {&launch, &spans, &span_count_, &n, &tiles, &items_, &tile_counts_};
        run("slot_bins_count", tiles_, kThreads, count_params);
        cu::scan_counts(ordinal_, static_cast<const int32_t*>(tile_counts_),
                        static_cast<int32_t*>(tile_bases_), tiles_ * kBins,
                        static_cast<uint64_t*>(scan_words_ptr_), static_cast<int32_t*>(reached_));
        partition = {static_cast<const int*>(tile_bases_), static_cast<const int*>(reached_), tiles_};
        void* partition_params[] = {&launch, &items_, &n, &partition, &records_, &positions_};
        run("slot_bins_partition", tiles_, kThreads, partition_params);
    }
    // Partitioned, the offsets kernel needs no span table (the keys are compact already).
    BinInput input{partition, static_cast<const unsigned*>(records_),
                   static_cast<const unsigned*>(positions_), static_cast<const GroupSpan*>(spans_),
                   partitioned_ ? 0 : span_count_};
    void* offsets_params[] = {&launch, &input, &n, &control_, &chunk_words_, &totals_};
    run("slot_bins_offsets", chunks_, kThreads, offsets_params);
}

void CudaSlotBins::add_totals(wf::u64* report) {
    wf::SlotLaunch launch = launch_;
    void* spans = spans_;
    // (No partition ran without reservations.)
    Partition partition{partitioned_ && n_ > 0 ? static_cast<const int*>(tile_bases_) : nullptr,
                        static_cast<const int*>(reached_), tiles_};
    long long n = n_, elements = elements_, scan_words = scan_words_;
    void* params[] = {&launch,  &spans,    &span_count_,  &partition,       &n,          &elements,
                      &totals_, &control_, &chunk_words_, &scan_words_ptr_, &scan_words, &report};
    // Enough threads for the elements, and for the look-back words at some 8 a thread.
    const long long for_words = std::min<long long>(chunks_ * kBins / (kThreads * 8), 1024);
    run("slot_bins_totals", std::max({1ll, (elements_ + kThreads - 1) / kThreads, for_words}), kThreads,
        params);
    // In stream order after the totals kernel, which leaves the words clean.
    if (!cache_key_.empty()) state_cache().put(std::move(cache_key_), {state_, std::move(table_)});
}

void CudaSlotBins::run(const char* name, long long blocks, int threads, void** params) const {
    cu::launch_library_kernel(ordinal_, cu::LibraryModule::SlotBins, name, static_cast<unsigned>(blocks),
                              static_cast<unsigned>(threads), params,
                              std::string("slot allocation (") + name + ")");
}

}  // namespace weft::runtime::det
