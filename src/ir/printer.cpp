// The IR printer: one line per node, nested blocks indented.
#include "ir/printer.hpp"

#include <cstring>
#include <sstream>

#include "base/text.hpp"
#include "weft/half.hpp"

namespace weft::ir {

namespace {

std::string constant_text(const Type& t, uint64_t bits) {
    switch (t.dtype) {
        case DType::Bool: return bits ? "true" : "false";
        case DType::Int32: return std::to_string(static_cast<int32_t>(bits));
        case DType::Int64: return std::to_string(static_cast<int64_t>(bits));
        case DType::UInt32: return std::to_string(static_cast<uint32_t>(bits));
        case DType::UInt64: return std::to_string(bits);
        case DType::Float32: {
            float f;
            const auto b = static_cast<uint32_t>(bits);
            std::memcpy(&f, &b, 4);
            std::ostringstream s;
            s.precision(9);
            s << f;
            return s.str();
        }
        case DType::Float64: {
            double d;
            std::memcpy(&d, &bits, 8);
            std::ostringstream s;
            s.precision(17);
            s << d;
            return s.str();
        }
        case DType::Float16:
        case DType::BFloat16: {
            const auto b = static_cast<uint16_t>(bits);
            const float f = t.dtype == DType::Float16 ? static_cast<float>(float16::from_bits(b))
                                                      : static_cast<float>(bfloat16::from_bits(b));
            std::ostringstream s;
            s.precision(5);
            s << f << (t.dtype == DType::Float16 ? "h" : "bf");
            return s.str();
        }
    }
    return "?";
}

class Printer {
public:
    Printer(const Program& p, const Function& fn, bool locations)
        : program_(p), fn_(fn), locations_(locations) {}

    std::string run() {
        out_ << (fn_.is_kernel ? "kernel " : "func ") << fn_.name << "(";
        for (size_t i = 0; i < fn_.params.size(); ++i) {
            if (i) out_ << ", ";
            out_ << fn_.param_names[i] << ": %" << fn_.params[i] << " " << fn_.type_of(fn_.params[i]).str();
        }
        out_ << ")";
        if (!fn_.ret.is_void()) out_ << " -> " << fn_.ret.str();
        out_ << " {\n";
        block(fn_.body, 1);
        out_ << "}\n";
        return out_.str();
    }

private:
    // append, not "%" + std::to_string: g++ 12 warns (-Wrestrict) on operator+'s insert at 0.
    std::string v(ValueId id) const { return std::string("%").append(std::to_string(id)); }

    std::string list(const std::vector<ValueId>& ids, size_t from, size_t to) const {
        std::string s;
        for (size_t i = from; i < to; ++i) s += (i > from ? ", " : "") + v(ids[i]);
        return s;
    }

    void line(int depth, const std::string& text, const Node& n) {
        out_ << std::string(depth * 2, ' ') << text;
        if (locations_ && n.loc.line) {
            const char* slash = std::strrchr(n.loc.file, '/');
            out_ << "  # " << (slash ? slash + 1 : n.loc.file) << ":" << n.loc.line;
        }
        out_ << "\n";
    }

    std::string def(const Node& n) const { return v(n.result) + ": " + fn_.type_of(n.result).str() + " = "; }

    std::string indexed(const Node& n, size_t count) const {
        std::string text = v(n.args[0]) + "[" + list(n.args, 1, 1 + count) + "]";
        // append, not "." + std::to_string: g++ 12 warns (-Wrestrict) on operator+'s insert at 0.
        if (fn_.type_of(n.args[0]).components > 1) text.append(".").append(std::to_string(n.component()));
        return text;
    }

    void block(const Block& b, int depth) {
        for (const Node& n : b.nodes) node(n, depth);
    }

    void node(const Node& n, int depth) {
        const size_t nidx = n.args.empty() ? 0 : fn_.type_of(n.args[0]).ndim;
        switch (n.kind) {
            case NodeKind::Param: return;
            case NodeKind::Const:
                line(depth, def(n) + constant_text(fn_.type_of(n.result), n.bits), n);
                return;
            case NodeKind::Tid:
                line(depth, def(n) + (n.sub == kLinearTid ? "tid linear" : "tid " + std::to_string(n.sub)),
                     n);
                return;
            case NodeKind::Copy: line(depth, def(n) + "copy " + v(n.args[0]), n); return;
            case NodeKind::Unary:
                line(depth, def(n) + detail::op_name(n.unary_op()) + " " + v(n.args[0]), n);
                return;
            case NodeKind::Binary:
                line(depth, def(n) + detail::op_name(n.binary_op()) + " " + list(n.args, 0, 2), n);
                return;
            case NodeKind::Math:
                line(depth, def(n) + detail::op_name(n.math_op()) + " " + v(n.args[0]), n);
                return;
            case NodeKind::Select: line(depth, def(n) + "select " + list(n.args, 0, 3), n); return;
            case NodeKind::Cast: line(depth, def(n) + "cast " + v(n.args[0]), n); return;
            case NodeKind::Shape:
                line(depth, def(n) + "shape " + v(n.args[0]) + " " + std::to_string(n.sub), n);
                return;
            case NodeKind::Load: line(depth, def(n) + "load " + indexed(n, nidx), n); return;
            case NodeKind::Store:
                line(depth, "store " + indexed(n, nidx) + ", " + v(n.args.back()), n);
                return;
            case NodeKind::Atomic:
                line(depth,
                     def(n) + "atomic." + detail::op_name(n.atomic_op()) + " " + indexed(n, nidx) + ", " +
                         list(n.args, 1 + nidx, n.args.size()),
                     n);
                return;
            case NodeKind::Reserve:
                line(depth, def(n) + "reserve " + indexed(n, nidx) + ", " + v(n.args.back()), n);
                return;
            case NodeKind::Accumulate:
                line(depth,
                     std::string("accumulate.") + detail::op_name(n.atomic_op()) + " " + indexed(n, nidx) +
                         ", " + v(n.args.back()),
                     n);
                return;
            case NodeKind::Assign: line(depth, v(n.args[0]) + " := " + v(n.args[1]), n); return;
            case NodeKind::Call: {
                const std::string call =
                    "call " + program_.functions[n.bits]->name + "(" + list(n.args, 0, n.args.size()) + ")";
                line(depth, (n.result == kNoValue ? "" : def(n)) + call, n);
                return;
            }
            case NodeKind::Print:
                line(depth,
                     "print " + base::c_string_literal(n.text) +
                         (n.args.empty() ? "" : ", " + list(n.args, 0, n.args.size())),
                     n);
                return;
            case NodeKind::If:
                line(depth, "if " + v(n.args[0]) + " {", n);
                block(n.blocks[0], depth + 1);
                if (!n.blocks[1].nodes.empty()) {
                    out_ << std::string(depth * 2, ' ') << "} else {\n";
                    block(n.blocks[1], depth + 1);
                }
                out_ << std::string(depth * 2, ' ') << "}\n";
                return;
            case NodeKind::For:
                line(depth, "for " + v(n.result) + " in range(" + list(n.args, 0, 3) + ") {", n);
                block(n.blocks[0], depth + 1);
                out_ << std::string(depth * 2, ' ') << "}\n";
                return;
            case NodeKind::While:
                line(depth, "while {", n);
                block(n.blocks[0], depth + 1);
                out_ << std::string(depth * 2, ' ') << "} test " << v(n.args[0]) << " do {\n";
                block(n.blocks[1], depth + 1);
                out_ << std::string(depth * 2, ' ') << "}\n";
                return;
            case NodeKind::Break: line(depth, "break", n); return;
            case NodeKind::Continue: line(depth, "continue", n); return;
            case NodeKind::Return:
                line(depth, n.args.empty() ? "return" : "return " + v(n.args[0]), n);
                return;
            case NodeKind::View: line(depth, def(n) + "view " + indexed(n, 1), n); return;
        }
    }

    const Program& program_;
    const Function& fn_;
    bool locations_;
    std::ostringstream out_;
};

}  // namespace

std::string print(const Program& program, const Function& fn, bool locations) {
    return Printer(program, fn, locations).run();
}

std::string print(const Program& program, bool locations) {
    std::string out = "module " + program.module_name + "\n";
    // append, not "\n" + print(...): g++ 12 warns (-Wrestrict) on operator+'s insert at 0.
    for (const auto& fn : program.functions) out.append("\n").append(print(program, *fn, locations));
    return out;
}

}  // namespace weft::ir
