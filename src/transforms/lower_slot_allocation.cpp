// The slot-allocation lowering: checks, the scratch-dependence analysis, Reserve nodes and the
// counting-pass clones.
#include "transforms/lower_slot_allocation.hpp"

#include <algorithm>
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

// Values that depend on loads of arrays the kernel writes ("scratch"), and reservations whose
// count, index or execution depends on them: the counting pass, which performs no writes, would
// reserve differently from the execution pass.
class ScratchDependence {
public:
    ScratchDependence(const ir::Program& p, const ir::Function& kernel, std::set<int> written)
        : program_(p), kernel_(kernel), written_(std::move(written)) {}

    // Returns the load that taints the function's result (null if none); rejects tainted
    // reservations. `control` is the load a surrounding condition depends on.
    const ir::Node* check(uint32_t f, const std::vector<int>& roots,
                          const std::vector<const ir::Node*>& params, const ir::Node* control) {
        const ir::Function& fn = *program_.functions[f];
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
                if (n.kind == ir::NodeKind::Load && written_.count(root[n.args[0]])) {
                    source = &n;
                    loaded_[&n] = root[n.args[0]];
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
        block(fn, fn.body, root, taint, control);
        const ir::Node* result = nullptr;
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Return && !n.args.empty() && taint[n.args[0]] && !result)
                result = taint[n.args[0]];
        });
        return result;
    }

private:
    // Analyses the callee of call node `n` with its arguments' roots and taint; `control` is the
    // load the call's execution depends on.
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
               const std::vector<const ir::Node*>& taint, const ir::Node* control) {
        for (const ir::Node& n : b.nodes) {
            const bool reserves = n.kind == ir::NodeKind::Atomic && n.atomic_op() == ir::AtomicOp::Add &&
                                  fn.type_of(n.args[0]).dtype == DType::Int32 && n.result != ir::kNoValue;
            if (reserves) {
                const ir::Node* source = control;
                for (size_t i = 1; i < n.args.size() && !source; ++i) source = taint[n.args[i]];
                if (source) reject_dependence(n, *source);
            }
            const ir::Node* inner = control;
            if (!inner &&
                (n.kind == ir::NodeKind::If || n.kind == ir::NodeKind::For || n.kind == ir::NodeKind::While))
                for (ir::ValueId a : n.args)
                    if (!inner && taint[a]) inner = taint[a];
            if (n.kind == ir::NodeKind::Call) call(fn, n, root, taint, inner);
            for (const ir::Block& child : n.blocks) block(fn, child, root, taint, inner);
        }
    }

    // Reported at the load: that read is what has to change.
    [[noreturn]] void reject_dependence(const ir::Node& reserve, const ir::Node& load) {
        const auto it = loaded_.find(&load);
        const std::string array = param_name(kernel_, it == loaded_.end() ? -1 : it->second);
        reject(
            kernel_, load,
            "this load of '" + array +
                "', an array the kernel also writes, decides the slot reservation at line " +
                std::to_string(reserve.loc.line) +
                "; slot allocation runs the kernel once to count without performing its writes, so it would "
                "reserve differently. Base the decision on local variables or arrays the kernel only reads "
                "(the spec's 'Side effects in the counting pass')");
    }

    const ir::Program& program_;
    const ir::Function& kernel_;
    std::set<int> written_;
    std::map<const ir::Node*, int> loaded_;  // tainting loads and the kernel parameter they read
};

// Checks kernel k; returns its counter parameters.
std::vector<ir::SlotTarget> plan_kernel(const ir::Program& program, uint32_t k) {
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
    std::vector<ir::SlotTarget> targets;
    if (counters.empty()) return targets;
    for (const auto& [param, site] : counters) targets.push_back({static_cast<uint32_t>(param)});
    std::vector<int> roots;
    std::vector<const ir::Node*> params(kernel.params.size(), nullptr);
    for (size_t i = 0; i < kernel.params.size(); ++i)
        roots.push_back(kernel.type_of(kernel.params[i]).is_array() ? static_cast<int>(i) : -1);
    ScratchDependence(program, kernel, written).check(k, roots, params, nullptr);
    return targets;
}

void to_reserve(ir::Block& block, const std::vector<int>& uses, const ir::Function& fn) {
    for (ir::Node& n : block.nodes) {
        for (ir::Block& child : n.blocks) to_reserve(child, uses, fn);
        if (n.kind == ir::NodeKind::Atomic && n.atomic_op() == ir::AtomicOp::Add &&
            fn.type_of(n.args[0]).dtype == DType::Int32 && uses[n.result] > 0)
            n.kind = ir::NodeKind::Reserve;
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
    explicit CountingPass(ir::Program& p) : program_(p) {}

    uint32_t clone(uint32_t f) {
        if (const auto it = clones_.find(f); it != clones_.end()) return it->second;
        auto copy = std::make_unique<ir::Function>(*program_.functions[f]);
        const auto index = static_cast<uint32_t>(program_.functions.size());
        clones_[f] = index;
        copy->name += "__count";
        copy->is_counting_pass = true;
        copy->det_targets.clear();
        copy->counting_pass = -1;
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
    std::map<uint32_t, uint32_t> clones_;
};

// Whether every reservation kernel f makes (in it or in functions it calls) indexes its counter
// with one compile-time constant; if so, `index` is that constant.
bool constant_index_everywhere(const ir::Program& program, uint32_t f, std::vector<int64_t>& index_out) {
    std::set<std::vector<uint64_t>> indices;
    bool constant = true;
    std::set<uint32_t> seen;
    std::vector<uint32_t> work{f};
    while (!work.empty()) {
        const ir::Function& fn = *program.functions[work.back()];
        work.pop_back();
        std::vector<const ir::Node*> value_of(fn.values.size(), nullptr);
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Const && !fn.values[n.result].assigned) value_of[n.result] = &n;
        });
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Call && seen.insert(static_cast<uint32_t>(n.bits)).second)
                work.push_back(static_cast<uint32_t>(n.bits));
            if (n.kind != ir::NodeKind::Reserve) return;
            std::vector<uint64_t> index;
            for (size_t i = 1; i + 1 < n.args.size(); ++i) {
                if (!value_of[n.args[i]])
                    constant = false;
                else
                    index.push_back(fn.type_of(n.args[i]).dtype == DType::Int32
                                        ? static_cast<uint64_t>(static_cast<int64_t>(
                                              static_cast<int32_t>(value_of[n.args[i]]->bits)))
                                        : value_of[n.args[i]]->bits);
            }
            indices.insert(index);
        });
    }
    if (!constant || indices.size() != 1) return false;
    for (uint64_t v : *indices.begin()) index_out.push_back(static_cast<int64_t>(v));
    // A negative index counts from the end of the counter's extent, known only at launch: the
    // general path (keys from the kernel's own, wrapped, pointers) handles it.
    return std::none_of(index_out.begin(), index_out.end(), [](int64_t i) { return i < 0; });
}

}  // namespace

ir::Program lower_slot_allocation(ir::Program program, Deterministic mode) {
    if (mode == Deterministic::NotGuaranteed) return program;
    const size_t user_functions = program.functions.size();
    std::vector<std::vector<ir::SlotTarget>> targets(user_functions);
    for (uint32_t f = 0; f < user_functions; ++f)
        if (program.functions[f]->is_kernel) targets[f] = plan_kernel(program, f);
    for (auto& fn : program.functions) {
        std::vector<int> uses(fn->values.size(), 0);
        ir::for_each_node(fn->body, [&](const ir::Node& n) {
            for (ir::ValueId a : n.args) ++uses[a];
        });
        to_reserve(fn->body, uses, *fn);
    }
    CountingPass counting(program);
    for (uint32_t f = 0; f < user_functions; ++f) {
        if (targets[f].empty()) continue;
        int64_t bound = 0;
        bool dynamic = false;
        for (const auto& [param, b] : analysis::record_bounds(program, f, ir::NodeKind::Reserve)) {
            bound += b.per_thread;
            dynamic = dynamic || b.dynamic;
        }
        std::vector<int64_t> index;
        const bool single = targets[f].size() == 1 && constant_index_everywhere(program, f, index);
        const uint32_t clone = counting.clone(f);
        for (uint32_t k : {f, clone}) {
            ir::Function& fn = *program.functions[k];
            fn.slot_targets = targets[f];
            fn.reservations_per_thread = bound;
            fn.reservations_dynamic = dynamic;
            fn.single_counter_element = single;
            fn.single_counter_index = index;
        }
        program.functions[f]->counting_pass = static_cast<int>(clone);
    }
    return program;
}

}  // namespace weft::transforms
