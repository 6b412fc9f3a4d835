// Shape-read analysis: one pass per function, callees first (calls never recurse).
#include "analysis/shape_reads.hpp"

namespace weft::analysis {

namespace {

class Reads {
public:
    explicit Reads(const ir::Program& p)
        : program_(p), reads_(p.functions.size()), done_(p.functions.size()) {}

    const std::vector<uint8_t>& of(uint32_t f) {
        if (done_[f]) return reads_[f];
        const ir::Function& fn = *program_.functions[f];
        // Per array value: the parameter it views and how many leading dimensions views fixed.
        std::vector<int> param(fn.values.size(), -1);
        std::vector<int> depth(fn.values.size(), 0);
        for (size_t i = 0; i < fn.params.size(); ++i) param[fn.params[i]] = static_cast<int>(i);
        std::vector<uint8_t> mine(fn.params.size(), 0);
        auto read = [&](ir::ValueId array, int dims_mask) {
            if (param[array] >= 0) mine[param[array]] |= static_cast<uint8_t>(dims_mask << depth[array]);
        };
        ir::for_each_node(fn.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::View) {
                param[n.result] = param[n.args[0]];
                depth[n.result] = depth[n.args[0]] + 1;
            } else if (n.kind == ir::NodeKind::Shape) {
                read(n.args[0], 1 << n.sub);
            } else if (n.kind == ir::NodeKind::Call) {
                const std::vector<uint8_t> callee = of(static_cast<uint32_t>(n.bits));
                for (size_t a = 0; a < n.args.size(); ++a)
                    if (fn.type_of(n.args[a]).is_array()) read(n.args[a], callee[a]);
            }
        });
        reads_[f] = std::move(mine);
        done_[f] = true;
        return reads_[f];
    }

private:
    const ir::Program& program_;
    std::vector<std::vector<uint8_t>> reads_;
    std::vector<bool> done_;
};

}  // namespace

std::vector<std::vector<uint8_t>> shape_reads(const ir::Program& program) {
    Reads reads(program);
    std::vector<std::vector<uint8_t>> out;
    for (uint32_t f = 0; f < program.functions.size(); ++f) out.push_back(reads.of(f));
    return out;
}

}  // namespace weft::analysis
