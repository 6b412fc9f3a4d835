// Deterministic slot allocation on the CPU.
#pragma once

#include "runtime/det/slots.hpp"

namespace weft::runtime::det {

std::unique_ptr<SlotAllocation> prepare_cpu_slots(SlotPlan plan, const LaunchSite& site);

}  // namespace weft::runtime::det
