// The adjoint generator: replay of the forward code, then reverse statements, region by region.
//
// How values reach the reverse sweep (docs/design/0022): the sweep of a block runs after a
// replay of that block (side effects left out), so the block's own values are there. A region
// (if, for, while) is swept by replaying it again from a snapshot of the mutable registers it
// touches, taken when the replay before reached it; a loop is swept iteration by iteration,
// last first, each iteration replayed before it is swept. When an iteration's gradient needs a
// register that the loop changes, the iterations before it are replayed first (quadratic in the
// trip count, but exact); otherwise the iteration is replayed alone. Adjoints are registers,
// cleared where their value is defined, so each dynamic instance of a value gets its own.
#include "autodiff/adjoint_kernel.hpp"

#include <map>
#include <set>
#include <string>

#include "autodiff/adjoint_rules.hpp"
#include "autodiff/emitter.hpp"
#include "autodiff/structured_copy.hpp"
#include "ir/facts.hpp"
#include "weft/error.hpp"

namespace weft::autodiff {

namespace {

using ir::NodeKind;
using ir::ValueId;
constexpr ValueId kNone = ir::kNoValue;

// Per value of the structured copy: its value in the adjoint, and for arrays its gradient array.
struct Env {
    std::vector<ValueId> map;
    std::vector<ValueId> grad;
};

class Generator {
public:
    Generator(const ir::Program& program, const ir::Function& src, ir::Function& out)
        : program_(program), src_(src), g_(out), facts_(src) {
        regions(src_.body);
    }

    // The registers each checkpoint holds, over all loops that keep them (AdjointKernel).
    int checkpoint_floats() const { return checkpoint_floats_; }
    int checkpoint_ints() const { return checkpoint_ints_; }

    std::vector<uint32_t> run() {
        std::vector<ir::Node> body;
        Emitter e(g_, &prologue_, src_.loc);
        Env env{std::vector<ValueId>(src_.values.size(), kNone),
                std::vector<ValueId>(src_.values.size(), kNone)};
        for (size_t i = 0; i < src_.params.size(); ++i) {
            const ValueId p = src_.params[i];
            env.map[p] = param(e, src_.type_of(p));
        }
        std::vector<uint32_t> differentiable;
        for (size_t i = 0; i < src_.params.size(); ++i) {
            const ValueId p = src_.params[i];
            if (!src_.type_of(p).is_array() || !is_float(src_.type_of(p).dtype)) continue;
            differentiable.push_back(static_cast<uint32_t>(i));
            env.grad[p] = param(e, src_.type_of(p));
            has_.emplace(p, param(e, ir::Type::scalar(DType::Bool)));
        }
        if (!carried_.empty()) {
            scratch_floats_ = param(e, ir::Type::array(DType::Float64, 2));
            scratch_ints_ = param(e, ir::Type::array(DType::Int64, 2));
            checkpoints_ = param(e, ir::Type::scalar(DType::Int64));
            thread_ = e.node({.kind = NodeKind::Tid, .sub = ir::kLinearTid}, ir::Type::scalar(DType::Int64));
        }
        e.set_out(&body);
        replay(src_.body, env, e);
        reverse(src_.body, env, e);
        g_.body.nodes = std::move(prologue_);
        for (ir::Node& n : decls_) g_.body.nodes.push_back(std::move(n));
        for (ir::Node& n : body) g_.body.nodes.push_back(std::move(n));
        return differentiable;
    }

private:
    ValueId param(Emitter& e, ir::Type type) {
        const auto index = static_cast<uint64_t>(g_.params.size());
        const ValueId v = e.node({.kind = NodeKind::Param, .bits = index}, type);
        g_.params.push_back(v);
        return v;
    }

    // A register declared at the top of the adjoint, initially zero.
    ValueId declare(ir::Type type) {
        Emitter d(g_, &decls_, src_.loc);
        return d.node({.kind = NodeKind::Const}, type, true);
    }

    // ---- regions: the registers each touches, whether a loop's iterations depend on each other

    // Collects, for each If/For/While, the mutable registers defined outside it that it reads or
    // assigns; returns the values defined inside `b` (results and loop variables).
    std::set<ValueId> regions(const ir::Block& b) {
        std::set<ValueId> defined;
        for (const ir::Node& n : b.nodes) {
            if (n.result != kNone) defined.insert(n.result);
            if (n.blocks.empty()) continue;
            std::set<ValueId> inner;
            for (const ir::Block& child : n.blocks) inner.merge(regions(child));
            std::set<ValueId> used;
            for (const ir::Block& child : n.blocks)
                ir::for_each_node(child, [&](const ir::Node& m) {
                    for (ValueId a : m.args) used.insert(a);
                });
            for (ValueId a : n.args) used.insert(a);
            std::vector<ValueId>& regs = touched_[&n];
            for (ValueId v : used)
                if (src_.values[v].assigned && !inner.count(v)) regs.push_back(v);
            if (n.kind == NodeKind::While) {
                prefix_[&n] = true;
            } else if (n.kind == NodeKind::For) {
                prefix_[&n] = iterations_depend(n, regs);
            }
            if (prefix_[&n]) plan_checkpoints(n, regs);
            defined.merge(inner);
        }
        return defined;
    }

    // Whether a value that some adjoint rule (or control decision) in loop `n` reads depends on
    // a register the loop body assigns and that lives across iterations.
    bool iterations_depend(const ir::Node& n, const std::vector<ValueId>& regs) {
        std::set<ValueId> carried;
        ir::for_each_node(n.blocks[0], [&](const ir::Node& m) {
            if (m.kind == NodeKind::Assign) carried.insert(m.args[0]);
        });
        std::set<ValueId> tainted;
        for (ValueId r : regs)
            if (carried.count(r)) tainted.insert(r);
        for (int pass = 0; pass < 2; ++pass)  // a nested loop can carry a taint back to its start
            ir::for_each_node(n.blocks[0], [&](const ir::Node& m) {
                for (size_t a = 0; a < m.args.size(); ++a) {
                    if (!tainted.count(m.args[a])) continue;
                    if (m.kind == NodeKind::Assign && a == 1) tainted.insert(m.args[0]);
                    if (m.result != kNone) tainted.insert(m.result);
                }
            });
        bool depends = false;
        ir::for_each_node(n.blocks[0], [&](const ir::Node& m) {
            for (size_t a = 0; a < m.args.size(); ++a)
                if (tainted.count(m.args[a]) && (needs_primal(src_, m, a) || m.kind == NodeKind::While))
                    depends = true;
        });
        return depends;
    }

    // The registers loop `n` carries from one iteration to the next (those of `regs`, the
    // registers it touches, that it assigns), placed in the checkpoint scratch: float registers
    // kept as float64 and the others as int64, both exact. A loop that carries an array (a view
    // assigned in the loop) keeps the quadratic replay.
    void plan_checkpoints(const ir::Node& n, const std::vector<ValueId>& regs) {
        std::set<ValueId> assigned;
        for (const ir::Block& b : n.blocks)
            ir::for_each_node(b, [&](const ir::Node& m) {
                if (m.kind == NodeKind::Assign) assigned.insert(m.args[0]);
            });
        Carried c;
        for (ValueId r : regs) {
            if (!assigned.count(r)) continue;
            const ir::Type& t = src_.type_of(r);
            if (!t.is_scalar()) return;
            (t.is_float() ? c.floats : c.ints).push_back(r);
        }
        if (c.floats.empty() && c.ints.empty()) return;
        c.float_at = checkpoint_floats_;
        c.int_at = checkpoint_ints_;
        checkpoint_floats_ += static_cast<int>(c.floats.size());
        checkpoint_ints_ += static_cast<int>(c.ints.size());
        carried_.emplace(&n, std::move(c));
    }

    // ---- the replay: forward code without side effects

    void snapshot(const ir::Node& n, Env& env, Emitter& e) {
        for (ValueId r : touched_[&n]) e.assign(snap(n, r), env.map[r]);
    }
    ValueId snap(const ir::Node& n, ValueId r) {
        auto [it, inserted] = snaps_.try_emplace({&n, r}, kNone);
        if (inserted) it->second = declare(src_.type_of(r));
        return it->second;
    }
    // A loop's trip count, 64-bit: a loop of Int32 bounds runs up to 2^32 - 1 times, a while_ any
    // number of times (a 32-bit count wrapped past 2^31 - 1, and the reverse sweep ran no
    // iteration).
    ValueId count(const ir::Node& n) {
        auto [it, inserted] = counts_.try_emplace(&n, kNone);
        if (inserted) it->second = declare(ir::Type::scalar(DType::Int64));
        return it->second;
    }
    // `env` for replaying region `n` again: its registers start from the snapshot.
    Env region_env(const ir::Node& n, const Env& env, Emitter& e) {
        Env inner = env;
        for (ValueId r : touched_[&n]) inner.map[r] = e.copy(snap(n, r), true);
        return inner;
    }

    void counted_body(const ir::Node& n, Emitter& e) {
        const ValueId c = count(n);
        e.assign(c, e.binary(ir::BinaryOp::Add, c, e.integer(DType::Int64, 1)));
    }

    void replay(const ir::Block& b, Env& env, Emitter& e) {
        for (const ir::Node& n : b.nodes) {
            e.set_loc(n.loc);
            switch (n.kind) {
                case NodeKind::Param:
                case NodeKind::Store:
                case NodeKind::Atomic:
                case NodeKind::Call:  // a custom adjoint's marker (structured_copy.hpp)
                case NodeKind::Print: break;
                case NodeKind::If: {
                    snapshot(n, env, e);
                    ir::Node c{.kind = NodeKind::If,
                               .args = {env.map[n.args[0]]},
                               .blocks = std::vector<ir::Block>(2)};
                    for (int i = 0; i < 2; ++i) e.in_block(c.blocks[i], [&] { replay(n.blocks[i], env, e); });
                    e.node(std::move(c));
                    break;
                }
                case NodeKind::For: {
                    snapshot(n, env, e);
                    e.assign(count(n), e.integer(DType::Int64, 0));
                    e.for_(env.map[n.args[0]], env.map[n.args[1]], env.map[n.args[2]], [&](ValueId i) {
                        env.map[n.result] = i;
                        counted_body(n, e);
                        replay(n.blocks[0], env, e);
                    });
                    break;
                }
                case NodeKind::While: {
                    snapshot(n, env, e);
                    e.assign(count(n), e.integer(DType::Int64, 0));
                    ir::Node c{.kind = NodeKind::While, .blocks = std::vector<ir::Block>(2)};
                    e.in_block(c.blocks[0], [&] { replay(n.blocks[0], env, e); });
                    c.args = {env.map[n.args[0]]};
                    e.in_block(c.blocks[1], [&] {
                        counted_body(n, e);
                        replay(n.blocks[1], env, e);
                    });
                    e.node(std::move(c));
                    break;
                }
                default: {
                    ir::Node c = n;
                    for (ValueId& a : c.args) a = env.map[a];
                    if (n.result == kNone) {
                        e.node(std::move(c));
                        break;
                    }
                    env.map[n.result] =
                        e.node(std::move(c), src_.type_of(n.result), src_.values[n.result].assigned);
                    if (n.kind == NodeKind::View && env.grad[n.args[0]] != kNone)
                        env.grad[n.result] = e.node(
                            {.kind = NodeKind::View, .args = {env.grad[n.args[0]], env.map[n.args[1]]}},
                            src_.type_of(n.result));
                }
            }
        }
    }

    // ---- the reverse sweep

    bool wants(ValueId v) const {
        if (!src_.type_of(v).is_float()) return false;
        const ir::Node* def = facts_.definition(v);
        if (def && def->kind == NodeKind::Param) return false;  // scalar parameters get no gradient
        return facts_.constant(v) == nullptr;
    }
    ValueId adjoint(ValueId v) {
        auto [it, inserted] = adjoints_.try_emplace(v, kNone);
        if (inserted) it->second = declare(src_.type_of(v));
        return it->second;
    }
    void add(ValueId v, ValueId contribution, Emitter& e) {
        const ValueId a = adjoint(v);
        e.assign(a, e.binary(ir::BinaryOp::Add, a, contribution));
    }
    // The adjoint of `v` here, cleared for the instance before (kNone when nothing reached it).
    ValueId take(ValueId v, Emitter& e) {
        const auto it = adjoints_.find(v);
        if (it == adjoints_.end()) return kNone;
        const ValueId g = e.copy(it->second);
        e.assign(it->second, e.zero(src_.type_of(v).dtype));
        return g;
    }
    // The gradient flag of the parameter whose memory array `v` is.
    ValueId has(ValueId array) const { return has_.at(facts_.root(array)); }
    std::vector<ValueId> index(const ir::Node& n, size_t from, size_t to, const Env& env) const {
        std::vector<ValueId> i;
        for (size_t a = from; a < to; ++a) i.push_back(env.map[n.args[a]]);
        return i;
    }

    // adj[value] += sign * grad[i] for a store or atomic add/sub of `value` at grad's element i.
    void read_gradient(const ir::Node& n, const Env& env, Emitter& e, bool negate) {
        const ValueId array = n.args[0];
        const ValueId value = n.args.back();
        if (env.grad[array] == kNone || !wants(value)) return;
        const ValueId read = e.copy(e.zero(src_.type_of(value).dtype), true);
        e.if_(has(array), [&] {
            e.assign(read, e.load(env.grad[array], index(n, 1, n.args.size() - 1, env), n.component()));
        });
        add(value, negate ? e.unary(ir::UnaryOp::Neg, read) : read, e);
    }

    // A call of the custom adjoint that marker `n` names: with the call's arguments, the adjoint
    // of its result, and the gradients of its float array arguments; reads and accumulations of
    // a gradient the launch does not have are skipped.
    void custom_adjoint(const ir::Node& n, const Env& env, Emitter& e) {
        const bool returns = n.text == "result";
        const size_t count = n.args.size() - (returns ? 1 : 0);
        std::vector<ValueId> args;
        for (size_t a = 0; a < count; ++a) args.push_back(env.map[n.args[a]]);
        if (returns) {
            const ValueId result = n.args.back();
            const ValueId g = take(result, e);
            args.push_back(g != kNone ? g : e.zero(src_.type_of(result).dtype));
        }
        std::map<ValueId, ValueId> flags;  // gradient array -> whether the launch has it
        for (size_t a = 0; a < count; ++a) {
            const ValueId v = n.args[a];
            if (!src_.type_of(v).is_array() || !is_float(src_.type_of(v).dtype)) continue;
            args.push_back(env.grad[v]);
            flags[env.grad[v]] = has(v);
        }
        std::vector<ir::Node> body;
        inline_function(program_, static_cast<uint32_t>(n.bits), args, g_, body, decls_);
        guard_gradients(body, flags);
        for (ir::Node& m : body) e.out()->push_back(std::move(m));
    }

    // Accumulations into and loads of the gradients in `flags` (through views) run only when
    // the launch has that gradient; a skipped load reads zero.
    void guard_gradients(std::vector<ir::Node>& nodes, std::map<ValueId, ValueId>& flags) {
        std::vector<ir::Node> out;
        for (ir::Node& n : nodes) {
            for (ir::Block& b : n.blocks) guard_gradients(b.nodes, flags);
            const auto it = n.args.empty() ? flags.end() : flags.find(n.args[0]);
            if (it == flags.end() ||
                (n.kind != NodeKind::View && n.kind != NodeKind::Atomic && n.kind != NodeKind::Load)) {
                out.push_back(std::move(n));
                continue;
            }
            const ValueId flag = it->second;
            Emitter here(g_, &out, n.loc);
            if (n.kind == NodeKind::View) {
                flags[n.result] = flag;
                out.push_back(std::move(n));
            } else if (n.kind == NodeKind::Atomic) {
                ir::Node atomic = std::move(n);
                here.if_(flag, [&] { here.out()->push_back(std::move(atomic)); });
            } else {
                const ValueId r = n.result;
                g_.values[r].assigned = true;
                out.push_back({.kind = NodeKind::Const, .result = r, .loc = n.loc});
                ir::Node load = std::move(n);
                load.result = here.value(g_.type_of(r));
                const ValueId t = load.result;
                here.if_(flag, [&] {
                    here.out()->push_back(std::move(load));
                    here.assign(r, t);
                });
            }
        }
        nodes = std::move(out);
    }

    // Iteration j of loop `n` replayed from the registers `inner` holds (and, `sweep`, swept).
    void iteration(const ir::Node& n, const Env& env, const Env& inner, ValueId j, bool sweep, Emitter& e) {
        const bool is_for = n.kind == NodeKind::For;
        const ir::Block& body = n.blocks[is_for ? 0 : 1];
        Env it = inner;
        if (is_for) {
            // Iteration j's index, start + j * step, in 64 bits (exact: it is an index the
            // forward loop reached), then in the loop's own type.
            const auto wide = [&](ValueId v) { return e.cast(DType::Int64, v); };
            const ValueId step = e.binary(ir::BinaryOp::Mul, j, wide(env.map[n.args[2]]));
            const ValueId index = e.binary(ir::BinaryOp::Add, wide(env.map[n.args[0]]), step);
            it.map[n.result] = e.cast(src_.type_of(n.result).dtype, index);
        } else {
            replay(n.blocks[0], it, e);
        }
        replay(body, it, e);
        if (!sweep) return;
        reverse(body, it, e);
        if (!is_for) reverse(n.blocks[0], it, e);  // the condition's values reach the body
    }

    void loop(const ir::Node& n, Env& env, Emitter& e) {
        if (carried_.count(&n)) return checkpointed_loop(n, env, e);
        const ValueId last = e.binary(ir::BinaryOp::Sub, e.copy(count(n)), e.integer(DType::Int64, 1));
        e.for_(last, e.integer(DType::Int64, -1), e.integer(DType::Int64, -1), [&](ValueId k) {
            const Env inner = region_env(n, env, e);
            if (prefix_[&n])
                e.for_(e.integer(DType::Int64, 0), k, e.integer(DType::Int64, 1),
                       [&](ValueId j) { iteration(n, env, inner, j, false, e); });
            iteration(n, env, inner, k, true, e);
        });
    }

    // A loop whose iterations depend on each other, swept from checkpoints of the registers it
    // carries (docs/design/0031) instead of replaying every iteration before each one swept. With
    // C checkpoints per level (the launch's `checkpoints` parameter) and n iterations: the loop
    // is replayed once keeping a checkpoint every s = ceil(n / C) iterations; then, stride by
    // stride from the last, the stride is replayed from its checkpoint keeping one every
    // s2 = ceil(s / C), and each iteration is swept after replaying at most s2 - 1 from the
    // nearest. About 3n replays while n <= C^2, and n (s2 + 5) / 2 beyond; the registers replay
    // exactly as before, so the gradients are the quadratic sweep's bits.
    void checkpointed_loop(const ir::Node& n, Env& env, Emitter& e) {
        using B = ir::BinaryOp;
        const auto op = [&](B o, ValueId a, ValueId b) { return e.binary(o, a, b); };
        const ValueId zero = e.integer(DType::Int64, 0), one = e.integer(DType::Int64, 1);
        const ValueId minus_one = e.integer(DType::Int64, -1);
        const ValueId per_level = checkpoints_;
        const auto ceil_div = [&](ValueId a, ValueId b) {
            return op(B::Div, op(B::Add, a, op(B::Sub, b, one)), b);
        };
        const ValueId total = e.copy(count(n));
        const ValueId stride = op(B::Max, ceil_div(total, per_level), one);
        const Env inner = region_env(n, env, e);
        e.for_(zero, total, one, [&](ValueId j) {
            e.if_(op(B::Eq, op(B::Mod, j, stride), zero),
                  [&] { checkpoint(n, zero, op(B::Div, j, stride), inner, false, e); });
            iteration(n, env, inner, j, false, e);
        });
        e.for_(op(B::Sub, ceil_div(total, stride), one), minus_one, minus_one, [&](ValueId b) {
            const ValueId lo = op(B::Mul, b, stride);
            const ValueId hi = op(B::Min, total, op(B::Add, lo, stride));
            const ValueId fine = op(B::Max, ceil_div(op(B::Sub, hi, lo), per_level), one);
            checkpoint(n, zero, b, inner, true, e);
            e.for_(lo, hi, one, [&](ValueId j) {
                const ValueId d = op(B::Sub, j, lo);
                e.if_(op(B::Eq, op(B::Mod, d, fine), zero),
                      [&] { checkpoint(n, one, op(B::Div, d, fine), inner, false, e); });
                iteration(n, env, inner, j, false, e);
            });
            e.for_(op(B::Sub, hi, one), op(B::Sub, lo, one), minus_one, [&](ValueId k) {
                const ValueId f = op(B::Div, op(B::Sub, k, lo), fine);
                checkpoint(n, one, f, inner, true, e);
                e.for_(op(B::Add, lo, op(B::Mul, f, fine)), k, one,
                       [&](ValueId j) { iteration(n, env, inner, j, false, e); });
                iteration(n, env, inner, k, true, e);
            });
        });
    }

    // Stores the registers loop `n` carries (as `inner` maps them) as checkpoint `slot` of
    // `level` (0: of the whole loop, 1: within a stride), or with `restore` loads them back.
    // Register r of a checkpoint is row C (2 at + level R) + slot R + r of its scratch array,
    // `at` being the loop's first register there and R its count; the column is the thread.
    void checkpoint(const ir::Node& n, ValueId level, ValueId slot, const Env& inner, bool restore,
                    Emitter& e) {
        const Carried& c = carried_.at(&n);
        for (const bool floats : {true, false}) {
            const std::vector<ValueId>& regs = floats ? c.floats : c.ints;
            if (regs.empty()) continue;
            const auto i64 = [&](int64_t v) { return e.integer(DType::Int64, v); };
            using B = ir::BinaryOp;
            const ValueId registers = i64(static_cast<int64_t>(regs.size()));
            const ValueId at = i64(2 * static_cast<int64_t>(floats ? c.float_at : c.int_at));
            const ValueId first = e.binary(
                B::Add,
                e.binary(B::Mul, checkpoints_, e.binary(B::Add, at, e.binary(B::Mul, level, registers))),
                e.binary(B::Mul, slot, registers));
            const ValueId scratch = floats ? scratch_floats_ : scratch_ints_;
            for (size_t r = 0; r < regs.size(); ++r) {
                const ValueId row = e.binary(B::Add, first, i64(static_cast<int64_t>(r)));
                const ValueId reg = inner.map[regs[r]];
                if (restore)
                    e.assign(reg, e.cast(src_.type_of(regs[r]).dtype, e.load(scratch, {row, thread_}, 0)));
                else
                    e.node({.kind = NodeKind::Store,
                            .args = {scratch, row, thread_,
                                     e.cast(floats ? DType::Float64 : DType::Int64, reg)}});
            }
        }
    }
    void reverse(const ir::Block& b, Env& env, Emitter& e) {
        for (size_t i = b.nodes.size(); i-- > 0;) {
            const ir::Node& n = b.nodes[i];
            e.set_loc(n.loc);
            switch (n.kind) {
                case NodeKind::If: {
                    if (n.sub == kReplayOnly) break;  // a function with a custom adjoint
                    auto branch = [&](int which) {
                        return [&, which] {
                            Env inner = region_env(n, env, e);
                            replay(n.blocks[which], inner, e);
                            reverse(n.blocks[which], inner, e);
                        };
                    };
                    e.if_(env.map[n.args[0]], branch(0), branch(1));
                    break;
                }
                case NodeKind::For:
                case NodeKind::While: loop(n, env, e); break;
                case NodeKind::Load: {
                    const ValueId g = take(n.result, e);
                    if (g == kNone || env.grad[n.args[0]] == kNone) break;
                    e.if_(has(n.args[0]), [&] {
                        e.atomic_add(env.grad[n.args[0]], index(n, 1, n.args.size(), env), n.component(), g);
                    });
                    break;
                }
                case NodeKind::Store: read_gradient(n, env, e, false); break;
                case NodeKind::Call: custom_adjoint(n, env, e); break;
                case NodeKind::Atomic:
                    if (n.atomic_op() == ir::AtomicOp::Add || n.atomic_op() == ir::AtomicOp::Sub)
                        read_gradient(n, env, e, n.atomic_op() == ir::AtomicOp::Sub);
                    break;
                case NodeKind::Assign: {
                    const ValueId g = take(n.args[0], e);
                    if (g != kNone && wants(n.args[1])) add(n.args[1], g, e);
                    break;
                }
                case NodeKind::Copy:
                case NodeKind::Unary:
                case NodeKind::Binary:
                case NodeKind::Math:
                case NodeKind::Select:
                case NodeKind::Cast: {
                    const ValueId g = take(n.result, e);
                    if (g == kNone) break;
                    RuleContext c{e, [&](ValueId v) { return env.map[v]; },
                                  [&](ValueId v, ValueId contribution) { add(v, contribution, e); },
                                  [&](ValueId v) { return wants(v); }};
                    scalar_adjoint(src_, n, g, c);
                    break;
                }
                default:
                    if (n.result != kNone) take(n.result, e);  // a float register's first value
            }
        }
    }

    const ir::Program& program_;
    const ir::Function& src_;
    ir::Function& g_;
    const ir::Facts facts_;
    std::vector<ir::Node> prologue_;  // the parameters
    std::vector<ir::Node> decls_;     // the registers the adjoint adds
    std::map<ValueId, ValueId> has_;  // array parameter -> its gradient flag
    std::map<ValueId, ValueId> adjoints_;
    std::map<std::pair<const ir::Node*, ValueId>, ValueId> snaps_;
    std::map<const ir::Node*, ValueId> counts_;
    std::map<const ir::Node*, std::vector<ValueId>> touched_;
    std::map<const ir::Node*, bool> prefix_;
    // Checkpoints of loops whose iterations depend on each other: per loop, the registers it
    // carries and where the first of each kind goes among all loops' (plan_checkpoints).
    struct Carried {
        std::vector<ValueId> floats, ints;
        int float_at = 0, int_at = 0;
    };
    std::map<const ir::Node*, Carried> carried_;
    int checkpoint_floats_ = 0, checkpoint_ints_ = 0;
    // The adjoint's last parameters when some loop keeps checkpoints (AdjointKernel), and the
    // thread's linear index, the scratch arrays' column.
    ValueId scratch_floats_ = kNone, scratch_ints_ = kNone, checkpoints_ = kNone, thread_ = kNone;
};

}  // namespace

AdjointKernel adjoint_kernel(const ir::Program& program, uint32_t k, const std::vector<bool>& writes,
                             const std::string& name) {
    const ir::Function copy = structured_copy(program, k, writes);
    AdjointKernel out;
    out.function.name = name;
    out.function.is_kernel = true;
    out.function.ret = copy.ret;
    out.function.tid_ndim = copy.tid_ndim;
    out.function.loc = copy.loc;
    Generator gen(program, copy, out.function);
    out.differentiable = gen.run();
    out.function.param_names = copy.param_names;
    for (uint32_t p : out.differentiable) {
        out.function.param_names.push_back("adj_" + copy.param_names[p]);
        out.function.param_names.push_back("has_adj_" + copy.param_names[p]);
    }
    out.checkpoint_floats = gen.checkpoint_floats();
    out.checkpoint_ints = gen.checkpoint_ints();
    if (out.keeps_checkpoints())
        for (const char* name : {"checkpoint_floats", "checkpoint_ints", "checkpoints"})
            out.function.param_names.push_back(name);
    return out;
}

}  // namespace weft::autodiff
