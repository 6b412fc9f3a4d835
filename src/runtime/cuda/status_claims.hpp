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
// replayed any number of times; others are released by the next synchronization.
struct StatusClaim {
    std::string key;  // empty: free
    bool persistent = false;
    std::function<void(uint64_t)> raise_word;           // throws the word's weft::Error
    std::function<void(const wf::Error&)> raise_fault;  // throws the fault record's weft::Error
};

class StatusClaims {
public:
    explicit StatusClaims(size_t capacity) : capacity_(capacity) {}

    // The entry for `key`: the one already claimed for it (kept for good once `captured`),
    // else a free one, claimed; -1 when every entry is claimed.
    int claim(const std::string& key, bool captured);
    StatusClaim& at(int entry) { return claims_[static_cast<size_t>(entry)]; }
    // The claimed prefix of the area: entries past it are free.
    const std::vector<StatusClaim>& claimed() const { return claims_; }
    // Frees the entries of `read` (an earlier copy of claimed()) not claimed during a capture,
    // unless another report has claimed them since.
    void release(const std::vector<StatusClaim>& read);
    size_t capacity() const { return capacity_; }

private:
    size_t capacity_;
    std::vector<StatusClaim> claims_;
};

}  // namespace weft::runtime::cuda
