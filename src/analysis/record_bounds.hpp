// The static estimate of how many deterministic records (or reservations) one thread makes per target.
#pragma once

#include <cstdint>
#include <map>

#include "ir/ir.hpp"

namespace weft::analysis {

struct RecordBound {
    int64_t per_thread = 0;  // Accumulate sites reached, loops with constant trip counts multiplied
    bool dynamic = false;    // a site sits in a loop whose trip count is only known at run time
};

// Per kernel parameter, counting nodes of `kind` (Accumulate: records; Reserve: slot
// reservations). An if/else counts its larger branch; a data-dependent loop counts its body once
// and marks the bound dynamic (deterministic_max_records should then be given).
std::map<int, RecordBound> record_bounds(const ir::Program& program, uint32_t kernel,
                                         ir::NodeKind kind = ir::NodeKind::Accumulate);

}  // namespace weft::analysis
