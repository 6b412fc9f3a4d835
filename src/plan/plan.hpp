// Launch plans: what lowering decides about each kernel, in types that hold no IR.
//
// lower() returns the program and one KernelPlan per kernel. Code generation reads the plans
// beside the IR; the API and the runtime read only the plans and the generated code, so a
// launch never looks at IR (docs/design/0012).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/detail/ops.hpp"
#include "weft/dtype.hpp"

namespace weft::plan {

// Which variant of a kernel a function of the lowered program belongs to: the function as
// written (and what it calls), the counting pass slot allocation makes of it, or its generated
// adjoint (autodiff), which is a kernel with a plan of its own.
enum class Variant : uint8_t { Forward, Counting, Adjoint };

// A place inside a kernel's arguments: parameter `param`, then the field indices that lead
// from it to an array (empty while arguments are scalars and arrays; a struct's field later).
struct ArgPath {
    uint32_t param = 0;
    std::vector<uint32_t> fields;
    friend bool operator==(const ArgPath&, const ArgPath&) = default;
};

// An array whose float atomics the deterministic lowering made Accumulate nodes.
struct DetTarget {
    ArgPath arg;
    detail::AtomicOp family = detail::AtomicOp::Add;  // Add (add and sub), Min or Max
    DType dtype = DType::Float32;
    int64_t records_per_thread = 0;  // the static estimate (sums with the records strategy)
    bool dynamic = false;            // a site is in a data-dependent loop
};

// An int32 array used as a slot-allocation counter.
struct SlotTarget {
    ArgPath arg;
};

// Slot allocation of one kernel; `counters` is empty when it reserves nothing.
struct Slots {
    std::vector<SlotTarget> counters;
    int64_t reservations_per_thread = 0;        // the static estimate
    bool reservations_dynamic = false;          // a data-dependent loop reaches a reservation
    bool reservations_may_diverge = false;      // a reservation depends on an earlier one's slot
    bool single_counter_element = false;        // one counter, always at one constant index: no sort
    std::vector<int64_t> single_counter_index;  // that index
};

// The functions of the lowered program (and entries of its generated code) a kernel runs as.
struct Variants {
    uint32_t forward = 0;
    int counting = -1;  // the counting pass, run before `forward`; -1: none
};

// Why a kernel has no generated backward: the weft::Error a backward launch reports.
struct NoAdjoint {
    std::string message;
    std::string file;
    uint32_t line = 0;
};

struct KernelPlan {
    std::string name;
    Variants variants;
    // Autodiff (transforms/generate_adjoints.hpp): the index in ProgramPlan::kernels of this
    // kernel's adjoint (-1: none generated), the parameters that have gradients there, and the
    // reason when the adjoint could not be generated. An adjoint's own plan is `is_adjoint`.
    int adjoint = -1;
    std::vector<uint32_t> differentiable;
    std::optional<NoAdjoint> no_adjoint;
    bool is_adjoint = false;
    // An adjoint that sweeps loops from checkpoints: the registers of each checkpoint, float and
    // int (autodiff::AdjointKernel); its launch passes the scratch arrays for them.
    int checkpoint_floats = 0;
    int checkpoint_ints = 0;
    int tid_ndim = 0;  // the launch dimensionality tid() is used with (0: unused)
    std::vector<DetTarget> det_targets;
    Slots slots;
    // Per parameter: whether the kernel (or a function it calls) may write it, and the
    // dimensions whose extent shape() reads (bit d: dimension d).
    std::vector<bool> writes;
    std::vector<uint8_t> shape_reads;
    // Per parameter: whether plain atomics (not deterministic accumulation) update it.
    std::vector<bool> atomics;
};

// Per function of the lowered program.
struct FunctionPlan {
    std::string name;  // as users know it: a counting pass is named as the function it was made from
    Variant variant = Variant::Forward;
};

struct ProgramPlan {
    std::string module_name;
    std::vector<FunctionPlan> functions;
    std::vector<KernelPlan> kernels;

    // The kernel called `name`, or null.
    const KernelPlan* find(const std::string& name) const;
    // The kernel that function `function` is a variant of, or null (it is not an entry).
    const KernelPlan* entry(uint32_t function) const;
    KernelPlan* entry(uint32_t function);
};

}  // namespace weft::plan
