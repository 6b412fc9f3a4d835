// Striped locks over allocations: deterministic launches into the same memory from several host
// threads run one at a time; a serial CPU launch's atomics have their targets to themselves.
#pragma once

#include <mutex>
#include <shared_mutex>
#include <vector>

#include "weft/device_array.hpp"

namespace weft::runtime::det {

// A deterministic launch reads each target's and counter's value before the launch and writes
// the result after the kernel (resolve, counter advance), so two launches into the same memory
// must not overlap, or one's update is lost. While it lives, a TargetLocks holds the locks of
// the allocations behind `arrays` (views of one allocation share a lock). The locks are a fixed
// set of stripes taken in increasing order, so launches that lock several never deadlock;
// unrelated allocations may share a stripe, which only serializes them.
class TargetLocks {
public:
    explicit TargetLocks(const std::vector<const AnyArray*>& arrays);
    TargetLocks(const TargetLocks&) = delete;
    TargetLocks& operator=(const TargetLocks&) = delete;

private:
    std::vector<std::unique_lock<std::mutex>> held_;
};

// The targets of a launch's plain atomics. A launch that would run as one chunk on the CPU may
// update them with plain loads and stores (wf::Launch::serial) only while no other launch updates
// them: it tries to take their locks exclusively, without waiting; where another launch holds
// one, it takes them all shared (waiting only for exclusive holders, which run one chunk and take
// no other lock meanwhile) and uses atomic instructions. Launches that run in several chunks take
// them shared.
class AtomicTargetLocks {
public:
    AtomicTargetLocks(const std::vector<const AnyArray*>& arrays, bool want_exclusive);
    AtomicTargetLocks(const AtomicTargetLocks&) = delete;
    AtomicTargetLocks& operator=(const AtomicTargetLocks&) = delete;
    bool exclusive() const { return exclusive_; }

private:
    std::vector<std::unique_lock<std::shared_mutex>> exclusive_held_;
    std::vector<std::shared_lock<std::shared_mutex>> shared_held_;
    bool exclusive_ = false;
};

}  // namespace weft::runtime::det
