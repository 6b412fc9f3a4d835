// Record-count estimate: a walk over blocks and calls, multiplying constant loop trip counts.
#include "analysis/record_bounds.hpp"

#include <algorithm>
#include <vector>

#include "ir/facts.hpp"

namespace weft::analysis {

namespace {

using Counts = std::map<int, RecordBound>;

constexpr int64_t kSaturated = int64_t{1} << 40;

int64_t saturating_mul(int64_t a, int64_t b) {
    return (b != 0 && a > kSaturated / b) ? kSaturated : a * b;
}

void add_into(Counts& into, const Counts& from, int64_t times, bool dynamic) {
    for (const auto& [param, bound] : from) {
        RecordBound& b = into[param];
        b.per_thread = std::min(kSaturated, b.per_thread + saturating_mul(bound.per_thread, times));
        b.dynamic = b.dynamic || bound.dynamic || (dynamic && bound.per_thread > 0);
    }
}

class Estimator {
public:
    Estimator(const ir::Program& p, ir::NodeKind kind) : program_(p), kind_(kind) {}

    Counts function(uint32_t f, const std::vector<int>& roots) {
        const ir::Function& fn = *program_.functions[f];
        const ir::Facts facts(fn);
        Scope scope{fn, facts, roots};
        return block(scope, fn.body);
    }

private:
    struct Scope {
        const ir::Function& fn;
        const ir::Facts& facts;
        const std::vector<int>& roots;  // the kernel parameter behind each parameter (-1: none)

        // The kernel parameter whose memory array value `v` is, or -1.
        int root(ir::ValueId v) const { return facts.param_of(v) >= 0 ? roots[facts.param_of(v)] : -1; }
    };

    // The loop's trip count when its bounds are constants, else -1.
    static int64_t trips(const Scope& s, const ir::Node& loop) {
        int64_t v[3];
        for (int i = 0; i < 3; ++i) {
            const ir::Node* c = s.facts.constant(loop.args[i]);
            if (!c) return -1;
            v[i] = static_cast<int32_t>(c->bits);
        }
        if (v[2] == 0) return -1;
        const int64_t span = v[2] > 0 ? v[1] - v[0] : v[0] - v[1];
        const int64_t step = v[2] > 0 ? v[2] : -v[2];
        return span <= 0 ? 0 : (span + step - 1) / step;
    }

    Counts block(Scope& s, const ir::Block& b) {
        Counts total;
        for (const ir::Node& n : b.nodes) {
            if (n.kind == kind_) {
                add_into(total, {{s.root(n.args[0]), {1, false}}}, 1, false);
                continue;
            }
            switch (n.kind) {
                case ir::NodeKind::If: {
                    Counts then_counts = block(s, n.blocks[0]);
                    const Counts else_counts = block(s, n.blocks[1]);
                    for (const auto& [param, bound] : else_counts) {
                        RecordBound& t = then_counts[param];
                        t.per_thread = std::max(t.per_thread, bound.per_thread);
                        t.dynamic = t.dynamic || bound.dynamic;
                    }
                    add_into(total, then_counts, 1, false);
                    break;
                }
                case ir::NodeKind::For: {
                    const int64_t count = trips(s, n);
                    add_into(total, block(s, n.blocks[0]), count < 0 ? 1 : count, count < 0);
                    break;
                }
                case ir::NodeKind::While:
                    add_into(total, block(s, n.blocks[0]), 1, true);
                    add_into(total, block(s, n.blocks[1]), 1, true);
                    break;
                case ir::NodeKind::Call: {
                    std::vector<int> roots;
                    for (ir::ValueId a : n.args) roots.push_back(s.fn.type_of(a).is_array() ? s.root(a) : -1);
                    add_into(total, function(static_cast<uint32_t>(n.bits), roots), 1, false);
                    break;
                }
                default: break;
            }
        }
        return total;
    }

    const ir::Program& program_;
    ir::NodeKind kind_;
};

}  // namespace

std::map<int, RecordBound> record_bounds(const ir::Program& program, uint32_t kernel, ir::NodeKind kind) {
    const ir::Function& fn = *program.functions[kernel];
    std::vector<int> roots;
    for (size_t i = 0; i < fn.params.size(); ++i)
        roots.push_back(fn.type_of(fn.params[i]).is_array() ? static_cast<int>(i) : -1);
    return Estimator(program, kind).function(kernel, roots);
}

}  // namespace weft::analysis
