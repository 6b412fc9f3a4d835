// The adjoint generator's working copy of a kernel: calls inlined, exits as flags, operands snapped.
#include "autodiff/structured_copy.hpp"

#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "autodiff/emitter.hpp"
#include "ir/facts.hpp"
#include "weft/error.hpp"

namespace weft::autodiff {

bool needs_primal(const ir::Function& fn, const ir::Node& n, size_t i) {
    using K = ir::NodeKind;
    switch (n.kind) {
        case K::Binary: {
            const ir::BinaryOp op = n.binary_op();
            return fn.type_of(n.result).is_float() && op != ir::BinaryOp::Add && op != ir::BinaryOp::Sub;
        }
        case K::Math: return fn.type_of(n.result).is_float();
        case K::Select: return i == 0;
        case K::Load:
        case K::View: return i >= 1;
        case K::Store:
        case K::Atomic: return i >= 1 && i + 1 < n.args.size();
        case K::If:
        case K::For: return true;
        default: return false;
    }
}

namespace {

using Env = std::vector<ir::ValueId>;  // per value of the function being copied: its copy

// The flag registers an exit may set: the function's return (and its value), the innermost
// loop's break and continue.
struct Flags {
    ir::ValueId ret = ir::kNoValue;
    ir::ValueId ret_value = ir::kNoValue;
    ir::ValueId brk = ir::kNoValue;
    ir::ValueId cont = ir::kNoValue;
};

class Copier {
public:
    // With `kernel` (and `writes`), the copy checks what a backward cannot do and handles custom
    // derivatives; without, it only inlines.
    Copier(const ir::Program& program, ir::Function& fn, const ir::Function* kernel = nullptr,
           const std::vector<bool>* writes = nullptr)
        : program_(program), fn_(fn), kernel_(kernel), writes_(writes) {}

    std::vector<ir::Node> top;  // declarations of the flag registers, at the start of the body

    // A register of `type` declared at the top, initially zero (false).
    ir::ValueId reg(ir::Type type) {
        Emitter e(fn_, &top, fn_.loc);
        return e.node({.kind = ir::NodeKind::Const}, type, true);
    }

    // Copies src.nodes[from...] of `s` into `out`; returns whether the copy may set a flag of `f`.
    bool block(const ir::Function& s, const ir::Block& src, size_t from, Env& env, const Flags& f,
               std::vector<ir::Node>& out) {
        stored_.emplace_back();
        const bool exits = block_nodes(s, src, from, env, f, out);
        stored_.pop_back();
        return exits;
    }

private:
    bool block_nodes(const ir::Function& s, const ir::Block& src, size_t from, Env& env, const Flags& f,
                     std::vector<ir::Node>& out) {
        for (size_t i = from; i < src.nodes.size(); ++i) {
            const ir::Node& n = src.nodes[i];
            Emitter e(fn_, &out, n.loc);
            // A region or call may write any array: what this block stored is not known after it.
            if (n.kind == ir::NodeKind::If || n.kind == ir::NodeKind::For || n.kind == ir::NodeKind::While ||
                n.kind == ir::NodeKind::Call)
                stored_.back().clear();
            switch (n.kind) {
                case ir::NodeKind::Return:
                    if (!n.args.empty()) e.assign(f.ret_value, env[n.args[0]]);
                    e.assign(f.ret, e.boolean(true));
                    return true;
                case ir::NodeKind::Break: e.assign(f.brk, e.boolean(true)); return true;
                case ir::NodeKind::Continue: e.assign(f.cont, e.boolean(true)); return true;
                case ir::NodeKind::If: {
                    ir::Node c{.kind = ir::NodeKind::If,
                               .args = {operand(s, n, 0, env, e)},
                               .blocks = std::vector<ir::Block>(2),
                               .loc = n.loc};
                    const bool a = block(s, n.blocks[0], 0, env, f, c.blocks[0].nodes);
                    const bool b = block(s, n.blocks[1], 0, env, f, c.blocks[1].nodes);
                    out.push_back(std::move(c));
                    if (a || b) return rest_guarded(s, src, i + 1, env, f, out, n.loc);
                    break;
                }
                case ir::NodeKind::For:
                case ir::NodeKind::While:
                    if (loop(s, n, env, f, out)) return rest_guarded(s, src, i + 1, env, f, out, n.loc);
                    break;
                case ir::NodeKind::Call: inline_call(s, n, env, out); break;
                case ir::NodeKind::Param:
                    if (env[n.result] != ir::kNoValue) break;  // an inlined function's: mapped already
                    env[n.result] = e.node(n, s.type_of(n.result), s.values[n.result].assigned);
                    roots_[env[n.result]] = static_cast<int>(fn_.params.size());
                    fn_.params.push_back(env[n.result]);
                    break;
                default: {
                    if (kernel_ && forward_stored(n, env)) break;
                    if (kernel_) check(s, n, env);
                    ir::Node c = n;
                    for (size_t a = 0; a < c.args.size(); ++a)
                        c.args[a] = (n.kind == ir::NodeKind::Assign && a == 0) ? env[n.args[a]]
                                                                               : operand(s, n, a, env, e);
                    if (n.result != ir::kNoValue) {
                        c.result = e.value(s.type_of(n.result), s.values[n.result].assigned);
                        env[n.result] = c.result;
                    }
                    if (n.kind == ir::NodeKind::View) roots_[c.result] = root(c.args[0]);
                    if (kernel_ && (n.kind == ir::NodeKind::Store || n.kind == ir::NodeKind::Atomic))
                        note_write(c, e);
                    out.push_back(std::move(c));
                }
            }
        }
        return false;
    }

    // An element this block stored: the array (as copied), the indices and the component.
    struct Element {
        ir::ValueId array;
        std::vector<ir::ValueId> index;
        uint64_t component;
        bool operator<(const Element& o) const {
            return std::tie(array, index, component) < std::tie(o.array, o.index, o.component);
        }
    };
    // The element a copied load, store or atomic `c` addresses, when its indices are values that
    // cannot change (a register's index is copied at each access, so it never matches).
    std::optional<Element> element_of(const ir::Node& c, size_t indices) const {
        Element el{c.args[0], {}, c.bits};
        for (size_t a = 1; a <= indices; ++a) {
            if (fn_.values[c.args[a]].assigned) return std::nullopt;
            el.index.push_back(c.args[a]);
        }
        return el;
    }
    // Store `c` (copied, not yet emitted; or an atomic): every element of its array's memory this
    // block stored before may have changed, and a store's element now holds its value (snapped
    // into a copy when it is a register the code changes later).
    void note_write(ir::Node& c, Emitter& e) {
        const int written = root(c.args[0]);
        std::erase_if(stored_.back(), [&](const auto& kv) {
            const int r = root(kv.first.array);
            return written < 0 || r < 0 || r == written;
        });
        if (c.kind != ir::NodeKind::Store) return;
        ir::ValueId& value = c.args.back();
        if (fn_.values[value].assigned) value = e.copy(value);
        if (const auto el = element_of(c, c.args.size() - 2)) stored_.back()[*el] = value;
    }
    // A load of an element this block stored, with no write to its array's memory in between: the
    // thread reads back what it stored, so the copy takes the stored value instead of a load (the
    // backward pass, which replays the kernel after it ran, would read what the array holds at
    // the end). The gradient then reaches the stored value directly.
    bool forward_stored(const ir::Node& n, Env& env) {
        if (n.kind != ir::NodeKind::Load || replaying_ != 0) return false;
        ir::Node c = n;
        for (ir::ValueId& a : c.args) a = env[a];
        const auto el = element_of(c, c.args.size() - 1);
        if (!el) return false;
        const auto it = stored_.back().find(*el);
        if (it == stored_.back().end()) return false;
        env[n.result] = it->second;
        return true;
    }

    int root(ir::ValueId array) const {
        const auto it = roots_.find(array);
        return it == roots_.end() ? -1 : it->second;
    }
    const ir::Facts& facts(const ir::Function& s) {
        auto it = facts_.find(&s);
        if (it == facts_.end()) it = facts_.emplace(&s, std::make_unique<ir::Facts>(s)).first;
        return *it->second;
    }
    [[noreturn]] void reject(const ir::Node& at, const std::string& message) const {
        throw Error("cannot generate the backward pass: " + message, kernel_->name, at.loc.file, at.loc.line);
    }
    std::string name(ir::ValueId array) const {
        const int p = root(array);
        return p >= 0 ? "'" + kernel_->param_names[p] + "'" : std::string("an array");
    }

    // What the backward pass cannot do correctly, found as node `n` of `s` is copied.
    void check(const ir::Function& s, const ir::Node& n, const Env& env) {
        if (n.kind == ir::NodeKind::Atomic) {
            const ir::ValueId array = env[n.args[0]];
            const bool float_array = is_float(fn_.type_of(array).dtype);
            const std::string op = std::string("atomic_") + detail::op_name(n.atomic_op());
            if (facts(s).used(n.result) && !float_array)
                reject(n,
                       "the kernel uses the result of " + op + " on counter " + name(array) +
                           " (slot allocation); a backward pass replays the forward code, and the replayed " +
                           op +
                           " would allocate new slots from the already-advanced counter and send gradients "
                           "to the wrong elements. Save each slot in an array in the forward pass and give "
                           "the function that allocates it a custom replay (Module::func_replay) that reads "
                           "the saved slot");
            if (facts(s).used(n.result))
                reject(n, "the kernel uses the result of " + op + " on " + name(array) +
                              ", which has no adjoint; compute the value another way");
            if (float_array && n.atomic_op() != ir::AtomicOp::Add && n.atomic_op() != ir::AtomicOp::Sub)
                reject(n, op + " on float array " + name(array) +
                              " has no adjoint (only atomic_add and atomic_sub do); write it another way, or "
                              "set enable_backward = false for this kernel's module");
        }
        if (n.kind == ir::NodeKind::Load && replaying_ == 0) {
            const int p = root(env[n.args[0]]);
            if (p >= 0 && (*writes_)[p])
                reject(n,
                       "array " + name(env[n.args[0]]) +
                           " is loaded here and also written by this kernel; the backward pass replays the "
                           "kernel after it has run, so the replayed load would read the written value. "
                           "Write the results to a separate array (or give the function that loads it a "
                           "custom replay)");
        }
    }

    // A custom adjoint may not allocate slots nor store to a gradient.
    void check_custom_adjoint(const ir::Function& grad, size_t forward_params) {
        const ir::Facts& f = facts(grad);
        ir::for_each_node(grad.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Atomic && f.used(n.result))
                reject(n,
                       "the custom adjoint '" + grad.name + "' uses the result of atomic_" +
                           detail::op_name(n.atomic_op()) +
                           "; slot allocation in a backward pass would allocate from the counter the forward "
                           "pass advanced. Read slots the forward pass saved instead");
            if (n.kind == ir::NodeKind::Store && f.param_of(n.args[0]) >= static_cast<int>(forward_params))
                reject(n, "the custom adjoint '" + grad.name +
                              "' stores to a gradient; accumulate into it with weft::adjoint(a)[i] += v");
        });
    }

    // Operand `a` of `n`, read through a Copy made now when a rule needs the value of a register.
    ir::ValueId operand(const ir::Function& s, const ir::Node& n, size_t a, Env& env, Emitter& e) {
        const ir::ValueId v = env[n.args[a]];
        if (fn_.values[v].assigned && fn_.type_of(v).is_scalar() && needs_primal(s, n, a)) return e.copy(v);
        return v;
    }

    // not (f.ret or f.brk or f.cont), for the flags that exist.
    ir::ValueId none_set(const Flags& f, Emitter& e) {
        ir::ValueId any = ir::kNoValue;
        for (ir::ValueId flag : {f.ret, f.brk, f.cont}) {
            if (flag == ir::kNoValue) continue;
            any = any == ir::kNoValue ? flag : e.binary(ir::BinaryOp::Or, any, flag);
        }
        return e.unary(ir::UnaryOp::Not, any);
    }

    bool rest_guarded(const ir::Function& s, const ir::Block& src, size_t from, Env& env, const Flags& f,
                      std::vector<ir::Node>& out, ir::Loc loc) {
        if (from == src.nodes.size()) return true;
        Emitter e(fn_, &out, loc);
        const ir::ValueId go = none_set(f, e);
        e.if_(go, [&] { block(s, src, from, env, f, *e.out()); });
        return true;
    }

    // A loop whose body gets flags of its own; returns whether it may set f.ret.
    bool loop(const ir::Function& s, const ir::Node& n, Env& env, const Flags& f,
              std::vector<ir::Node>& out) {
        Emitter e(fn_, &out, n.loc);
        const Flags inner{f.ret, f.ret_value, reg(ir::Type::scalar(DType::Bool)),
                          reg(ir::Type::scalar(DType::Bool))};
        e.assign(inner.brk, e.boolean(false));
        ir::Node c{.kind = n.kind, .blocks = std::vector<ir::Block>(n.blocks.size()), .loc = n.loc};
        const Flags stop{f.ret, ir::kNoValue, inner.brk, ir::kNoValue};
        bool exits = false;
        auto body = [&](const ir::Block& b, std::vector<ir::Node>& into) {
            Emitter be(fn_, &into, n.loc);
            be.assign(inner.cont, be.boolean(false));
            if (n.kind == ir::NodeKind::While) {
                exits = block(s, b, 0, env, inner, into);
                return;
            }
            be.if_(none_set(stop, be), [&] { exits = block(s, b, 0, env, inner, *be.out()); });
        };
        if (n.kind == ir::NodeKind::For) {
            for (size_t a = 0; a < 3; ++a) c.args.push_back(operand(s, n, a, env, e));
            c.result = e.value(s.type_of(n.result));
            env[n.result] = c.result;
            body(n.blocks[0], c.blocks[0].nodes);
        } else {
            block(s, n.blocks[0], 0, env, Flags{}, c.blocks[0].nodes);
            Emitter ce(fn_, &c.blocks[0].nodes, n.loc);
            c.args = {ce.binary(ir::BinaryOp::And, env[n.args[0]], none_set(stop, ce))};
            body(n.blocks[1], c.blocks[1].nodes);
        }
        out.push_back(std::move(c));
        return exits && f.ret != ir::kNoValue;
    }

public:
    void inline_call(const ir::Function& s, const ir::Node& n, Env& env, std::vector<ir::Node>& out) {
        const ir::Function& called = *program_.functions[n.bits];
        const bool replayed = kernel_ && called.custom_replay >= 0;
        const ir::Function& callee = replayed ? *program_.functions[called.custom_replay] : called;
        Emitter e(fn_, &out, n.loc);
        const Flags f{reg(ir::Type::scalar(DType::Bool)),
                      callee.ret.is_void() ? ir::kNoValue : reg(callee.ret)};
        e.assign(f.ret, e.boolean(false));
        Env inner(callee.values.size(), ir::kNoValue);
        for (size_t i = 0; i < callee.params.size(); ++i) {
            const ir::ValueId arg = env[n.args[i]];
            const ir::ValueId p = callee.params[i];
            inner[p] = callee.type_of(p).is_array() ? arg : e.copy(arg, callee.values[p].assigned);
        }
        replaying_ += replayed;
        if (kernel_ && called.custom_adjoint >= 0) {
            // Replayed for its result, never swept: the custom adjoint stands for its reverse.
            ir::Node only{.kind = ir::NodeKind::If,
                          .sub = kReplayOnly,
                          .args = {e.boolean(true)},
                          .blocks = std::vector<ir::Block>(2),
                          .loc = n.loc};
            block(callee, callee.body, 0, inner, f, only.blocks[0].nodes);
            out.push_back(std::move(only));
        } else {
            block(callee, callee.body, 0, inner, f, out);
        }
        replaying_ -= replayed;
        if (n.result != ir::kNoValue) env[n.result] = e.copy(f.ret_value, s.values[n.result].assigned);
        if (!kernel_ || called.custom_adjoint < 0) return;
        const ir::Function& grad = *program_.functions[called.custom_adjoint];
        check_custom_adjoint(grad, called.params.size() + (called.ret.is_void() ? 0 : 1));
        ir::Node marker{.kind = ir::NodeKind::Call,
                        .sub = kCustomAdjointCall,
                        .bits = static_cast<uint64_t>(called.custom_adjoint),
                        .loc = n.loc};
        for (ir::ValueId a : n.args) marker.args.push_back(env[a]);
        if (n.result != ir::kNoValue) {
            marker.args.push_back(env[n.result]);
            marker.text = "result";  // the last operand is the call's result
        }
        out.push_back(std::move(marker));
    }

private:
    const ir::Program& program_;
    ir::Function& fn_;
    const ir::Function* kernel_;
    const std::vector<bool>* writes_;
    int replaying_ = 0;                                   // inside a custom replay's body
    std::vector<std::map<Element, ir::ValueId>> stored_;  // per block being copied, innermost last
    std::map<ir::ValueId, int> roots_;  // array value -> the kernel parameter whose memory it is
    std::map<const ir::Function*, std::unique_ptr<ir::Facts>> facts_;
};

}  // namespace

ir::Function structured_copy(const ir::Program& program, uint32_t k, const std::vector<bool>& writes) {
    const ir::Function& kernel = *program.functions[k];
    ir::Function fn;
    fn.name = kernel.name;
    fn.is_kernel = true;
    fn.param_names = kernel.param_names;
    fn.ret = kernel.ret;
    fn.tid_ndim = kernel.tid_ndim;
    fn.loc = kernel.loc;
    Env env(kernel.values.size(), ir::kNoValue);
    Copier copier(program, fn, &kernel, &writes);
    const Flags top{copier.reg(ir::Type::scalar(DType::Bool))};
    std::vector<ir::Node> body;
    copier.block(kernel, kernel.body, 0, env, top, body);
    fn.body.nodes = std::move(copier.top);
    for (ir::Node& n : body) fn.body.nodes.push_back(std::move(n));
    return fn;
}

ir::ValueId inline_function(const ir::Program& program, uint32_t callee, const std::vector<ir::ValueId>& args,
                            ir::Function& fn, std::vector<ir::Node>& out, std::vector<ir::Node>& decls) {
    const ir::Function& called = *program.functions[callee];
    Copier copier(program, fn);
    Env env(args.size(), ir::kNoValue);
    ir::Node call{.kind = ir::NodeKind::Call, .bits = callee, .loc = called.loc};
    for (size_t i = 0; i < args.size(); ++i) {
        env[i] = args[i];
        call.args.push_back(static_cast<ir::ValueId>(i));
    }
    if (!called.ret.is_void()) call.result = static_cast<ir::ValueId>(args.size());
    env.push_back(ir::kNoValue);
    // A stand-in caller whose values 0... are the arguments and whose next value is the result.
    ir::Function caller;
    for (ir::ValueId a : args) caller.values.push_back({fn.type_of(a), false});
    caller.values.push_back({called.ret, false});
    copier.inline_call(caller, call, env, out);
    for (ir::Node& n : copier.top) decls.push_back(std::move(n));
    return called.ret.is_void() ? ir::kNoValue : env[args.size()];
}

}  // namespace weft::autodiff
