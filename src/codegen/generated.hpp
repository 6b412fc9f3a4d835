// What code generation hands the runtime: the module's source and what it needs to run it. No IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::codegen {

// Function bodies are the same C++ for both; the prelude adapts to the compiler (__CUDACC__).
enum class Dialect { Cpu, Cuda };

// An array access that bounds checking can report: where it is and which array it touches.
struct AccessSite {
    std::string function;  // as users know it (a counting pass is named as its original)
    std::string array;     // the parameter's name, or "an array argument" inside a function
    std::string file;
    uint32_t line = 0;
    int dim_offset = 0;  // through a view: the parameter's dimensions the view has removed
};

struct Generated {
    std::string source;                // the module's code, without the prelude
    std::vector<AccessSite> sites;     // indexed by the site numbers in `source`
    std::vector<std::string> entries;  // the entry symbol of each function (empty: not a kernel)
    std::vector<size_t> params;        // the parameter count of each function
    std::vector<bool> prints;          // whether each function may print (directly or by a call)
    // Per function, a second GPU entry that also resolves the kernel's deterministic sums after a
    // grid barrier (wf::Launch::resolve), or empty. A separate entry: its registers would slow the
    // plain entry's loop; the runtime picks one per launch. The entries are in `resolving_source`
    // (the functions again, then these entries; empty when there are none), a module the runtime
    // compiles only when a launch would use it: they double a module's compile time.
    std::vector<std::string> resolving_entries;
    std::string resolving_source;
    // Per function, a GPU entry that runs the counting pass and then this execution pass in one
    // cooperative kernel, each block waiting for every block's count between them (one slot
    // counter element), or empty. In `fused_source` (as `resolving_source` is built; empty when
    // there are none), compiled only when a launch would use one.
    std::vector<std::string> fused_entries;
    std::string fused_source;

    // Whether the code uses deterministic atomics (slot reservations, deterministic sums): then
    // its module needs the whole prelude, else the plain one suffices.
    bool deterministic = false;
};

// The prelude's text (src/device/*.h), compiled before a module's code: the whole of it (the
// library's own kernels use this), the plain part without the deterministic headers, and the one
// `g` needs. The deterministic headers are most of the prelude's compile time (NVRTC).
const std::string& prelude();
const std::string& plain_prelude();
const std::string& prelude_for(const Generated& g);

}  // namespace weft::codegen
