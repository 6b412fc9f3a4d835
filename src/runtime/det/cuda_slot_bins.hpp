// Slot allocation into at most 65,536 counter elements on a GPU: a stable partition of the
// reservations by the high byte of their compact key, then per-bucket ranks by the low byte, in
// chunks chained by look-back, with no full sort (docs/design/0021, "Up to 65,536 elements").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "device/abi.h"
#include "runtime/det/cuda_slot_spans.hpp"
#include "runtime/det/slots.hpp"
#include "runtime/memory.hpp"

namespace weft::runtime::det {

class CudaSlotBins {
public:
    // The most compact keys (counter elements) this path takes.
    static constexpr unsigned long long kMaxElements = 1ull << 16;

    // `launch`: the launch's wf::SlotLaunch (its words, passed to every kernel). Queues the publication of
    // the spans and the zeroing of the launch's words, unless the state is a graph's (written
    // once, outside the capture) or kept from the stream's last launch of this shape (every
    // launch leaves its words clean; a changed span table is published again).
    CudaSlotBins(int ordinal, const SlotPlan& plan, const wf::SlotLaunch& launch);
    // Before the execution pass: writes launch->offsets.
    void assign();
    // After the execution pass: unless the launch's status word is set, each reached element
    // advances by its total; the status bits are or-ed into `report` and the status reset.
    void add_totals(wf::u64* report);

private:
    void run(const char* name, long long blocks, int threads, void** params) const;

    int ordinal_;
    wf::SlotLaunch launch_;
    long long n_;          // reservation positions
    unsigned per_thread_;  // positions per thread
    long long elements_;   // compact keys
    long long span_count_;
    bool partitioned_;          // more than 256 elements: partition by the key's high byte first
    long long tiles_;           // the partition's, of 2,048 positions
    long long chunks_;          // the offsets kernel's blocks: at least the chunks of 2,048 it may find
    long long scan_words_ = 0;  // the chained scan's words for the tile counts
    std::shared_ptr<detail::Allocation> state_;  // everything below lies in it
    void* spans_ = nullptr;
    void* control_ = nullptr;         // the offsets kernel's ticket, the totals kernel's count (zeroed)
    void* chunk_words_ = nullptr;     // the offsets kernel's look-back words, 256 per chunk (zeroed)
    void* scan_words_ptr_ = nullptr;  // the scan's (zeroed)
    void* items_ = nullptr;           // partitioned: per position, (count << 16) | compact key
    void* records_ = nullptr;         // partitioned: the item words in bucket order
    void* positions_ = nullptr;       // partitioned: each record's position
    void* tile_counts_ = nullptr;     // partitioned: per bucket and tile, bucket-major
    void* tile_bases_ = nullptr;      // partitioned: their exclusive scan
    void* reached_ = nullptr;         // partitioned: the reservations that reach an element
    void* totals_ = nullptr;          // per compact key, modulo 2^32
    std::vector<GroupSpan> table_;    // what spans_ holds
    std::string cache_key_;           // direct launches: the state goes back to the cache after them
};

}  // namespace weft::runtime::det
