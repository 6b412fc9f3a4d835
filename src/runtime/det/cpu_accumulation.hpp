// Deterministic accumulation state on the CPU.
#pragma once

#include "runtime/det/accumulation.hpp"

namespace weft::runtime::det {

std::unique_ptr<Accumulation> prepare_cpu(const std::vector<ir::DetTarget>& targets,
                                          const std::vector<const AnyArray*>& arrays);

}  // namespace weft::runtime::det
