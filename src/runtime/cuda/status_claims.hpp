// Which entries of a GPU stream's status area are claimed, and by which report. Bookkeeping only,
// with no driver calls (the caller holds the stream's lock), so that it is tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "device/abi.h"

namespace weft::runtime::cuda {

// Who reads an entry of a stream's status area: its key (reports with equal keys share the
// entry), and how a nonzero value becomes a weft::Error. An entry claimed while the stream is
// being captured into a graph stays claimed for the stream's lifetime, since the graph may be
// replayed any number of times; others are released by a synchronization that read them.
struct StatusClaim {
    std::string key;  // empty: free
    bool persistent = false;
    uint64_t use = 0;  // the latest claim's number (unique): a synchronization frees only what it read
    int pending = 0;   // claimants still queueing the work that writes the entry
    std::function<void(uint64_t)> raise_word;           // throws the word's weft::Error
    std::function<void(const wf::Error&)> raise_fault;  // throws the fault record's weft::Error
};

class StatusClaims {
public:
    explicit StatusClaims(size_t capacity) : capacity_(capacity) {}

    // The entry for `key`: the one already claimed for it (kept for good once `captured`),
    // else a free one; -1 when every entry is claimed. The claimant calls queued() once the
    // work that writes the entry is queued.
    int claim(const std::string& key, bool captured);
    void queued(int entry);
    StatusClaim& at(int entry) { return claims_[static_cast<size_t>(entry)]; }
    // The claimed prefix of the area: entries past it are free.
    const std::vector<StatusClaim>& claimed() const { return claims_; }

    // For a synchronization, with `read` a copy of claimed() taken before it waited: whether it
    // may read entry i (all the work that writes it was queued before the wait), and whether
    // the entry is still as it was then (no claim since, so zeroing or freeing it loses nothing).
    static bool readable(const StatusClaim& read) { return !read.key.empty() && read.pending == 0; }
    bool unchanged(size_t i, const StatusClaim& read) const;
    // Frees the entries of `read` that were readable and are unchanged, unless captured.
    void release(const std::vector<StatusClaim>& read);
    size_t capacity() const { return capacity_; }

private:
    size_t capacity_;
    uint64_t claims_made_ = 0;
    std::vector<StatusClaim> claims_;
};

}  // namespace weft::runtime::cuda
