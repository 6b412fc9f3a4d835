// The slot-allocation lowering: checks, the verdicts of the dependence analysis
// (analysis/reservation_dependence: scratch reads and consumed atomics are rejected,
// slot-dependent reservations marked), Reserve nodes, the counting-pass clones and the
// one-counter-element decision.
#include "transforms/lower_slot_allocation.hpp"

#include <map>
#include <set>

#include "analysis/atomic_targets.hpp"
#include "analysis/record_bounds.hpp"
#include "analysis/reservation_dependence.hpp"
#include "ir/facts.hpp"
#include "ir/rewriter.hpp"
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

// Rejects a reservation that depends on scratch; reported at the load or atomic, since that is
// what has to change.
[[noreturn]] void reject_dependence(const ir::Function& kernel, const analysis::ReservationDependence& d) {
    const ir::Node& source = *d.source;
    const std::string array = param_name(kernel, d.source_param);
    const std::string line = std::to_string(d.reservation->loc.line);
    if (source.kind == ir::NodeKind::Atomic)
        reject(kernel, source,
               "the result of atomic_" + std::string(detail::op_name(source.atomic_op())) + " on '" + array +
                   "' decides the slot reservation at line " + line +
                   "; slot allocation runs the kernel once to count without performing its writes, and "
                   "there this atomic only reads '" +
                   array +
                   "', so it would reserve differently. Decide the reservation from local variables or "
                   "arrays the kernel only reads, or run this atomic in an earlier launch (the spec's "
                   "'Side effects in the counting pass')");
    reject(kernel, source,
           "this load of '" + array +
               "', an array the kernel also writes, decides the slot reservation at line " + line +
               "; slot allocation runs the kernel once to count without performing its writes, so it would "
               "reserve differently. Base the decision on local variables or arrays the kernel only reads "
               "(the spec's 'Side effects in the counting pass')");
}

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
    const analysis::ReservationDependence scratch =
        analysis::reservation_dependence(program, k, written, analysis::DependenceSource::Scratch);
    if (scratch.reservation) reject_dependence(kernel, scratch);
    slots.may_diverge =
        analysis::reservation_dependence(program, k, written, analysis::DependenceSource::Slots)
            .reservation != nullptr;
    return slots;
}

void to_reserve(ir::Function& fn) {
    const ir::Facts facts(fn);
    ir::rewrite_nodes(fn, [&](ir::Node&& n, std::vector<ir::Node>& out) {
        if (analysis::is_reservation(fn, n, facts)) n.kind = ir::NodeKind::Reserve;
        out.push_back(std::move(n));
    });
}

// Removes what the counting pass must not do. A suppressed atomic whose result is used reads
// the element instead.
void suppress_side_effects(ir::Function& fn) {
    const ir::Facts facts(fn);
    ir::rewrite_nodes(fn, [&](ir::Node&& n, std::vector<ir::Node>& out) {
        using K = ir::NodeKind;
        if (n.kind == K::Store || n.kind == K::Accumulate || n.kind == K::Print ||
            (n.kind == K::Atomic && !facts.used(n.result)))
            return;
        if (n.kind == K::Atomic) {
            const size_t operands = n.atomic_op() == ir::AtomicOp::Cas ? 2 : 1;
            n.kind = K::Load;
            n.args.resize(n.args.size() - operands);
        }
        out.push_back(std::move(n));
    });
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
        suppress_side_effects(*copy);
        ir::Function& fn = *copy;
        program_.functions.push_back(std::move(copy));
        // Calls in the clone call the clones of their callees.
        ir::rewrite_nodes(fn, [&](ir::Node&& n, std::vector<ir::Node>& out) {
            if (n.kind == ir::NodeKind::Call) n.bits = clone(static_cast<uint32_t>(n.bits));
            out.push_back(std::move(n));
        });
        return index;
    }

private:
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
        const ir::Facts facts(fn);
        std::vector<Path> path(fn.values.size());
        for (size_t i = 0; i < fn.params.size(); ++i) path[fn.params[i]] = param_paths[i];
        auto value = [&](ir::ValueId v, int64_t& out) {
            const std::optional<int64_t> c = facts.integer(v);
            if (c) out = *c;
            return c.has_value();
        };
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
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
    for (auto& fn : program.functions) to_reserve(*fn);
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
