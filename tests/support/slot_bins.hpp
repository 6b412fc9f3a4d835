// Shared by the slot-allocation tests: a kernel that reserves a data-dependent number of slots in
// a data-dependent counter element, pseudo-random cases for it, and its launch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/xorshift.hpp"

namespace weft::test {

// slots[t] = atomic_add(counters, bins[t], amounts[t]) where amounts[t] >= 0; a thread with a
// negative amount reserves nothing and keeps slots[t].
using BinKernel = weft::Kernel<weft::Array<int>, weft::Array<int>, weft::Array<int>, weft::Array<int>>;

inline BinKernel bin_kernel(const std::string& name, const weft::OptionsPatch& options) {
    weft::Module m(name, options);
    return m.kernel(name, {"bins", "amounts", "counters", "slots"},
                    [](weft::Array<int> bins, weft::Array<int> amounts, weft::Array<int> counters,
                       weft::Array<int> slots) {
                        auto t = weft::tid();
                        weft::if_(amounts[t] >= 0,
                                  [&] { slots[t] = weft::atomic_add(counters, bins[t], amounts[t]); });
                    });
}

struct BinCase {
    std::vector<int> bins, amounts, initial;
};

// n threads over `elements` counter elements, a pseudo-random mix: about one thread in 8 reserves
// nothing, one in 8 reserves 0 slots, the others 1 to 3; some indices are negative (from the end).
inline BinCase bin_case(int n, int elements, uint32_t seed) {
    BinCase c;
    uint32_t x = seed * 2654435761u + 1;
    const auto next = [&x] { return xorshift(x); };
    for (int t = 0; t < n; ++t) {
        const int bin = static_cast<int>(next() % static_cast<uint32_t>(elements));
        c.bins.push_back(next() % 5 == 0 ? bin - elements : bin);
        const uint32_t kind = next() % 8;
        c.amounts.push_back(kind == 0 ? -1 : kind == 1 ? 0 : static_cast<int>(1 + next() % 3));
    }
    for (int e = 0; e < elements; ++e) c.initial.push_back(static_cast<int>(next() % 100) - 20);
    return c;
}

struct BinOutputs {
    std::vector<int> slots, counters;
};

// One launch of `k` on `device` from `initial` counters; slots a thread did not write stay -1.
inline BinOutputs launch_bins(const BinKernel& k, weft::Device device, const BinCase& in,
                              const std::vector<int>& initial) {
    const auto n = static_cast<int64_t>(in.bins.size());
    auto counters = weft::from_vector(initial, device);
    auto slots = weft::full<int>(n, -1, device);
    weft::launch(k, n, weft::from_vector(in.bins, device), weft::from_vector(in.amounts, device), counters,
                 slots);
    return {slots.to_vector(), counters.to_vector()};
}

}  // namespace weft::test
