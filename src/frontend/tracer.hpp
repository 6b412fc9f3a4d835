// Traces kernels and weft functions (user lambdas) into an IR program.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "weft/detail/trace_api.hpp"

namespace weft::frontend {

using BodyList = std::vector<std::shared_ptr<const detail::TraceBody>>;

// Traces every function in `funcs` (in order), then every kernel, and the functions they call,
// into one program. Throws weft::Error for anything the kernel language rejects.
ir::Program trace_program(const std::string& module_name, const BodyList& funcs, const BodyList& kernels);

// The kernel or function this thread is tracing now ("" when none), for errors about calls
// made from inside its lambda.
std::string traced_function_name();

}  // namespace weft::frontend
