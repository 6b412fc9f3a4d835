// Slot allocation with several counter elements on a GPU. Up to 65,536 elements: cuda_slot_bins.
// More: a stable LSD radix sort of compact element keys, a segmented scan of the counts in
// sorted order, offsets scattered back to the reservations, totals added to the elements. All
// kernels are Weft's own (src/device/kernels/slot_groups.cu).
#include "runtime/det/cuda_slot_groups.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/cuda/scan.hpp"
#include "runtime/det/cuda_slot_spans.hpp"

namespace weft::runtime::det {

namespace cu = runtime::cuda;

namespace {

using wf::kernels::kSpansPerPublish;
using wf::kernels::SpanChunk;
using wf::kernels::slot_groups::kDigitBits;
using wf::kernels::slot_groups::kThreads;
using wf::kernels::slot_groups::kTile;

}  // namespace

bool CudaSlotGroups::resets_status(const SlotPlan& plan) {
    unsigned long long elements = 0;
    group_spans(plan, elements);
    return elements <= CudaSlotBins::kMaxElements;
}

CudaSlotGroups::CudaSlotGroups(int ordinal, const SlotPlan& plan, void* launch, const wf::SlotLaunch& value)
    : ordinal_(ordinal), launch_(launch), n_(plan.threads * plan.per_thread) {
    unsigned long long first = 0;
    const std::vector<GroupSpan> table = group_spans(plan, first);
    if (first <= CudaSlotBins::kMaxElements) {
        bins_.emplace(ordinal, plan, value);
        return;
    }
    // Keys run from 0 to first - 1: one radix pass per 8 bits of the largest (three or more here).
    key_bits_ = static_cast<int>(std::bit_width(first - 1));
    passes_ = (key_bits_ + kDigitBits - 1) / kDigitBits;
    packed_ = key_bits_ <= 32 ? 1 : 0;
    spans_count_ = static_cast<long long>(table.size());
    const auto tiles = static_cast<size_t>((n_ + kTile - 1) / kTile);
    // Each radix pass scans its histogram with the chained scan, whose words start at zero.
    scan_words_ =
        n_ > 0 ? cu::chained_scan_words(static_cast<int64_t>((size_t{1} << kDigitBits) * tiles)) : 0;
    spans_ = allocate(table.size() * sizeof(GroupSpan) + static_cast<size_t>(passes_ * scan_words_) * 8);
    // Published by a kernel, not a copy from the host, so that the launch can be captured.
    void* zeroed = static_cast<char*>(spans_->ptr) + table.size() * sizeof(GroupSpan);
    long long zeroed_words = passes_ * scan_words_;
    for (size_t at = 0; at < table.size(); at += kSpansPerPublish) {
        SpanChunk chunk{};
        int count = static_cast<int>(std::min<size_t>(kSpansPerPublish, table.size() - at));
        std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(at), count, chunk.spans);
        void* table_ptr = spans_->ptr;
        int first_index = static_cast<int>(at);
        void* params[] = {&table_ptr, &first_index, &count, &chunk, &zeroed, &zeroed_words};
        run("slot_group_publish", std::min<long long>(zeroed_words / kThreads + 1, 1024), params);
        zeroed_words = 0;  // the first chunk's kernel did it
    }
    if (n_ == 0) return;
    const auto n = static_cast<size_t>(n_);
    for (int b = 0; b < 2; ++b) {
        keys_[b] = allocate(n * 8);
        order_[b] = allocate(n * 4);
    }
    histogram_ = allocate((size_t{1} << kDigitBits) * tiles * 4);
    heads_ = allocate(n * 4);
    sums_ = allocate(n * 8);
}

void CudaSlotGroups::assign() {
    if (bins_) return bins_->assign();
    if (n_ == 0) return;
    const long long tiles = (n_ + kTile - 1) / kTile;
    void* launch = launch_;
    void* spans = spans_->ptr;
    int packed = packed_;
    for (int pass = 0; pass < passes_; ++pass) {
        int bits = std::min(kDigitBits, key_bits_ - pass * kDigitBits);
        int shift = pass * kDigitBits + (packed ? 32 : 0);  // a packed key word has the count below
        // The first pass reads the counting pass's records (null: build the keys).
        void* in_keys = pass > 0 ? keys_[pass % 2]->ptr : nullptr;
        void* in_order = pass > 0 ? order_[pass % 2]->ptr : nullptr;
        void* out_keys = keys_[1 - pass % 2]->ptr;
        void* out_order = order_[1 - pass % 2]->ptr;
        void* histogram = histogram_->ptr;
        long long tile_count = tiles;
        void* count_params[] = {&launch, &spans, &spans_count_, &packed,     &in_keys,
                                &n_,     &shift, &bits,         &tile_count, &histogram};
        run("slot_group_histogram", tiles, count_params);
        auto* words = reinterpret_cast<uint64_t*>(static_cast<char*>(spans_->ptr) +
                                                  static_cast<size_t>(spans_count_) * sizeof(GroupSpan)) +
                      pass * scan_words_;
        cu::scan_counts(ordinal_, static_cast<const int32_t*>(histogram), static_cast<int32_t*>(histogram),
                        (int64_t{1} << bits) * tiles, words, nullptr);
        void* scatter_params[] = {&launch,   &spans,      &spans_count_, &packed, &in_keys,
                                  &in_order, &out_keys,   &out_order,    &n_,     &shift,
                                  &bits,     &tile_count, &histogram};
        run("slot_group_scatter", tiles, scatter_params);
    }
    sorted_ = passes_ % 2;
    segmented_scan(heads_->ptr, sums_->ptr, n_, true);
}

void CudaSlotGroups::add_totals(wf::u64* report) {
    if (bins_) return bins_->add_totals(report);
    void* launch = launch_;
    void* spans = spans_->ptr;
    void* keys = n_ > 0 ? keys_[sorted_]->ptr : nullptr;
    void* sums = n_ > 0 ? sums_->ptr : nullptr;
    int packed = packed_;
    void* params[] = {&launch, &spans, &spans_count_, &packed, &keys, &sums, &n_, &report};
    run("slot_group_totals", std::max<long long>(1, (n_ + kThreads - 1) / kThreads), params);
}

// The scan of one level: tiles, then (recursively) the tiles' totals, then the carry into each
// tile from the segment open at the end of the tile before it; at the top level (from the keys)
// the carry comes with the offsets, in one kernel.
void CudaSlotGroups::segmented_scan(void* heads, void* sums, long long n, bool from_keys) const {
    const long long tiles = (n + kTile - 1) / kTile;
    const Memory tile_heads = allocate(static_cast<size_t>(tiles) * 4);
    const Memory tile_sums = allocate(static_cast<size_t>(tiles) * 8);
    void* launch = launch_;
    void* keys = from_keys ? keys_[sorted_]->ptr : nullptr;
    void* order = from_keys ? order_[sorted_]->ptr : nullptr;
    void* th = tile_heads->ptr;
    void* ts = tile_sums->ptr;
    int packed = packed_;
    void* params[] = {&launch, &packed, &keys, &order, &heads, &sums, &n, &th, &ts};
    run("slot_group_segments", tiles, params);
    if (tiles > 1) segmented_scan(th, ts, tiles, false);
    if (from_keys) {
        void* offsets_params[] = {&launch, &packed, &keys, &order, &heads, &sums, &n, &ts};
        run("slot_group_offsets", (n + kThreads - 1) / kThreads, offsets_params);
    } else if (tiles > 1) {
        void* carry_params[] = {&launch, &heads, &sums, &n, &th, &ts};
        run("slot_group_carry", tiles - 1, carry_params);
    }
}

CudaSlotGroups::Memory CudaSlotGroups::allocate(size_t bytes) const {
    return detail::allocate(Device::cuda(ordinal_), bytes == 0 ? 1 : bytes);
}

void CudaSlotGroups::run(const char* name, long long blocks, void** params) const {
    cu::launch_library_kernel(ordinal_, cu::LibraryModule::SlotGroups, name, static_cast<unsigned>(blocks),
                              static_cast<unsigned>(kThreads), params,
                              std::string("slot allocation (") + name + ")");
}

}  // namespace weft::runtime::det
