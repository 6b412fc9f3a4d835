// Deterministic slot allocation on a GPU.
#pragma once

#include "runtime/det/slots.hpp"

namespace weft::runtime::det {

std::unique_ptr<SlotAllocation> prepare_cuda_slots(int ordinal, SlotPlan plan, const LaunchSite& site);

}  // namespace weft::runtime::det
