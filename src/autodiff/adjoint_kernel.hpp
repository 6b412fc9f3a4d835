// The generated adjoint of a kernel: the forward code replayed, then the reverse statements.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"

namespace weft::autodiff {

struct AdjointKernel {
    ir::Function function;
    // The kernel's parameters that have a gradient (its float arrays), in order. The adjoint
    // takes the kernel's parameters, then for each of these its gradient array (same type) and
    // a bool that says whether that gradient is given (false: reads of it are zero, and nothing
    // accumulates into it).
    std::vector<uint32_t> differentiable;
    // Loops whose iterations depend on each other are swept from checkpoints of the registers
    // they carry (docs/design/0031): then the adjoint takes three more parameters, last, a 2-D
    // float64 and a 2-D int64 scratch array, each of 2 C checkpoint_floats (checkpoint_ints) rows
    // and one column per thread, and C (int64), the checkpoints per level.
    int checkpoint_floats = 0;
    int checkpoint_ints = 0;
    bool keeps_checkpoints() const { return checkpoint_floats + checkpoint_ints > 0; }
};

// Builds the adjoint of kernel `k` of `program` (traced, before deterministic lowering), named
// `name`. `writes` says, per parameter, whether the kernel writes it. Throws weft::Error naming
// the kernel and the user's line for code whose gradient it cannot generate correctly (the
// checks of structured_copy.hpp).
AdjointKernel adjoint_kernel(const ir::Program& program, uint32_t k, const std::vector<bool>& writes,
                             const std::string& name);

}  // namespace weft::autodiff
