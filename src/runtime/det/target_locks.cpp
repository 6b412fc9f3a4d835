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

std::array<std::shared_mutex, kStripes>& atomic_stripes() {
    static std::array<std::shared_mutex, kStripes> locks;
    return locks;
}

size_t stripe_of(const AnyArray& a) {
    // The allocation's start: every view of it maps to the same stripe.
    const auto start = reinterpret_cast<uintptr_t>(static_cast<const char*>(a.data()) - a.offset());
    return static_cast<size_t>((start * 0x9E3779B97F4A7C15ull) >> (64 - kStripeBits));
}

// The stripes of `arrays`, each once, in increasing order.
std::vector<size_t> stripes_of(const std::vector<const AnyArray*>& arrays) {
    std::vector<size_t> wanted;
    for (const AnyArray* a : arrays) wanted.push_back(stripe_of(*a));
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    return wanted;
}

}  // namespace

TargetLocks::TargetLocks(const std::vector<const AnyArray*>& arrays) {
    for (size_t s : stripes_of(arrays)) held_.emplace_back(stripes()[s]);
}

AtomicTargetLocks::AtomicTargetLocks(const std::vector<const AnyArray*>& arrays, bool want_exclusive) {
    const std::vector<size_t> wanted = stripes_of(arrays);
    if (want_exclusive) {
        for (size_t s : wanted) {
            std::unique_lock lock(atomic_stripes()[s], std::try_to_lock);
            if (!lock.owns_lock()) break;
            exclusive_held_.push_back(std::move(lock));
        }
        exclusive_ = exclusive_held_.size() == wanted.size();
        if (exclusive_) return;
        exclusive_held_.clear();  // (released before waiting, so that no two launches wait on each other)
    }
    for (size_t s : wanted) shared_held_.emplace_back(atomic_stripes()[s]);
}

}  // namespace weft::runtime::det
