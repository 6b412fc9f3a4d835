// Slot allocation into at most 65,536 counter elements on a GPU: a stable partition of the
// reservations by the high byte of their compact key, then per-bucket prefix sums over the low
// byte in one pass, with no full sort (docs/design/0021, "Up to 65,536 elements").
#pragma once

#include <memory>

#include "device/abi.h"
#include "runtime/det/slots.hpp"
#include "runtime/memory.hpp"

namespace weft::runtime::det {

class CudaSlotBins {
public:
    // The most compact keys (counter elements) this path takes.
    static constexpr unsigned long long kMaxElements = 1ull << 16;

    // `launch` is the device address of the launch's wf::SlotLaunch. Queues the publication of
    // the spans and the zeroing of the look-back words.
    CudaSlotBins(int ordinal, const SlotPlan& plan, void* launch);
    // Before the execution pass: writes launch->offsets.
    void assign();
    // After the execution pass: unless the launch's status word is set, each reached element
    // advances by its total; the status bits are or-ed into `report`.
    void add_totals(wf::u64* report);

private:
    void run(const char* name, long long blocks, int threads, void** params) const;

    int ordinal_;
    void* launch_;
    long long n_;          // reservation positions
    unsigned per_thread_;  // positions per thread
    long long elements_;   // compact keys
    long long span_count_;
    bool partitioned_;           // more than 256 elements: partition by the key's high byte first
    long long tiles_;            // of 2,048 positions (and of 2,048 partitioned reservations)
    long long group_tiles_ = 1;  // tiles per block of the histogram kernel
    long long groups_ = 0;       // blocks of the histogram kernel
    std::shared_ptr<detail::Allocation> state_;  // everything below lies in it
    void* spans_ = nullptr;
    void* done_ = nullptr;       // the histogram kernel's finished blocks (zeroed)
    void* ticket_ = nullptr;     // the offsets kernel's tile ticket (zeroed)
    void* words_ = nullptr;      // the offsets kernel's look-back words, 256 per tile (zeroed)
    void* partition_ = nullptr;  // digit starts and totals, the partitioned count
    void* tile_prefix_ = nullptr;
    void* group_prefix_ = nullptr;
    void* records_ = nullptr;    // partitioned: (count << 32) | compact key
    void* positions_ = nullptr;  // partitioned: the reservation's position
    void* totals_ = nullptr;     // per compact key, modulo 2^32
};

}  // namespace weft::runtime::det
