// Deterministic accumulation state on a GPU.
#pragma once

#include "runtime/det/accumulation.hpp"

namespace weft::runtime::det {

std::unique_ptr<Accumulation> prepare_cuda(int ordinal, std::vector<TargetPlan> plans,
                                           const LaunchSite& site);

}  // namespace weft::runtime::det
