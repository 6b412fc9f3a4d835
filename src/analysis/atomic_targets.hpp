// Finds every atomic a kernel executes (in it and in the functions it calls), with its target.
#pragma once

#include <vector>

#include "ir/ir.hpp"

namespace weft::analysis {

struct AtomicSite {
    const ir::Node* node = nullptr;
    uint32_t function = 0;  // where the node is
    ir::AtomicOp op = ir::AtomicOp::Add;
    DType dtype = DType::Float32;
    bool result_used = false;
    int kernel_param = -1;  // the kernel parameter the target array is (a view of)
};

// A plain load or store of a kernel parameter's array (directly or through a call).
struct ArrayAccess {
    const ir::Node* node = nullptr;
    uint32_t function = 0;
    int kernel_param = -1;
};

struct KernelAtomics {
    std::vector<AtomicSite> atomics;
    std::vector<ArrayAccess> accesses;
};

// Follows every call from kernel `kernel`, mapping each function's array parameters back to the
// kernel parameter passed for them at that call path.
KernelAtomics kernel_atomics(const ir::Program& program, uint32_t kernel);

// The reduction family of an accumulation atomic: Add for add and sub, else the op itself.
ir::AtomicOp reduction_family(ir::AtomicOp op);

}  // namespace weft::analysis
