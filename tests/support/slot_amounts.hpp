// Slot amounts with long runs of negative ones (slots handed back), the case that makes whole
// blocks' totals negative: shared by the CPU and GPU slot tests.
#pragma once

#include <cstdint>
#include <vector>

#include "support/xorshift.hpp"

namespace weft::test {

// `n` amounts from `seed`: runs of 3,000 threads reserving -1 to -7000 slots, then runs reserving
// 0 to 3.
inline std::vector<int> negative_runs(int n, uint32_t seed) {
    std::vector<int> amounts(static_cast<size_t>(n));
    uint32_t x = seed;
    for (int i = 0; i < n; ++i) {
        const uint32_t r = xorshift(x);
        amounts[static_cast<size_t>(i)] =
            (i / 3000) % 2 == 0 ? -static_cast<int>(1 + r % 7000) : static_cast<int>(r % 4);
    }
    return amounts;
}

}  // namespace weft::test
