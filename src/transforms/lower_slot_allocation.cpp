// The slot-allocation lowering: checks, the dependence analyses (scratch reads and consumed
// atomics are rejected, slot-dependent reservations marked), Reserve nodes, the counting-pass
// clones and the one-counter-element decision.
#include "transforms/lower_slot_allocation.hpp"

#include <map>
#include <set>

#include "analysis/atomic_targets.hpp"
#include "analysis/record_bounds.hpp"
#include "weft/error.hpp"

namespace weft::transforms {

namespace {

bool consumed_integer(const analysis::AtomicSite& a) {
    const bool ordered = a.op == ir::AtomicOp::Add || a.op == ir::AtomicOp::Sub ||
                         a.op == ir::AtomicOp::Min || a.op == ir::AtomicOp::Max;
    return ordered && is_integer(a.dtype) && a.result_used;
}

bool reservation(const analysis::AtomicSite& a) {
    return consumed_integer(a) && a.op == ir::AtomicOp::Add && a.dtype == DType::Int32;
}

[[noreturn]] void reject(const ir::Function& kernel, const ir::Node& at, const std::string& message) {
    throw Error(message, kernel.name, at.loc.file, at.loc.line);
}

std::string param_name(const ir::Function& kernel, int param) {
    return param >= 0 ? kernel.param_names[param] : "an array";
}

// Whether atomic node `n` of `fn` is a slot reservation: a consumed int32 atomic_add.
bool reserves(const ir::Function& fn, const ir::Node& n, const std::vector<int>& uses) {
    return n.kind == ir::NodeKind::Atomic && n.atomic_op() == ir::AtomicOp::Add &&
           fn.type_of(n.args[0]).dtype == DType::Int32 && n.result != ir::kNoValue && uses[n.result] > 0;
}

std::vector<int> use_counts(const ir::Function& fn) {
    std::vector<int> uses(fn.values.size(), 0);
    ir::for_each_node(fn.body, [&](const ir::Node& n) {
        for (ir::ValueId a : n.args) ++uses[a];
    });
    return uses;
}

// Values that depend on something the counting pass sees differently from the execution pass,
// and reservations whose count, index or execution depends on them. What is followed:
// - Scratch: loads of arrays the kernel writes, and results of other consumed atomics (the
//   counting pass performs no writes, and turns such an atomic into a load of its array). A
//   reservation that depends on them is rejected.
// - Slots: the slots earlier reservations returned (the counting pass has only placeholders).
//   A reservation that depends on one may diverge; that is found at run time, and the launch
//   then has to be undone, so the kernel is only marked (`diverges()`).
class Dependence {
public:
    enum class Source { Scratch, Slots };

    Dependence(const ir::Program& p, const ir::Function& kernel, std::set<int> written, Source source)
        : program_(p), kernel_(kernel), written_(std::move(written)), source_(source) {}

    // Returns the node that taints the function's result (null if none); rejects (or marks)
    // tainted reservations. `control` is the node a surrounding condition depends on.
    const ir::Node* check(uint32_t f, const std::vector<int>& roots,
                          const std::vector<const ir::Node*>& params, const ir::Node* control) {
        const ir::Function& fn = *program_.functions[f];
        const std::vector<int> uses = use_counts(fn);
        std::vector<int> root(fn.values.size(), -1);
        std::vector<const ir::Node*> taint(fn.values.size(), nullptr);
        for (size_t i = 0; i < fn.params.size(); ++i) {
            root[fn.params[i]] = roots[i];
            taint[fn.params[i]] = params[i];
        }
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.result != ir::kNoValue && fn.type_of(n.result).is_array() && !n.args.empty())
                root[n.result] = root[n.args[0]];
        });
        // Propagate to a fixpoint: assignments inside loops can carry taint backwards.
        for (bool changed = true; changed;) {
            changed = false;
            ir::for_each_node(fn.body, [&](const ir::Node& n) {
                const ir::Node* source = nullptr;
                if (is_source(fn, n, root, uses)) {
                    source = &n;
                    array_of_[&n] = root[n.args[0]];
                }
                for (ir::ValueId a : n.args)
                    if (!source && taint[a]) source = taint[a];
                if (n.kind == ir::NodeKind::Call && !source) source = call(fn, n, root, taint, nullptr);
                const ir::ValueId target = n.kind == ir::NodeKind::Assign ? n.args[0] : n.result;
                const ir::Node* from = n.kind == ir::NodeKind::Assign ? taint[n.args[1]] : source;
                if (target != ir::kNoValue && from && !taint[target]) {
                    taint[target] = from;
                    changed = true;
                }
            });
        }
        block(fn, fn.body, root, taint, uses, control);
        const ir::Node* result = nullptr;
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Return && !n.args.empty() && taint[n.args[0]] && !result)
                result = taint[n.args[0]];
        });
        return result;
    }

    // Slots: whether some reservation depends on the slot of an earlier one.
    bool diverges() const { return diverges_; }

private:
    bool is_source(const ir::Function& fn, const ir::Node& n, const std::vector<int>& root,
                   const std::vector<int>& uses) const {
        if (source_ == Source::Slots) return reserves(fn, n, uses);
        if (n.kind == ir::NodeKind::Load) return written_.count(root[n.args[0]]) > 0;
        return n.kind == ir::NodeKind::Atomic && n.result != ir::kNoValue && uses[n.result] > 0 &&
               !reserves(fn, n, uses);
    }

    // Analyses the callee of call node `n` with its arguments' roots and taint; `control` is the
    // node the call's execution depends on.
    const ir::Node* call(const ir::Function& fn, const ir::Node& n, const std::vector<int>& root,
                         const std::vector<const ir::Node*>& taint, const ir::Node* control) {
        std::vector<int> roots;
        std::vector<const ir::Node*> params;
        for (ir::ValueId a : n.args) {
            roots.push_back(fn.type_of(a).is_array() ? root[a] : -1);
            params.push_back(taint[a]);
        }
        return check(static_cast<uint32_t>(n.bits), roots, params, control);
    }

    void block(const ir::Function& fn, const ir::Block& b, const std::vector<int>& root,
               const std::vector<const ir::Node*>& taint, const std::vector<int>& uses,
               const ir::Node* control) {
        for (const ir::Node& n : b.nodes) {
            if (reserves(fn, n, uses)) {
                const ir::Node* source = control;
                for (size_t i = 1; i < n.args.size() && !source; ++i) source = taint[n.args[i]];
                if (source && source_ == Source::Scratch) reject_dependence(n, *source);
                if (source) diverges_ = true;
            }
            const ir::Node* inner = control;
            if (!inner &&
                (n.kind == ir::NodeKind::If || n.kind == ir::NodeKind::For || n.kind == ir::NodeKind::While))
                for (ir::ValueId a : n.args)
                    if (!inner && taint[a]) inner = taint[a];
            if (n.kind == ir::NodeKind::Call) call(fn, n, root, taint, inner);
            for (const ir::Block& child : n.blocks) block(fn, child, root, taint, uses, inner);
        }
    }

    // Reported at the load or atomic: that is what has to change.
    [[noreturn]] void reject_dependence(const ir::Node& reserve, const ir::Node& source) {
        const auto it = array_of_.find(&source);
        const std::string array = param_name(kernel_, it == array_of_.end() ? -1 : it->second);
        const std::string line = std::to_string(reserve.loc.line);
        if (source.kind == ir::NodeKind::Atomic)
            reject(kernel_, source,
                   "the result of atomic_" + std::string(detail::op_name(source.atomic_op())) + " on '" +
                       array + "' decides the slot reservation at line " + line +
                       "; slot allocation runs the kernel once to count without performing its writes, and "
                       "there this atomic only reads '" +
                       array +
                       "', so it would reserve differently. Decide the reservation from local variables or "
                       "arrays the kernel only reads, or run this atomic in an earlier launch (the spec's "
                       "'Side effects in the counting pass')");
        reject(
            kernel_, source,
            "this load of '" + array +
                "', an array the kernel also writes, decides the slot reservation at line " + line +
                "; slot allocation runs the kernel once to count without performing its writes, so it would "
                "reserve differently. Base the decision on local variables or arrays the kernel only reads "
                "(the spec's 'Side effects in the counting pass')");
    }

    const ir::Program& program_;
    const ir::Function& kernel_;
    std::set<int> written_;
    Source source_;
    bool diverges_ = false;
    std::map<const ir::Node*, int> array_of_;  // tainting loads and atomics, and the parameter they access
};

struct KernelSlots {
    std::vector<plan::SlotTarget> counters;
    bool may_diverge = false;  // a reservation depends on an earlier one's slot
};

// Checks kernel k; returns its counter parameters.
KernelSlots plan_kernel(const ir::Program& program, uint32_t k) {
    const ir::Function& kernel = *program.functions[k];
    const analysis::KernelAtomics found = analysis::kernel_atomics(program, k);
    std::map<int, const analysis::AtomicSite*> counters;
    std::set<int> written;
    for (const analysis::AtomicSite& a : found.atomics) {
        const std::string op = std::string("atomic_") + detail::op_name(a.op);
        const std::string counter = param_name(kernel, a.kernel_param);
        if (consumed_integer(a) && a.op != ir::AtomicOp::Add)
            reject(kernel, *a.node,
                   "the result of " + op + " on '" + counter +
                       "' is used; in deterministic mode only atomic_add results are slots (prefix sums). "
                       "Use atomic_add with a negative count, or do not use the result");
        if (consumed_integer(a) && a.dtype != DType::Int32)
            reject(kernel, *a.node,
                   "slot allocation needs an int32 counter, but '" + counter + "' holds " +
                       dtype_name(a.dtype) + "; make the counter an Array<int32_t>");
        if (reservation(a)) counters.emplace(a.kernel_param, &a);
    }
    for (const analysis::AtomicSite& a : found.atomics) {
        const auto it = counters.find(a.kernel_param);
        if (!reservation(a)) written.insert(a.kernel_param);
        if (it == counters.end() || reservation(a)) continue;
        reject(kernel, *a.node,
               std::string("counter '") + param_name(kernel, a.kernel_param) + "' gets atomic_" +
                   detail::op_name(a.op) + " here besides the slot allocation at line " +
                   std::to_string(it->second->node->loc.line) +
                   "; a slot counter takes only consumed atomic_add. Use a separate array");
    }
    for (const analysis::ArrayAccess& access : found.accesses) {
        if (access.node->kind == ir::NodeKind::Store) written.insert(access.kernel_param);
        const auto it = counters.find(access.kernel_param);
        if (it == counters.end()) continue;
        reject(kernel, *access.node,
               std::string("counter '") + param_name(kernel, access.kernel_param) + "' is " +
                   (access.node->kind == ir::NodeKind::Store ? "stored to" : "loaded from") +
                   " here but also allocates slots (line " + std::to_string(it->second->node->loc.line) +
                   "); its final value is written after the kernel, so read it after the launch instead");
    }
    KernelSlots slots;
    if (counters.empty()) return slots;
    for (const auto& [param, site] : counters) slots.counters.push_back({{static_cast<uint32_t>(param)}});
    std::vector<int> roots;
    std::vector<const ir::Node*> params(kernel.params.size(), nullptr);
    for (size_t i = 0; i < kernel.params.size(); ++i)
        roots.push_back(kernel.type_of(kernel.params[i]).is_array() ? static_cast<int>(i) : -1);
    Dependence(program, kernel, written, Dependence::Source::Scratch).check(k, roots, params, nullptr);
    Dependence slot_dependence(program, kernel, written, Dependence::Source::Slots);
    slot_dependence.check(k, roots, params, nullptr);
    slots.may_diverge = slot_dependence.diverges();
    return slots;
}

void to_reserve(ir::Block& block, const std::vector<int>& uses, const ir::Function& fn) {
    for (ir::Node& n : block.nodes) {
        for (ir::Block& child : n.blocks) to_reserve(child, uses, fn);
        if (reserves(fn, n, uses)) n.kind = ir::NodeKind::Reserve;
    }
}

// Removes what the counting pass must not do. A suppressed atomic whose result is used reads
// the element instead.
void suppress_side_effects(ir::Block& block, const std::vector<int>& uses) {
    std::erase_if(block.nodes, [&](const ir::Node& n) {
        return n.kind == ir::NodeKind::Store || n.kind == ir::NodeKind::Accumulate ||
               n.kind == ir::NodeKind::Print || (n.kind == ir::NodeKind::Atomic && uses[n.result] == 0);
    });
    for (ir::Node& n : block.nodes) {
        for (ir::Block& child : n.blocks) suppress_side_effects(child, uses);
        if (n.kind != ir::NodeKind::Atomic) continue;
        const size_t operands = n.atomic_op() == ir::AtomicOp::Cas ? 2 : 1;
        n.kind = ir::NodeKind::Load;
        n.args.resize(n.args.size() - operands);
    }
}

class CountingPass {
public:
    CountingPass(ir::Program& p, plan::ProgramPlan& plan) : program_(p), plan_(plan) {}

    uint32_t clone(uint32_t f) {
        if (const auto it = clones_.find(f); it != clones_.end()) return it->second;
        auto copy = std::make_unique<ir::Function>(*program_.functions[f]);
        const auto index = static_cast<uint32_t>(program_.functions.size());
        clones_[f] = index;
        copy->name += kCountingPassSuffix;
        plan_.functions.push_back({plan_.functions[f].name, plan::Variant::Counting});
        std::vector<int> uses(copy->values.size(), 0);
        ir::for_each_node(copy->body, [&](const ir::Node& n) {
            for (ir::ValueId a : n.args) ++uses[a];
        });
        suppress_side_effects(copy->body, uses);
        ir::Function& fn = *copy;
        program_.functions.push_back(std::move(copy));
        retarget(fn.body);
        return index;
    }

private:
    void retarget(ir::Block& block) {
        for (ir::Node& n : block.nodes) {
            for (ir::Block& child : n.blocks) retarget(child);
            if (n.kind == ir::NodeKind::Call) n.bits = clone(static_cast<uint32_t>(n.bits));
        }
    }

    ir::Program& program_;
    plan::ProgramPlan& plan_;
    std::map<uint32_t, uint32_t> clones_;
};

// Whether every reservation kernel f makes (in it or in the functions it calls) on its one
// counter reaches the same element at compile-time constant indices; if so, `index` is that
// element's index in the counter parameter. A reservation through a view counts the view's
// indices too: in `atomic_add(counters[bin], 0, 1)` the element is (bin, 0), constant only if
// bin is.
class ConstantCounterIndex {
public:
    explicit ConstantCounterIndex(const ir::Program& p) : program_(p) {}

    bool find(uint32_t kernel, uint32_t counter, std::vector<int64_t>& index) {
        std::vector<Path> params(program_.functions[kernel]->params.size());
        params[counter] = Path{{}, true};
        visit(kernel, params);
        if (!constant_ || indices_.size() != 1) return false;
        index = *indices_.begin();
        return true;
    }

private:
    // The constant indices from the counter parameter to an array value; `known` is false for a
    // view at a run-time index (and for arrays that are not the counter).
    struct Path {
        std::vector<int64_t> index;
        bool known = false;
    };

    void visit(uint32_t f, const std::vector<Path>& param_paths) {
        const ir::Function& fn = *program_.functions[f];
        std::vector<const ir::Node*> constant(fn.values.size(), nullptr);
        std::vector<Path> path(fn.values.size());
        for (size_t i = 0; i < fn.params.size(); ++i) path[fn.params[i]] = param_paths[i];
        auto value = [&](ir::ValueId v, int64_t& out) {
            if (!constant[v]) return false;
            out = fn.type_of(v).dtype == DType::Int32
                      ? static_cast<int64_t>(static_cast<int32_t>(constant[v]->bits))
                      : static_cast<int64_t>(constant[v]->bits);
            return true;
        };
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Const && !fn.values[n.result].assigned) constant[n.result] = &n;
            if (n.result != ir::kNoValue && fn.type_of(n.result).is_array() && !n.args.empty()) {
                Path& to = path[n.result];
                to = path[n.args[0]];
                int64_t i = 0;
                const bool constant_view = n.kind == ir::NodeKind::View && value(n.args[1], i);
                if (constant_view) to.index.push_back(i);
                if (!constant_view && n.kind != ir::NodeKind::Copy) to.known = false;
            }
            if (n.kind == ir::NodeKind::Call) {
                std::vector<Path> args;
                for (ir::ValueId a : n.args) args.push_back(fn.type_of(a).is_array() ? path[a] : Path{});
                visit(static_cast<uint32_t>(n.bits), args);
            }
            if (n.kind != ir::NodeKind::Reserve) return;
            const Path& counter = path[n.args[0]];
            std::vector<int64_t> index = counter.index;
            for (size_t i = 1; i + 1 < n.args.size(); ++i) {
                int64_t v = 0;
                if (!value(n.args[i], v)) constant_ = false;
                index.push_back(v);
            }
            if (!counter.known) constant_ = false;
            indices_.insert(index);
        });
    }

    const ir::Program& program_;
    bool constant_ = true;
    std::set<std::vector<int64_t>> indices_;
};

}  // namespace

ir::Program lower_slot_allocation(ir::Program program, Deterministic mode, plan::ProgramPlan& plan) {
    if (mode == Deterministic::NotGuaranteed) return program;
    const size_t user_functions = program.functions.size();
    std::vector<KernelSlots> targets(user_functions);
    for (uint32_t f = 0; f < user_functions; ++f)
        if (program.functions[f]->is_kernel) targets[f] = plan_kernel(program, f);
    for (auto& fn : program.functions) to_reserve(fn->body, use_counts(*fn), *fn);
    CountingPass counting(program, plan);
    for (plan::KernelPlan& k : plan.kernels) {
        const uint32_t f = k.variants.forward;
        if (targets[f].counters.empty()) continue;
        plan::Slots& slots = k.slots;
        slots.counters = targets[f].counters;
        slots.reservations_may_diverge = targets[f].may_diverge;
        for (const auto& [param, b] : analysis::record_bounds(program, f, ir::NodeKind::Reserve)) {
            slots.reservations_per_thread += b.per_thread;
            slots.reservations_dynamic = slots.reservations_dynamic || b.dynamic;
        }
        slots.single_counter_element =
            slots.counters.size() == 1 &&
            ConstantCounterIndex(program).find(f, slots.counters[0].arg.param, slots.single_counter_index);
        k.variants.counting = static_cast<int>(counting.clone(f));
    }
    return program;
}

}  // namespace weft::transforms
