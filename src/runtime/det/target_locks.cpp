// Striped locks over allocations, taken in a fixed order.
#include "runtime/det/target_locks.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace weft::runtime::det {

namespace {

constexpr int kStripeBits = 6;
constexpr size_t kStripes = size_t{1} << kStripeBits;

std::array<std::mutex, kStripes>& stripes() {
    static std::array<std::mutex, kStripes> locks;
    return locks;
}

size_t stripe_of(const AnyArray& a) {
    // The allocation's start: every view of it maps to the same stripe.
    const auto start = reinterpret_cast<uintptr_t>(static_cast<const char*>(a.data()) - a.offset());
    return static_cast<size_t>((start * 0x9E3779B97F4A7C15ull) >> (64 - kStripeBits));
}

}  // namespace

TargetLocks::TargetLocks(const std::vector<const AnyArray*>& arrays) {
    std::vector<size_t> wanted;
    for (const AnyArray* a : arrays) wanted.push_back(stripe_of(*a));
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    for (size_t s : wanted) held_.emplace_back(stripes()[s]);
}

}  // namespace weft::runtime::det
