// The tracer: per-thread stack of functions being traced, behind the detail::emit_* API.
#include "frontend/tracer.hpp"

#include <atomic>
#include <map>

#include "ir/builder.hpp"
#include "weft/error.hpp"

namespace weft::frontend {

namespace {

// One traced program; functions are traced into it on first call.
struct Session {
    ir::Program* program;
    std::map<const detail::TraceBody*, uint32_t> index;  // traced or in progress
    std::map<const detail::TraceBody*, bool> done;
};

struct Frame {
    Session* session;
    ir::Builder builder;
    uint64_t serial;
    detail::Loc last_loc;
    // In a custom adjoint: each float array parameter of its function -> that array's gradient.
    std::map<ir::ValueId, ir::ValueId> adjoints;
    // The functions with composite results being inlined here, innermost last.
    std::vector<const detail::TraceBody*> inlining;
};

thread_local std::vector<Frame*> frames;
thread_local Session* session = nullptr;
std::atomic<uint64_t> next_serial{1};

Frame& top(detail::Loc loc) {
    if (frames.empty())
        throw Error(
            "a weft value is created or used outside a kernel or weft function; traced "
            "values only exist while a kernel body runs (define them inside the lambda)",
            "", loc.file, loc.line);
    Frame& f = *frames.back();
    if (loc.line != 0) f.last_loc = loc;
    return f;
}

ir::ValueId id(Frame& f, detail::Ref r, detail::Loc loc) {
    if (r.trace != f.serial)
        f.builder.fail(loc,
                       "this value belongs to another kernel or function (it escaped the "
                       "lambda that traced it); pass it in as a parameter instead");
    if (!f.builder.visible(r.id))
        f.builder.fail(loc,
                       "this value was made inside an if_, for_ or while_ body and is used after it; "
                       "declare a variable before the body (weft::Float x = 0.0f;) and assign it inside");
    return r.id;
}

detail::Ref ref(const Frame& f, ir::ValueId v) {
    return {f.serial, v};
}

ir::Type param_type(const detail::ParamSpec& p) {
    return p.is_array ? ir::Type::array(p.dtype, p.ndim, p.components) : ir::Type::scalar(p.dtype);
}

// Traces `body` into a new function of the session's program; returns its index. For the custom
// adjoint of `adjoint_of`, the function gets a gradient parameter per float array parameter of
// `adjoint_of` (the first parameters of `body`).
uint32_t trace_function(Session& s, const detail::TraceBody& body, bool is_kernel,
                        const detail::TraceBody* adjoint_of = nullptr) {
    const auto index = static_cast<uint32_t>(s.program->functions.size());
    s.index[&body] = index;
    auto fn = std::make_unique<ir::Function>();
    fn->name = body.name;
    fn->is_kernel = is_kernel;
    fn->param_names = body.param_names;
    fn->ret = body.has_return ? param_type(body.ret) : ir::Type::void_type();
    fn->loc = body.loc;
    ir::Function& function = *fn;
    s.program->functions.push_back(std::move(fn));

    Frame frame{&s, ir::Builder(function), next_serial++, body.loc};
    frames.push_back(&frame);
    struct Pop {
        ~Pop() { frames.pop_back(); }
    } pop;
    std::vector<detail::Ref> params;
    for (const auto& p : body.params)
        params.push_back(ref(frame, frame.builder.param(param_type(p), body.loc)));
    if (adjoint_of)
        for (size_t i = 0; i < adjoint_of->params.size(); ++i) {
            const detail::ParamSpec& p = adjoint_of->params[i];
            if (!p.is_array || !is_float(p.dtype)) continue;
            function.param_names.push_back("adj_" + adjoint_of->param_names[i]);
            frame.adjoints[params[i].id] = frame.builder.param(param_type(p), body.loc);
        }
    const std::vector<detail::Ref> result = body.trace(params);
    if (body.has_return) {
        const ir::ValueId r = id(frame, result.at(0), frame.last_loc);
        frame.builder.return_(&r, frame.last_loc);
    }
    s.done[&body] = true;
    return index;
}

}  // namespace

ir::Program trace_program(const std::string& module_name, const BodyList& funcs, const BodyList& kernels,
                          const std::vector<CustomDerivative>& derivatives) {
    ir::Program program;
    program.module_name = module_name;
    Session s{&program, {}, {}};
    Session* const outer = session;
    session = &s;
    struct Restore {
        Session* outer;
        ~Restore() { session = outer; }
    } restore{outer};
    for (const auto& f : funcs)
        if (!s.index.count(f.get()) && f->composite_result == 0) trace_function(s, *f, false);
    for (const CustomDerivative& d : derivatives) {
        const uint32_t of = s.index.at(d.function.get());
        const uint32_t index = trace_function(s, *d.body, false, d.replay ? nullptr : d.function.get());
        ir::Function& fn = *program.functions[of];
        (d.replay ? fn.custom_replay : fn.custom_adjoint) = static_cast<int>(index);
    }
    for (const auto& k : kernels) {
        if (program.find(k->name) >= 0)
            throw Error(
                "the module already has a kernel or function named '" + k->name + "'; names must be unique",
                k->name, k->loc.file, k->loc.line);
        trace_function(s, *k, true);
    }
    return program;
}

std::string traced_function_name() {
    return frames.empty() ? std::string() : frames.back()->builder.function().name;
}

}  // namespace weft::frontend

namespace weft::detail {

using frontend::Frame;

Ref emit_const(DType type, uint64_t bits, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.constant(type, bits, loc));
}

Ref emit_copy(Ref value, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.copy(frontend::id(f, value, loc), loc));
}

void emit_assign(Ref target, Ref value, Loc loc) {
    Frame& f = frontend::top(loc);
    f.builder.assign(frontend::id(f, target, loc), frontend::id(f, value, loc), loc);
}

Ref emit_unary(UnaryOp op, Ref a, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.unary(op, frontend::id(f, a, loc), loc));
}

Ref emit_binary(BinaryOp op, Ref a, Ref b, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.binary(op, frontend::id(f, a, loc), frontend::id(f, b, loc), loc));
}

Ref emit_math(MathOp op, Ref a, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.math(op, frontend::id(f, a, loc), loc));
}

Ref emit_select(Ref cond, Ref if_true, Ref if_false, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.select(frontend::id(f, cond, loc), frontend::id(f, if_true, loc),
                                             frontend::id(f, if_false, loc), loc));
}

Ref emit_cast(DType to, Ref a, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.cast(to, frontend::id(f, a, loc), loc));
}

Ref emit_tid(int dim, int ndim, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.tid(dim, ndim, loc));
}

Ref emit_shape(Ref array, int dim, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.shape(frontend::id(f, array, loc), dim, loc));
}

Ref emit_view(Ref array, Ref index, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(f, f.builder.view(frontend::id(f, array, loc), frontend::id(f, index, loc), loc));
}

namespace {
std::vector<ir::ValueId> ids(Frame& f, const std::vector<Ref>& refs, Loc loc) {
    std::vector<ir::ValueId> out;
    for (const Ref& r : refs) out.push_back(frontend::id(f, r, loc));
    return out;
}
}  // namespace

Ref emit_load(const Place& place, Loc loc) {
    Frame& f = frontend::top(loc);
    return frontend::ref(
        f, f.builder.load(frontend::id(f, place.array, loc), ids(f, place.index, loc), place.component, loc));
}

void emit_store(const Place& place, Ref value, Loc loc) {
    Frame& f = frontend::top(loc);
    f.builder.store(frontend::id(f, place.array, loc), ids(f, place.index, loc), place.component,
                    frontend::id(f, value, loc), loc);
}

Ref emit_atomic(AtomicOp op, const Place& place, Ref value, Ref compare, Loc loc) {
    Frame& f = frontend::top(loc);
    const ir::ValueId cmp = op == AtomicOp::Cas ? frontend::id(f, compare, loc) : ir::kNoValue;
    return frontend::ref(f, f.builder.atomic(op, frontend::id(f, place.array, loc), ids(f, place.index, loc),
                                             place.component, frontend::id(f, value, loc), cmp, loc));
}

void emit_print(std::string_view format, const std::vector<Ref>& args, Loc loc) {
    Frame& f = frontend::top(loc);
    f.builder.print(std::string(format), ids(f, args, loc), loc);
}

void emit_if(Ref cond, const std::function<void()>& then_body, const std::function<void()>* else_body,
             Loc loc) {
    Frame& f = frontend::top(loc);
    f.builder.if_(frontend::id(f, cond, loc), then_body, else_body, loc);
}

void emit_for(Ref start, Ref stop, Ref step, const std::function<void(Ref)>& body, Loc loc) {
    Frame& f = frontend::top(loc);
    f.builder.for_(
        frontend::id(f, start, loc), frontend::id(f, stop, loc), frontend::id(f, step, loc),
        [&](ir::ValueId i) { body(frontend::ref(f, i)); }, loc);
}

void emit_while(const std::function<Ref()>& cond, const std::function<void()>& body, Loc loc) {
    Frame& f = frontend::top(loc);
    f.builder.while_([&] { return frontend::id(f, cond(), loc); }, body, loc);
}

void emit_break(Loc loc) {
    frontend::top(loc).builder.break_(loc);
}

void emit_continue(Loc loc) {
    frontend::top(loc).builder.continue_(loc);
}

void emit_return(const Ref* value, Loc loc) {
    Frame& f = frontend::top(loc);
    if (!f.inlining.empty())
        f.builder.fail(loc, "weft::return_ in function '" + f.inlining.back()->name +
                                "', which returns a composite and is inlined at each call; end the "
                                "lambda with `return value;` instead (compute the value with select or "
                                "if_ into a local first)");
    if (value) {
        const ir::ValueId v = frontend::id(f, *value, loc);
        f.builder.return_(&v, loc);
    } else {
        f.builder.return_(nullptr, loc);
    }
}

Ref emit_call(const std::shared_ptr<const TraceBody>& callee, const std::vector<Ref>& args, Loc loc) {
    Frame& f = frontend::top(loc);
    frontend::Session& s = *f.session;
    const auto found = s.index.find(callee.get());
    uint32_t index;
    if (found == s.index.end()) {
        index = frontend::trace_function(s, *callee, false);
    } else {
        if (!s.done[callee.get()])
            f.builder.fail(loc, "function '" + callee->name +
                                    "' calls itself, directly or through other functions; recursion "
                                    "is not supported (use a while_ loop)");
        index = found->second;
    }
    const ir::ValueId r = f.builder.call(index, *s.program->functions[index], ids(f, args, loc), loc);
    return r == ir::kNoValue ? Ref{} : frontend::ref(f, r);
}

std::vector<Ref> emit_inline_call(const std::shared_ptr<const TraceBody>& callee,
                                  const std::vector<Ref>& args, Loc loc) {
    Frame& f = frontend::top(loc);
    for (const TraceBody* b : f.inlining)
        if (b == callee.get())
            f.builder.fail(loc, "function '" + callee->name +
                                    "' calls itself, directly or through other functions; recursion "
                                    "is not supported (use a while_ loop)");
    // Scalars are passed by value: the body's writes to its parameters stay its own.
    std::vector<Ref> params;
    for (size_t i = 0; i < args.size(); ++i)
        params.push_back(callee->params.at(i).is_array ? args[i] : emit_copy(args[i], loc));
    f.inlining.push_back(callee.get());
    struct Pop {
        Frame& f;
        ~Pop() { f.inlining.pop_back(); }
    } pop{f};
    return callee->trace(params);
}

Ref emit_adjoint(Ref array, Loc loc) {
    Frame& f = frontend::top(loc);
    const ir::ValueId a = frontend::id(f, array, loc);
    const auto it = f.adjoints.find(a);
    if (it == f.adjoints.end())
        f.builder.fail(loc,
                       f.adjoints.empty()
                           ? "weft::adjoint(array) is only available in a custom adjoint (Module::func_grad)"
                           : "weft::adjoint(array) takes one of the function's float array parameters "
                             "(not a view, nor an integer array)");
    return frontend::ref(f, it->second);
}

DType dtype_of_ref(Ref value) {
    Frame& f = frontend::top({});
    return f.builder.function().type_of(frontend::id(f, value, {})).dtype;
}

Loc last_loc() {
    return frontend::frames.empty() ? Loc{} : frontend::frames.back()->last_loc;
}

void trace_fail(Loc loc, const std::string& message) {
    frontend::top(loc).builder.fail(loc, message);
}

}  // namespace weft::detail
