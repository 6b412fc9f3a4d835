// The static estimate of how many deterministic records one thread emits per target.
#pragma once

#include <cstdint>
#include <map>

#include "ir/ir.hpp"

namespace weft::analysis {

struct RecordBound {
    int64_t per_thread = 0;  // Accumulate sites reached, loops with constant trip counts multiplied
    bool dynamic = false;    // a site sits in a loop whose trip count is only known at run time
};

// Per kernel parameter. An if/else counts its larger branch; a data-dependent loop counts its
// body once and marks the bound dynamic (deterministic_max_records should then be given).
std::map<int, RecordBound> record_bounds(const ir::Program& program, uint32_t kernel);

}  // namespace weft::analysis
