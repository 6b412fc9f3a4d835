// The adjoint generator's working copy of a kernel: calls inlined, exits as flags, operands snapped.
#include "autodiff/structured_copy.hpp"

#include "autodiff/emitter.hpp"

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
    Copier(const ir::Program& program, ir::Function& fn) : program_(program), fn_(fn) {}

    std::vector<ir::Node> top;  // declarations of the flag registers, at the start of the body

    // A register of `type` declared at the top, initially zero (false).
    ir::ValueId reg(ir::Type type) {
        Emitter e(fn_, &top, fn_.loc);
        return e.node({.kind = ir::NodeKind::Const}, type, true);
    }

    // Copies src.nodes[from...] of `s` into `out`; returns whether the copy may set a flag of `f`.
    bool block(const ir::Function& s, const ir::Block& src, size_t from, Env& env, const Flags& f,
               std::vector<ir::Node>& out) {
        for (size_t i = from; i < src.nodes.size(); ++i) {
            const ir::Node& n = src.nodes[i];
            Emitter e(fn_, &out, n.loc);
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
                    fn_.params.push_back(env[n.result]);
                    break;
                default: {
                    ir::Node c = n;
                    for (size_t a = 0; a < c.args.size(); ++a)
                        c.args[a] = (n.kind == ir::NodeKind::Assign && a == 0) ? env[n.args[a]]
                                                                               : operand(s, n, a, env, e);
                    if (n.result != ir::kNoValue) {
                        c.result = e.value(s.type_of(n.result), s.values[n.result].assigned);
                        env[n.result] = c.result;
                    }
                    out.push_back(std::move(c));
                }
            }
        }
        return false;
    }

private:
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

    void inline_call(const ir::Function& s, const ir::Node& n, Env& env, std::vector<ir::Node>& out) {
        const ir::Function& callee = *program_.functions[n.bits];
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
        block(callee, callee.body, 0, inner, f, out);
        if (n.result != ir::kNoValue) env[n.result] = e.copy(f.ret_value, s.values[n.result].assigned);
    }

    const ir::Program& program_;
    ir::Function& fn_;
};

}  // namespace

ir::Function structured_copy(const ir::Program& program, uint32_t k) {
    const ir::Function& kernel = *program.functions[k];
    ir::Function fn;
    fn.name = kernel.name;
    fn.is_kernel = true;
    fn.param_names = kernel.param_names;
    fn.ret = kernel.ret;
    fn.tid_ndim = kernel.tid_ndim;
    fn.loc = kernel.loc;
    Env env(kernel.values.size(), ir::kNoValue);
    Copier copier(program, fn);
    const Flags top{copier.reg(ir::Type::scalar(DType::Bool))};
    std::vector<ir::Node> body;
    copier.block(kernel, kernel.body, 0, env, top, body);
    fn.body.nodes = std::move(copier.top);
    for (ir::Node& n : body) fn.body.nodes.push_back(std::move(n));
    return fn;
}

}  // namespace weft::autodiff
