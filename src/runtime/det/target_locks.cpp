// Striped locks over memory granules, taken in a fixed order.
#include "runtime/det/target_locks.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "runtime/memory.hpp"

namespace weft::runtime::det {

namespace {

constexpr int kStripeBits = 6;
constexpr size_t kStripes = size_t{1} << kStripeBits;
constexpr int kGranuleBits = 20;

std::array<std::shared_mutex, kStripes>& stripes() {
    static std::array<std::shared_mutex, kStripes> locks;
    return locks;
}

size_t stripe_of_granule(uintptr_t granule) {
    return static_cast<size_t>((granule * 0x9E3779B97F4A7C15ull) >> (64 - kStripeBits));
}

// The stripes of the granules the bytes of `a` touch, added to `out`.
void add_stripes(const AnyArray& a, std::vector<size_t>& out) {
    if (a.size() == 0) return;
    const auto [lo, hi] = byte_span(a);
    const auto start = reinterpret_cast<uintptr_t>(a.data());
    const auto first = (start + static_cast<uintptr_t>(lo)) >> kGranuleBits;
    const auto last = (start + static_cast<uintptr_t>(hi) - 1) >> kGranuleBits;
    if (last - first >= 4 * kStripes) {  // (every stripe, almost surely)
        for (size_t s = 0; s < kStripes; ++s) out.push_back(s);
        return;
    }
    for (uintptr_t g = first; g <= last; ++g) out.push_back(stripe_of_granule(g));
}

// The stripes of `arrays`, each once, in increasing order.
std::vector<size_t> stripes_of(const std::vector<const AnyArray*>& arrays) {
    std::vector<size_t> wanted;
    for (const AnyArray* a : arrays) add_stripes(*a, wanted);
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    return wanted;
}

}  // namespace

LaunchLocks::LaunchLocks(const std::vector<const AnyArray*>& exclusive,
                         const std::vector<const AnyArray*>& atomic, bool want_serial) {
    const std::vector<size_t> held = stripes_of(exclusive);
    std::vector<size_t> shared;  // the atomic targets' stripes that `held` does not cover
    const std::vector<size_t> atomic_stripes = stripes_of(atomic);
    std::set_difference(atomic_stripes.begin(), atomic_stripes.end(), held.begin(), held.end(),
                        std::back_inserter(shared));
    // In increasing order: exclusive stripes waiting; the atomic targets' stripes exclusively
    // without waiting while every one so far was free (want_serial), else shared, waiting.
    atomics_exclusive_ = want_serial;
    auto next_held = held.begin();
    auto next_shared = shared.begin();
    while (next_held != held.end() || next_shared != shared.end()) {
        if (next_shared == shared.end() || (next_held != held.end() && *next_held < *next_shared)) {
            exclusive_held_.emplace_back(stripes()[*next_held++]);
            continue;
        }
        std::shared_mutex& m = stripes()[*next_shared++];
        if (atomics_exclusive_) {
            std::unique_lock lock(m, std::try_to_lock);
            if (lock.owns_lock()) {
                exclusive_held_.push_back(std::move(lock));
                continue;
            }
            atomics_exclusive_ = false;
        }
        shared_held_.emplace_back(m);
    }
}

}  // namespace weft::runtime::det
