// Shared by the one-element slot tests: a kernel that reserves a pseudo-random number of slots in
// one counter element and writes its thread into them, its cases, and a launch that reads it back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/xorshift.hpp"

namespace weft::test {

// slot = atomic_add(count, 0, amounts[t]) where amounts[t] >= 0 (at most one reservation per
// thread); slots[t] = slot; out[slot + k] = t for k < amount.
using CompactKernel = weft::Kernel<weft::Array<int>, weft::Array<int>, weft::Array<int>, weft::Array<int>>;

inline CompactKernel compact_kernel(weft::Module& m, const std::string& name) {
    return m.kernel(
        name, {"amounts", "count", "slots", "out"},
        [](weft::Array<int> amounts, weft::Array<int> count, weft::Array<int> slots, weft::Array<int> out) {
            auto t = weft::tid();
            auto amount = amounts[t];
            weft::if_(amount >= 0, [&] {
                auto slot = weft::atomic_add(count, 0, amount);
                slots[t] = slot;
                weft::for_(amount, [&](weft::Int k) { out[slot + k] = t; });
            });
        });
}

// -1 (no reservation), 0, 1, 2 or 3 slots per thread; `salt` tells apart the files' sequences.
inline std::vector<int> compact_amounts(int64_t n, uint32_t seed, uint32_t salt = 3) {
    std::vector<int> a(static_cast<size_t>(n));
    uint32_t x = seed * 2654435761u + salt;
    for (int& v : a) v = static_cast<int>(xorshift(x) % 5) - 1;
    return a;
}

struct CompactResult {
    std::vector<int> count, slots, out;
    bool operator==(const CompactResult&) const = default;
};

// Room for 3 slots a thread past `initial`; unwritten slots and positions stay -1.
inline CompactResult launch_compact(const CompactKernel& k, weft::Device device,
                                    const std::vector<int>& amounts, int initial) {
    const auto n = static_cast<int64_t>(amounts.size());
    auto count = weft::full<int>(1, initial, device);
    auto slots = weft::full<int>(n, -1, device);
    auto out = weft::full<int>(3 * n + initial, -1, device);
    weft::launch(k, n, weft::from_vector(amounts, device), count, slots, out);
    return {count.to_vector(), slots.to_vector(), out.to_vector()};
}

// The kernel's arguments on `gpu` for `amounts` (count 0, room for 3 slots a thread) and a graph
// of one launch on them; `enqueue` queues the graph's work directly.
struct CompactGraph {
    CompactGraph(const CompactKernel& kernel, weft::Device gpu, const std::vector<int>& amounts)
        : k(kernel),
          device(gpu),
          n(static_cast<int64_t>(amounts.size())),
          values(weft::from_vector(amounts, gpu)),
          count(weft::full<int>(1, 0, gpu)),
          slots(weft::full<int>(n, -1, gpu)),
          out(weft::full<int>(3 * n, -1, gpu)),
          graph(weft::capture(gpu, [this] { enqueue(); })) {}
    CompactGraph(const CompactGraph&) = delete;  // the graph's work names this object's arrays
    CompactGraph& operator=(const CompactGraph&) = delete;

    void enqueue() {
        count.zero_();
        weft::launch(k, n, values, count, slots, out);
    }
    // Back to unwritten slots and positions, so that a round shows only what it wrote.
    void clear() {
        weft::copy(slots, weft::full<int>(n, -1, device));
        weft::copy(out, weft::full<int>(3 * n, -1, device));
    }

    CompactKernel k;
    weft::Device device;
    int64_t n;
    weft::DeviceArray<int> values, count, slots, out;
    weft::Graph graph;
};

}  // namespace weft::test
