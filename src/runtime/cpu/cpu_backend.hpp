// The CPU's backend: host memory, modules built by the host compiler, library code on the host.
#pragma once

#include "runtime/backend.hpp"

namespace weft::runtime::cpu {

const Backend& cpu_backend();

}  // namespace weft::runtime::cpu
