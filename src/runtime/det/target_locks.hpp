// Serializes deterministic launches into the same memory from several host threads.
#pragma once

#include <mutex>
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

}  // namespace weft::runtime::det
