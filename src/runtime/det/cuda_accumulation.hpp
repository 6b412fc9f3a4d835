// Deterministic accumulation state on a GPU.
#pragma once

#include "runtime/det/accumulation.hpp"

namespace weft::runtime::det {

std::unique_ptr<Accumulation> prepare_cuda(int ordinal, const std::vector<ir::DetTarget>& targets,
                                           const std::vector<const AnyArray*>& arrays);

}  // namespace weft::runtime::det
