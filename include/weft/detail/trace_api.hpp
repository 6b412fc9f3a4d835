// The narrow interface between the public kernel-language types and the tracer (src/frontend).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "weft/detail/ops.hpp"
#include "weft/dtype.hpp"

namespace weft::detail {

// A user source position. `file` points at the static string std::source_location returns.
struct Loc {
    const char* file = "";
    uint32_t line = 0;
    static Loc from(const std::source_location& s) { return {s.file_name(), s.line()}; }
};

// A value in the function being traced: `trace` identifies the trace (so a value that escapes
// its kernel is caught), `id` the value within it.
struct Ref {
    uint64_t trace = 0;
    uint32_t id = 0;
};

// The type of a kernel or function parameter (or a function's return) as the tracer sees it.
struct ParamSpec {
    bool is_array = false;
    DType dtype = DType::Int32;  // an array's: the scalar type of its elements' components
    int ndim = 0;
    int components = 1;  // arrays: scalars per element (docs/design/0015)
};

// What an indexed operation addresses: component `component` of array[index...].
struct Place {
    Ref array;
    std::vector<Ref> index;
    int component = 0;
};

// What the tracer needs to trace one user function or kernel: its signature and a body that,
// given the parameter values, calls the user's lambda.
struct TraceBody {
    std::string name;
    // The lambda's parameters as the user wrote them: how many, and the names given (maybe fewer).
    size_t user_param_count = 0;
    std::vector<std::string> user_param_names;
    // Its IR parameters: each user parameter's leaves (weft/module.hpp's ParamTraits), named by path.
    std::vector<std::string> param_names;
    std::vector<ParamSpec> params;
    bool has_return = false;
    ParamSpec ret;
    // A function whose result is a composite (a vec3: 3) has no IR function of its own: it is
    // inlined at each call (emit_inline_call), its result being this many scalar values.
    int composite_result = 0;
    Loc loc;
    // Traces the body; returns the values the lambda returned (one scalar, a composite's
    // components, or none).
    std::function<std::vector<Ref>(const std::vector<Ref>& params)> trace;
};

Ref emit_const(DType type, uint64_t bits, Loc loc);
Ref emit_copy(Ref value, Loc loc);
void emit_assign(Ref target, Ref value, Loc loc);
Ref emit_unary(UnaryOp op, Ref a, Loc loc);
Ref emit_binary(BinaryOp op, Ref a, Ref b, Loc loc);
Ref emit_math(MathOp op, Ref a, Loc loc);
Ref emit_select(Ref cond, Ref if_true, Ref if_false, Loc loc);
Ref emit_cast(DType to, Ref a, Loc loc);
Ref emit_tid(int dim, int ndim, Loc loc);
Ref emit_shape(Ref array, int dim, Loc loc);
// array[index] of an array of 2 or more dimensions: a view of one dimension fewer.
Ref emit_view(Ref array, Ref index, Loc loc);
Ref emit_load(const Place& place, Loc loc);
void emit_store(const Place& place, Ref value, Loc loc);
// `compare` is used by Cas only.
Ref emit_atomic(AtomicOp op, const Place& place, Ref value, Ref compare, Loc loc);
void emit_print(std::string_view format, const std::vector<Ref>& args, Loc loc);
void emit_if(Ref cond, const std::function<void()>& then_body, const std::function<void()>* else_body,
             Loc loc);
void emit_for(Ref start, Ref stop, Ref step, const std::function<void(Ref)>& body, Loc loc);
void emit_while(const std::function<Ref()>& cond, const std::function<void()>& body, Loc loc);
void emit_break(Loc loc);
void emit_continue(Loc loc);
void emit_return(const Ref* value, Loc loc);
Ref emit_call(const std::shared_ptr<const TraceBody>& callee, const std::vector<Ref>& args, Loc loc);
// A call of a function with a composite result: its body traced here, on copies of the scalar
// arguments; returns the result's components.
std::vector<Ref> emit_inline_call(const std::shared_ptr<const TraceBody>& callee,
                                  const std::vector<Ref>& args, Loc loc);
// In a custom adjoint (Module::func_grad): the gradient of `array`, one of its function's float
// array parameters.
Ref emit_adjoint(Ref array, Loc loc);

// The type of a traced value (for checks in templates that cannot see it statically).
DType dtype_of_ref(Ref value);
// The location of the most recent traced operation, for operators that cannot take one.
Loc last_loc();
// Raises the weft::Error of a kernel-language rule broken at the user's `loc` (names the kernel).
[[noreturn]] void trace_fail(Loc loc, const std::string& message);

}  // namespace weft::detail
