// Reservation dependence: taint followed through values, calls and surrounding conditions.
#include "analysis/reservation_dependence.hpp"

namespace weft::analysis {

bool is_reservation(const ir::Function& fn, const ir::Node& n, const ir::Facts& facts) {
    return n.kind == ir::NodeKind::Atomic && n.atomic_op() == ir::AtomicOp::Add &&
           fn.type_of(n.args[0]).dtype == DType::Int32 && fn.type_of(n.args[0]).components == 1 &&
           n.result != ir::kNoValue && facts.used(n.result);
}

namespace {

class Dependence {
public:
    Dependence(const ir::Program& p, const std::set<int>& written, DependenceSource source)
        : program_(p), written_(written), source_(source) {}

    // Returns the node that taints the function's result (null if none), and records the first
    // tainted reservation. `roots[i]` is the kernel parameter behind parameter i (-1: none),
    // `params[i]` the node tainting it; `control` is the node a surrounding condition depends on.
    const ir::Node* check(uint32_t f, const std::vector<int>& roots,
                          const std::vector<const ir::Node*>& params, const ir::Node* control) {
        const ir::Function& fn = *program_.functions[f];
        const ir::Facts& facts = facts_of(f);
        std::vector<int> root(fn.values.size(), -1);
        std::vector<const ir::Node*> taint(fn.values.size(), nullptr);
        for (size_t i = 0; i < fn.params.size(); ++i) taint[fn.params[i]] = params[i];
        for (ir::ValueId v = 0; v < fn.values.size(); ++v)
            if (facts.param_of(v) >= 0) root[v] = roots[facts.param_of(v)];
        // Propagate to a fixpoint: assignments inside loops can carry taint backwards.
        for (bool changed = true; changed;) {
            changed = false;
            ir::for_each_node(fn.body, [&](const ir::Node& n) {
                const ir::Node* source = nullptr;
                if (is_source(fn, n, root, facts)) {
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
        block(fn, fn.body, root, taint, facts, control);
        const ir::Node* result = nullptr;
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::Return && !n.args.empty() && taint[n.args[0]] && !result)
                result = taint[n.args[0]];
        });
        return result;
    }

    const ReservationDependence& found() const { return found_; }

private:
    // Each function's facts, built once however many calls reach it.
    const ir::Facts& facts_of(uint32_t f) {
        auto& slot = facts_[f];
        if (!slot) slot = std::make_unique<ir::Facts>(*program_.functions[f]);
        return *slot;
    }

    bool is_source(const ir::Function& fn, const ir::Node& n, const std::vector<int>& root,
                   const ir::Facts& facts) const {
        if (source_ == DependenceSource::Slots) return is_reservation(fn, n, facts);
        if (n.kind == ir::NodeKind::Load) return written_.count(root[n.args[0]]) > 0;
        return n.kind == ir::NodeKind::Atomic && n.result != ir::kNoValue && facts.used(n.result) &&
               !is_reservation(fn, n, facts);
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
               const std::vector<const ir::Node*>& taint, const ir::Facts& facts, const ir::Node* control) {
        for (const ir::Node& n : b.nodes) {
            if (is_reservation(fn, n, facts)) {
                const ir::Node* source = control;
                for (size_t i = 1; i < n.args.size() && !source; ++i) source = taint[n.args[i]];
                if (source && !found_.reservation) {
                    const auto it = array_of_.find(source);
                    found_ = {&n, source, it == array_of_.end() ? -1 : it->second};
                }
            }
            const ir::Node* inner = control;
            if (!inner &&
                (n.kind == ir::NodeKind::If || n.kind == ir::NodeKind::For || n.kind == ir::NodeKind::While))
                for (ir::ValueId a : n.args)
                    if (!inner && taint[a]) inner = taint[a];
            if (n.kind == ir::NodeKind::Call) call(fn, n, root, taint, inner);
            for (const ir::Block& child : n.blocks) block(fn, child, root, taint, facts, inner);
        }
    }

    const ir::Program& program_;
    const std::set<int>& written_;
    DependenceSource source_;
    ReservationDependence found_;
    std::map<const ir::Node*, int> array_of_;  // tainting loads and atomics, and the parameter they access
    std::map<uint32_t, std::unique_ptr<ir::Facts>> facts_;
};

}  // namespace

ReservationDependence reservation_dependence(const ir::Program& program, uint32_t kernel,
                                             const std::set<int>& written, DependenceSource source) {
    const ir::Function& fn = *program.functions[kernel];
    std::vector<int> roots;
    std::vector<const ir::Node*> params(fn.params.size(), nullptr);
    for (size_t i = 0; i < fn.params.size(); ++i)
        roots.push_back(fn.type_of(fn.params[i]).is_array() ? static_cast<int>(i) : -1);
    Dependence dependence(program, written, source);
    dependence.check(kernel, roots, params, nullptr);
    return dependence.found();
}

}  // namespace weft::analysis
