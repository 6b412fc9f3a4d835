// Striped locks over memory: launches from several host threads that update the same memory
// (through any array over it) do not lose each other's updates.
#pragma once

#include <mutex>
#include <shared_mutex>
#include <vector>

#include "weft/device_array.hpp"

namespace weft::runtime::det {

// What a launch locks while it runs, found by the memory its arrays cover (any array over the same
// bytes finds the same locks: a view, a weft::wrap of an address inside, a DLPack import).
//
// - `exclusive`: arrays the launch reads and writes outside its kernel's atomics (deterministic
//   targets, which the resolve writes after the kernel; slot counters, which it advances). Two
//   such launches into the same memory must not overlap, nor may another launch's atomics into it
//   run between this one's read and write: held exclusively, waiting for others.
// - `atomic`: the targets of the kernel's plain atomics, held shared. A launch that would run as
//   one chunk on the CPU (`want_serial`) may update them with plain loads and stores
//   (wf::Launch::serial) only while no other launch updates them: it tries to hold them
//   exclusively, without waiting, and holds them shared where another launch holds one.
//
// The locks are a fixed set of stripes over 1 MiB granules of the address space, taken in
// increasing order, so launches never deadlock; unrelated memory may share a stripe, which only
// serializes those launches.
class LaunchLocks {
public:
    LaunchLocks(const std::vector<const AnyArray*>& exclusive, const std::vector<const AnyArray*>& atomic,
                bool want_serial);
    LaunchLocks(const LaunchLocks&) = delete;
    LaunchLocks& operator=(const LaunchLocks&) = delete;
    // Whether no other launch updates the atomic targets meanwhile (they may use plain loads and
    // stores).
    bool atomics_exclusive() const { return atomics_exclusive_; }

private:
    std::vector<std::unique_lock<std::shared_mutex>> exclusive_held_;
    std::vector<std::shared_lock<std::shared_mutex>> shared_held_;
    bool atomics_exclusive_ = false;
};

}  // namespace weft::runtime::det
