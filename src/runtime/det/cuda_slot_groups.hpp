// Slot allocation with several counter elements on a GPU: reservations grouped per counter
// element on the device, with no host synchronization (docs/design/0021).
#pragma once

#include <memory>
#include <optional>

#include "device/abi.h"
#include "runtime/det/cuda_slot_bins.hpp"
#include "runtime/det/slots.hpp"
#include "runtime/memory.hpp"

namespace weft::runtime::det {

// Turns one launch's reservations (the counting pass's keys and counts) into per-element
// offsets in thread order, then advances each element by its total. Up to 65,536 counter
// elements: CudaSlotBins. More: a stable radix sort of compact element keys, a segmented scan of
// the counts in sorted order, and a scatter; work and memory follow the reservations, not the
// counters' size (the sort takes one pass per 8 bits of the counters' element count). Every
// kernel is queued on the current stream; a launch whose counting pass overflowed does nothing.
class CudaSlotGroups {
public:
    // Whether the launch's status word is reset by the last kernel of these launches (the
    // CudaSlotBins path), so that state a graph holds needs no publish node.
    static bool resets_status(const SlotPlan& plan);
    // `launch` is the device address of the launch's wf::SlotLaunch, `value` what it holds.
    CudaSlotGroups(int ordinal, const SlotPlan& plan, void* launch, const wf::SlotLaunch& value);
    // Before the execution pass: writes launch->offsets.
    void assign();
    // After the execution pass: unless the launch's status word is set, each reached element
    // advances by its total; the status bits are or-ed into `report`.
    void add_totals(wf::u64* report);

private:
    using Memory = std::shared_ptr<detail::Allocation>;
    Memory allocate(size_t bytes) const;
    void run(const char* name, long long blocks, void** params) const;
    void segmented_scan(void* heads, void* sums, long long n, bool from_keys) const;

    std::optional<CudaSlotBins> bins_;  // at most CudaSlotBins::kMaxElements elements
    int ordinal_;
    void* launch_;
    long long n_;       // reservation positions
    int key_bits_ = 0;  // compact keys are below 2^key_bits_
    int passes_ = 0;    // radix passes of 8 bits
    int packed_ = 0;    // 1: key words hold the compact key above bit 32 and the count below
    long long spans_count_;
    long long scan_words_ = 0;   // the chained scan's words for one histogram
    Memory spans_;               // per counter span: base, element count, first compact key; then
                                 // scan_words_ per radix pass
    Memory keys_[2], order_[2];  // compact keys and reservation indices, ping-ponged by the sort
    Memory histogram_;           // per (digit, tile), digit-major
    Memory heads_, sums_;        // the segmented scan in sorted order
    int sorted_ = 0;             // which of keys_/order_ holds the sorted result
};

}  // namespace weft::runtime::det
