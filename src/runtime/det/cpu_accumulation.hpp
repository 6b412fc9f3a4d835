// Deterministic accumulation state on the CPU.
#pragma once

#include "runtime/det/accumulation.hpp"

namespace weft::runtime::det {

std::unique_ptr<Accumulation> prepare_cpu(std::vector<TargetPlan> plans, const LaunchSite& site);

}  // namespace weft::runtime::det
