// Traces kernels and weft functions (user lambdas) into an IR program.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "weft/detail/trace_api.hpp"

namespace weft::frontend {

using BodyList = std::vector<std::shared_ptr<const detail::TraceBody>>;

// A user-written adjoint or replay of weft function `function` (Module::func_grad, func_replay).
struct CustomDerivative {
    std::shared_ptr<const detail::TraceBody> function;
    std::shared_ptr<const detail::TraceBody> body;
    bool replay = false;  // false: the adjoint
};

// Traces every function in `funcs` (in order), then the custom derivatives, then every kernel,
// and the functions they call, into one program. Throws weft::Error for anything the kernel
// language rejects.
ir::Program trace_program(const std::string& module_name, const BodyList& funcs, const BodyList& kernels,
                          const std::vector<CustomDerivative>& derivatives = {});

// The kernel or function this thread is tracing now ("" when none), for errors about calls
// made from inside its lambda.
std::string traced_function_name();

}  // namespace weft::frontend
