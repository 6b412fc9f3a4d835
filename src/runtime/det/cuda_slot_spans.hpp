// The counter spans of a several-element slot launch as the GPU grouping kernels see them: each
// owner span's elements get consecutive compact keys (docs/design/0021).
#pragma once

#include <vector>

#include "device/library_abi.h"
#include "runtime/det/slots.hpp"

namespace weft::runtime::det {

using GroupSpan = wf::kernels::GroupSpan;

// The table in counter order; `elements` gets the number of compact keys.
inline std::vector<GroupSpan> group_spans(const SlotPlan& plan, unsigned long long& elements) {
    std::vector<GroupSpan> table(plan.spans.size());
    elements = 0;
    for (size_t i = 0; i < table.size(); ++i) {
        const bool owner = plan.owner[i] == i;
        table[i] = {plan.spans[i].base, owner ? plan.spans[i].count : 0, elements};
        if (owner) elements += static_cast<unsigned long long>(plan.spans[i].count);
    }
    return table;
}

}  // namespace weft::runtime::det
