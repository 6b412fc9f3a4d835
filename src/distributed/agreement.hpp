// Collective argument checks: every rank learns whether every rank passed the same arguments and
// whether any failed its own checks, so that all throw the same weft::Error and none waits.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "distributed/engine.hpp"
#include "weft/device_array.hpp"

namespace weft::distributed {

// A field every rank must pass the same value of, with its name for the message.
struct Field {
    const char* name;
    uint64_t value;
};

// Collective: throws on every rank when some rank's `problem` is not empty (that rank's message
// on it, the others naming it) or when the ranks' fields differ. `op` names the call.
void agree(const Engine& engine, const std::string& op, const std::vector<Field>& fields,
           const std::string& problem, const std::source_location& s);

// A 64-bit content hash of `bytes` (FNV-1a), for checking that ranks hold the same values.
uint64_t content_hash(const void* bytes, size_t n);

// The extents of `shape` as one field value (ranks agree on it as on sizes: an all-reduce of a
// {2, 3} array on one rank and a {3, 2} one on another would add elements by flat index).
uint64_t shape_key(const Shape& shape);

}  // namespace weft::distributed
