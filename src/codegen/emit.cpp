// The C++ emitter: each IR function becomes a C++ function, each kernel also an entry point.
#include "codegen/emit.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>

#include "base/internal_check.hpp"
#include "base/text.hpp"
#include "device/abi.h"
#include "ir/facts.hpp"

namespace weft::codegen {

namespace {

const char* c_type(DType t) {
    switch (t) {
        case DType::Bool: return "bool";
        case DType::Int32: return "wf::i32";
        case DType::UInt32: return "wf::u32";
        case DType::Int64: return "wf::i64";
        case DType::UInt64: return "wf::u64";
        case DType::Float16: return "wf::f16";
        case DType::BFloat16: return "wf::bf16";
        case DType::Float32: return "float";
        case DType::Float64: return "double";
    }
    return "?";
}

std::string c_type(const ir::Type& t) {
    if (t.is_array())
        return std::string("wf::Array<") + c_type(t.dtype) + ", " + std::to_string(t.ndim) + ">";
    if (t.is_void()) return "void";
    return c_type(t.dtype);
}

// A literal that reproduces the constant's exact bits.
std::string literal(DType t, uint64_t bits) {
    char buf[64];
    switch (t) {
        case DType::Bool: return bits ? "true" : "false";
        case DType::Int32: return "wf::i32(" + std::to_string(static_cast<int32_t>(bits)) + ")";
        case DType::UInt32: return std::to_string(static_cast<uint32_t>(bits)) + "u";
        case DType::Int64:
            // -9223372036854775808ll is ill-formed (the magnitude does not fit in a long long).
            if (static_cast<int64_t>(bits) == INT64_MIN) return "wf::i64(-9223372036854775807ll - 1)";
            return "wf::i64(" + std::to_string(static_cast<int64_t>(bits)) + "ll)";
        case DType::UInt64: return std::to_string(bits) + "ull";
        case DType::Float32: {
            const auto b = static_cast<uint32_t>(bits);
            float f;
            std::memcpy(&f, &b, 4);
            if (f != f || f - f != 0) return "wf::bit_cast<float>(" + std::to_string(b) + "u)";
            std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
            std::string s = buf;
            if (s.find_first_of(".e") == std::string::npos) s += ".0";
            return s + "f";
        }
        case DType::Float64: {
            double d;
            std::memcpy(&d, &bits, 8);
            if (d != d || d - d != 0) return "wf::bit_cast<double>(" + std::to_string(bits) + "ull)";
            std::snprintf(buf, sizeof buf, "%.17g", d);
            std::string s = buf;
            if (s.find_first_of(".e") == std::string::npos) s += ".0";
            return s;
        }
        case DType::Float16:
        case DType::BFloat16:
            return std::string(c_type(t)) + "::from_bits(" + std::to_string(static_cast<uint16_t>(bits)) +
                   ")";
    }
    return "?";
}

const char* binary_symbol(ir::BinaryOp op) {
    using B = ir::BinaryOp;
    switch (op) {
        case B::Add: return "+";
        case B::Sub: return "-";
        case B::Mul: return "*";
        case B::Div: return "/";
        case B::Mod: return "%";
        case B::BitAnd: return "&";
        case B::BitOr: return "|";
        case B::BitXor: return "^";
        case B::Shl: return "<<";
        case B::Shr: return ">>";
        case B::And: return "&&";
        case B::Or: return "||";
        case B::Eq: return "==";
        case B::Ne: return "!=";
        case B::Lt: return "<";
        case B::Le: return "<=";
        case B::Gt: return ">";
        case B::Ge: return ">=";
        default: return nullptr;
    }
}

const char* atomic_functor(ir::AtomicOp op) {
    using A = ir::AtomicOp;
    switch (op) {
        case A::Add: return "wf::OpAdd";
        case A::Sub: return "wf::OpSub";
        case A::Min: return "wf::OpMin";
        case A::Max: return "wf::OpMax";
        case A::And: return "wf::OpAnd";
        case A::Or: return "wf::OpOr";
        case A::Xor: return "wf::OpXor";
        case A::Exch: return "wf::OpExch";
        case A::Cas: return nullptr;
    }
    return nullptr;
}

std::string identifier(const std::string& name) {
    std::string out;
    for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    return out;
}

class FunctionEmitter {
public:
    FunctionEmitter(const ir::Program& p, const plan::ProgramPlan& plan, size_t index, const EmitOptions& o,
                    Generated& g, bool calls_accumulations)
        : program_(p),
          fn_(*p.functions[index]),
          facts_(fn_),
          about_(plan.functions[index]),
          options_(o),
          out_(g),
          calls_accumulations_(calls_accumulations) {
        view_depth_.assign(fn_.values.size(), 0);
        ir::for_each_node(fn_.body, [&](const ir::Node& n) {
            if (n.kind == ir::NodeKind::View) view_depth_[n.result] = view_depth_[n.args[0]] + 1;
        });
        nonnegative_.assign(fn_.values.size(), false);
        ir::for_each_node(fn_.body, [&](const ir::Node& n) {
            if (n.result != ir::kNoValue && !fn_.values[n.result].assigned)
                nonnegative_[n.result] = is_nonnegative(n);
        });
    }

    void body(std::ostringstream& s) { block(s, fn_.body, 1); }

private:
    // append, not "v" + std::to_string: g++ 12 warns (-Wrestrict) on operator+'s insert at 0.
    std::string v(ir::ValueId id) const { return std::string("v").append(std::to_string(id)); }
    const ir::Type& type(ir::ValueId id) const { return fn_.type_of(id); }

    // "const T vN = " or "T vN = " for values that are reassigned later.
    std::string def(const ir::Node& n) const {
        return std::string(fn_.values[n.result].assigned ? "" : "const ") + c_type(type(n.result)) + " " +
               v(n.result) + " = ";
    }

    // The constant value of an integer value, if it is an unassigned constant.
    // A UInt64 reads as its bits, which is enough: it is only compared with 0 and -1.
    std::optional<int64_t> constant(ir::ValueId id) const { return facts_.integer(id); }

    // Whether the value `n` defines is never negative, so an index needs no wrap: unsigned
    // values, tid(), extents, constants >= 0, and what arithmetic that keeps the sign makes of
    // them. Sums and products of such values are taken as non-negative too: one that overflowed
    // int32 is out of bounds (reported with bounds_check), never counted from the end.
    bool is_nonnegative(const ir::Node& n) const {
        using K = ir::NodeKind;
        const ir::Type& t = type(n.result);
        if (!t.is_scalar()) return false;
        if (t.dtype == DType::Bool || t.dtype == DType::UInt32 || t.dtype == DType::UInt64) return true;
        if (!t.is_integer()) return false;
        auto nonneg = [&](size_t a) { return nonnegative_[n.args[a]]; };
        switch (n.kind) {
            case K::Const: return constant(n.result).value_or(-1) >= 0;
            case K::Tid:
            case K::Shape: return true;
            case K::Copy: return nonneg(0);
            case K::Select: return nonneg(1) && nonneg(2);
            case K::Cast: {
                const ir::Type& from = type(n.args[0]);
                if (from.is_bool()) return true;
                if (!from.is_integer() || !nonneg(0)) return false;
                const bool from_signed = from.dtype == DType::Int32 || from.dtype == DType::Int64;
                return from_signed ? dtype_size(t.dtype) >= dtype_size(from.dtype)
                                   : dtype_size(t.dtype) > dtype_size(from.dtype);
            }
            case K::For: return nonneg(0) && constant(n.args[2]).value_or(0) > 0;
            case K::Binary:
                switch (n.binary_op()) {
                    case ir::BinaryOp::Add:
                    case ir::BinaryOp::Mul:
                    case ir::BinaryOp::Div:
                    case ir::BinaryOp::Min:
                    case ir::BinaryOp::BitOr: return nonneg(0) && nonneg(1);
                    case ir::BinaryOp::Max:
                    case ir::BinaryOp::BitAnd: return nonneg(0) || nonneg(1);
                    case ir::BinaryOp::Mod:
                    case ir::BinaryOp::Shr: return nonneg(0);
                    default: return false;
                }
            default: return false;
        }
    }

    // The array's indices, each wrapped (counted from the end when negative) unless it cannot
    // be negative; with bounds checks, checked() wraps the indices whose bit is in the mask.
    // `ndim` is the number of indices: the array's dimensions, or 1 for a view.
    std::string indices(const ir::Node& n, int ndim, bool wrap_here) const {
        std::string s;
        for (int d = 0; d < ndim; ++d) {
            const ir::ValueId i = n.args[1 + d];
            s += ", ";
            if (wrap_here && !nonnegative_[i])
                s.append("wf::wrap(")
                    .append(v(i))
                    .append(", ")
                    .append(v(n.args[0]))
                    .append(".shape[")
                    .append(std::to_string(d))
                    .append("])");
            else
                s += v(i);
        }
        return s;
    }

    std::string wrap_mask(const ir::Node& n, int ndim) const {
        unsigned mask = 0;
        for (int d = 0; d < ndim; ++d)
            if (!nonnegative_[n.args[1 + d]]) mask |= 1u << d;
        return std::to_string(mask) + "u";
    }

    uint32_t site(const ir::Node& n) {
        const ir::ValueId array = n.args[0];
        std::string name = "an array argument";
        // An access through a view names the viewed parameter, with its dimension numbers.
        for (size_t i = 0; i < fn_.params.size(); ++i)
            if (fn_.params[i] == facts_.root(array)) name = fn_.param_names[i];
        out_.sites.push_back({about_.name, name, n.loc.file, n.loc.line, view_depth_[array]});
        return static_cast<uint32_t>(out_.sites.size() - 1);
    }

    // The element pointer expression (of the node's component); with bounds checks it may be null.
    std::string element(const ir::Node& n) {
        const int ndim = type(n.args[0]).ndim;
        const std::string component = n.component() ? ", " + std::to_string(n.component()) : "";
        if (!options_.bounds_check)
            return "wf::addr" + std::string(component.empty() ? "" : "_component") + "(" + v(n.args[0]) +
                   component + indices(n, ndim, true) + ")";
        return "wf::checked<" + wrap_mask(n, ndim) + ">(ctx, " + std::to_string(site(n)) + ", " +
               v(n.args[0]) + (component.empty() ? ", 0" : component) + indices(n, ndim, false) + ")";
    }

    // array[i] of a 2-D or larger array; with bounds checks, i is checked against its extent.
    std::string view(const ir::Node& n) {
        if (!options_.bounds_check) return "wf::view0(" + v(n.args[0]) + indices(n, 1, true) + ")";
        return "wf::view0<" + wrap_mask(n, 1) + ">(ctx, " + std::to_string(site(n)) + ", " + v(n.args[0]) +
               indices(n, 1, false) + ")";
    }

    void line(std::ostringstream& s, int depth, const std::string& text) {
        s << std::string(depth * 4, ' ') << text << "\n";
    }

    std::string atomic_call(const ir::Node& n, const std::string& ptr) const {
        const ir::ValueId value = n.args.back();
        if (n.atomic_op() == ir::AtomicOp::Cas)
            return "wf::atomic_cas(ctx, " + ptr + ", " + v(n.args[n.args.size() - 2]) + ", " + v(value) + ")";
        return std::string("wf::atomic<") + atomic_functor(n.atomic_op()) + ">(ctx, " + ptr + ", " +
               v(value) + ")";
    }

    // Indexed operations: unchecked, a direct expression; checked, guarded by a null test.
    void access(std::ostringstream& s, int depth, const ir::Node& n) {
        const std::string ptr = element(n);
        const bool checked = options_.bounds_check;
        const std::string elem = c_type(type(n.args[0]).dtype);
        if (n.kind == ir::NodeKind::Reserve) {
            const std::string call =
                std::string(about_.variant == plan::Variant::Counting ? "wf::reserve_count" : "wf::reserve") +
                "(ctx, " + v(n.args[0]) + ".det, ";
            if (!checked) return line(s, depth, def(n) + call + ptr + ", " + v(n.args.back()) + ");");
            line(s, depth, "wf::i32 " + v(n.result) + " = 0;");
            return line(s, depth,
                        "if (wf::i32* p = " + ptr + ") " + v(n.result) + " = " + call + "p, " +
                            v(n.args.back()) + ");");
        }
        if (n.kind == ir::NodeKind::Accumulate) {
            const std::string call =
                std::string(calls_accumulations_ ? "wf::accumulate_call<" : "wf::accumulate<") +
                atomic_functor(n.atomic_op()) + ">(ctx, " + v(n.args[0]) + ".det, ";
            if (!checked) return line(s, depth, call + ptr + ", " + v(n.args.back()) + ");");
            return line(s, depth,
                        "if (" + elem + "* p = " + ptr + ") " + call + "p, " + v(n.args.back()) + ");");
        }
        if (n.kind == ir::NodeKind::Store) {
            if (!checked) return line(s, depth, "*" + ptr + " = " + v(n.args.back()) + ";");
            return line(s, depth, "if (" + elem + "* p = " + ptr + ") *p = " + v(n.args.back()) + ";");
        }
        const std::string op = n.kind == ir::NodeKind::Load ? "*p" : atomic_call(n, "p");
        if (n.kind == ir::NodeKind::Atomic && !facts_.used(n.result)) {
            if (!checked) return line(s, depth, atomic_call(n, ptr) + ";");
            return line(s, depth, "if (" + elem + "* p = " + ptr + ") " + op + ";");
        }
        if (!checked) {
            const std::string direct = n.kind == ir::NodeKind::Load ? "*" + ptr : atomic_call(n, ptr);
            return line(s, depth, def(n) + direct + ";");
        }
        line(s, depth, elem + " " + v(n.result) + " = " + elem + "(0);");
        line(s, depth, "if (" + elem + "* p = " + ptr + ") " + v(n.result) + " = " + op + ";");
    }

    // Whether an integer divisor may be 0, or -1 (INT_MIN / -1 overflows): only a constant
    // divisor is known not to be.
    bool divisor_may_fault(ir::ValueId divisor) const {
        const std::optional<int64_t> c = constant(divisor);
        if (!c) return true;
        const bool is_signed = type(divisor).dtype == DType::Int32 || type(divisor).dtype == DType::Int64;
        return *c == 0 || (is_signed && *c == -1);
    }

    std::string binary(const ir::Node& n) const {
        const std::string a = v(n.args[0]);
        const std::string b = v(n.args[1]);
        switch (n.binary_op()) {
            case ir::BinaryOp::Min: return "wf::min(" + a + ", " + b + ")";
            case ir::BinaryOp::Max: return "wf::max(" + a + ", " + b + ")";
            case ir::BinaryOp::Pow: return "wf::pow(" + a + ", " + b + ")";
            case ir::BinaryOp::Mod:
                if (type(n.args[0]).is_float()) return "wf::fmod(" + a + ", " + b + ")";
                if (divisor_may_fault(n.args[1])) return "wf::irem(" + a + ", " + b + ")";
                break;
            case ir::BinaryOp::Div:
                if (type(n.args[0]).is_integer() && divisor_may_fault(n.args[1]))
                    return "wf::idiv(" + a + ", " + b + ")";
                break;
            default: break;
        }
        return a + " " + binary_symbol(n.binary_op()) + " " + b;
    }

    // printf with every argument converted to what its conversion expects.
    std::string print_call(const ir::Node& n) const {
        std::string format;
        std::string args;
        size_t next = 0;
        const std::string& f = n.text;
        for (size_t i = 0; i < f.size(); ++i) {
            format += f[i];
            if (f[i] != '%') continue;
            if (f[i + 1] == '%') {
                format += f[++i];
                continue;
            }
            while (std::strchr("-+ #0123456789.", f[i + 1])) format += f[++i];
            while (f[i + 1] == 'l' || f[i + 1] == 'h') ++i;
            const char conv = f[++i];
            const std::string arg = v(n.args[next++]);
            if (std::strchr("fFeEgGaA", conv)) {
                args += is_half(type(n.args[next - 1]).dtype) ? ", double(wf::to_float(" + arg + "))"
                                                              : ", double(" + arg + ")";
            } else if (conv == 'c') {
                args += ", int(" + arg + ")";
            } else {
                // Integers print at their own width, as C's printf does with the matching length
                // modifier: %x of the int32 -1 is ffffffff, not ffffffffffffffff.
                const bool is_signed = conv == 'd' || conv == 'i';
                const bool wide = dtype_size(type(n.args[next - 1]).dtype) == 8;
                const char* via = is_signed ? (wide ? "wf::i64" : "wf::i32") : (wide ? "wf::u64" : "wf::u32");
                format += "ll";
                args += std::string(is_signed ? ", (long long)(" : ", (unsigned long long)(") + via + "(" +
                        arg + "))";
            }
            format += conv;
        }
        return "printf(" + base::c_string_literal(format) + args + ");";
    }

    // Python's range(start, stop, step), bounds evaluated once. A step of 1 or -1 cannot step
    // past the int32 range before meeting stop, so it loops on the variable itself; any other
    // step counts its iterations first (wf::trip_count), because the variable's last step may
    // overflow.
    void for_loop(std::ostringstream& s, const ir::Node& n, int depth) {
        const std::string i = v(n.result);
        const std::optional<int64_t> step = constant(n.args[2]);
        if (step == 1 || step == -1) {
            // (Int32, or Int64 for the adjoint's reverse sweep over a loop's 64-bit trip count.)
            line(s, depth,
                 std::string("for (") + c_type(type(n.result).dtype) + " " + i + " = " + v(n.args[0]) +
                     ", stop = " + v(n.args[1]) + "; " + i + (step == 1 ? " < stop; ++" : " > stop; --") + i +
                     ") {");
            block(s, n.blocks[0], depth + 1);
            return line(s, depth, "}");
        }
        line(s, depth, "{");
        line(s, depth + 1, "wf::i32 " + i + " = " + v(n.args[0]) + ";");
        line(s, depth + 1, "const wf::i32 step = " + v(n.args[2]) + ";");
        line(s, depth + 1,
             "for (wf::u32 left = wf::trip_count(" + i + ", " + v(n.args[1]) +
                 ", step); left != 0; --left, " + i + " = wf::add_wrapping(" + i + ", step)) {");
        block(s, n.blocks[0], depth + 2);
        line(s, depth + 1, "}");
        line(s, depth, "}");
    }

    void node(std::ostringstream& s, const ir::Node& n, int depth) {
        using K = ir::NodeKind;
        switch (n.kind) {
            case K::Param: return;
            case K::Const: return line(s, depth, def(n) + literal(type(n.result).dtype, n.bits) + ";");
            case K::Tid:
                if (n.sub == ir::kLinearTid) return line(s, depth, def(n) + "ctx.thread;");
                return line(s, depth, def(n) + "ctx.tid[" + std::to_string(n.sub) + "];");
            case K::Copy: return line(s, depth, def(n) + v(n.args[0]) + ";");
            case K::Unary: {
                const char* op = n.unary_op() == ir::UnaryOp::Neg   ? "-"
                                 : n.unary_op() == ir::UnaryOp::Not ? "!"
                                                                    : "~";
                return line(s, depth, def(n) + op + v(n.args[0]) + ";");
            }
            case K::Binary: return line(s, depth, def(n) + binary(n) + ";");
            case K::Math:
                return line(s, depth,
                            def(n) + "wf::" + detail::op_name(n.math_op()) + "(" + v(n.args[0]) + ");");
            case K::Select:
                return line(s, depth,
                            def(n) + v(n.args[0]) + " ? " + v(n.args[1]) + " : " + v(n.args[2]) + ";");
            case K::Cast:
                return line(s, depth,
                            def(n) + "static_cast<" + c_type(type(n.result)) + ">(" +
                                (is_half(type(n.args[0]).dtype) ? "wf::to_float(" + v(n.args[0]) + ")"
                                                                : v(n.args[0])) +
                                ");");
            case K::Shape:
                return line(s, depth,
                            def(n) + "wf::i32(" + v(n.args[0]) + ".shape[" + std::to_string(n.sub) + "]);");
            case K::Load:
            case K::Store:
            case K::Atomic:
            case K::Accumulate:
            case K::Reserve: return access(s, depth, n);
            case K::Assign: return line(s, depth, v(n.args[0]) + " = " + v(n.args[1]) + ";");
            case K::Call: {
                std::string call = "f" + std::to_string(n.bits) + "_" +
                                   identifier(program_.functions[n.bits]->name) + "(ctx";
                for (ir::ValueId a : n.args) call += ", " + v(a);
                call += ");";
                return line(s, depth, n.result == ir::kNoValue ? call : def(n) + call);
            }
            case K::Print: return line(s, depth, print_call(n));
            case K::If:
                line(s, depth, "if (" + v(n.args[0]) + ") {");
                block(s, n.blocks[0], depth + 1);
                if (!n.blocks[1].nodes.empty()) {
                    line(s, depth, "} else {");
                    block(s, n.blocks[1], depth + 1);
                }
                return line(s, depth, "}");
            case K::For: return for_loop(s, n, depth);
            case K::While:
                line(s, depth, "while (true) {");
                block(s, n.blocks[0], depth + 1);
                line(s, depth + 1, "if (!" + v(n.args[0]) + ") break;");
                block(s, n.blocks[1], depth + 1);
                return line(s, depth, "}");
            case K::Break: return line(s, depth, "break;");
            case K::Continue: return line(s, depth, "continue;");
            case K::Return:
                return line(s, depth, n.args.empty() ? "return;" : "return " + v(n.args[0]) + ";");
            case K::View: return line(s, depth, def(n) + view(n) + ";");
        }
    }

    void block(std::ostringstream& s, const ir::Block& b, int depth) {
        for (const ir::Node& n : b.nodes) node(s, n, depth);
    }

    const ir::Program& program_;
    const ir::Function& fn_;
    const ir::Facts facts_;
    const plan::FunctionPlan& about_;
    const EmitOptions& options_;
    Generated& out_;
    const bool calls_accumulations_;  // wf::accumulate_call at each site, not the inlined path
    std::vector<bool> nonnegative_;   // per value: never negative (an index needs no wrap)
    std::vector<int> view_depth_;     // how many dimensions views have removed from that parameter
};

std::string signature(const ir::Program& p, size_t index) {
    const ir::Function& fn = *p.functions[index];
    std::string s = std::string(fn.is_kernel ? "WEFT_KERNEL " : "WEFT_FUNC ") + c_type(fn.ret) + " f" +
                    std::to_string(index) + "_" + identifier(fn.name) + "(wf::Ctx& ctx";
    for (ir::ValueId param : fn.params) s += ", " + c_type(fn.type_of(param)) + " v" + std::to_string(param);
    return s + ")";
}

// What an entry point needs of its kernel's plan.
struct Entry {
    const plan::KernelPlan& kernel;
    bool counting;  // the entry runs the counting pass

    // The parameter the first slot counter is, or -1 when the kernel reserves no slots.
    int counter() const {
        return kernel.slots.counters.empty() ? -1 : static_cast<int>(kernel.slots.counters[0].arg.param);
    }
    // Deterministic accumulation runs in the forward variant only.
    bool accumulates() const { return !counting && !kernel.det_targets.empty(); }
    // The GPU entry can resolve its targets after a grid barrier: sums with float32 state (the
    // runtime also requires the compact or exact strategy, not carrying), few enough for
    // wf::InKernelResolve, in a kernel that allocates no slots.
    bool resolves_in_kernel() const {
        if (!accumulates() || counter() >= 0 || kernel.det_targets.size() > size_t{wf::kResolveTargets})
            return false;
        for (const plan::DetTarget& t : kernel.det_targets)
            if (t.family != detail::AtomicOp::Add || t.dtype == DType::Float64) return false;
        return true;
    }
    // One counter element: the CUDA entry runs tiles of blockDim threads (src/device/slots.h).
    bool slot_tiles() const { return counter() >= 0 && kernel.slots.single_counter_element; }
    // The execution pass's GPU entry has a fused twin that runs the counting pass first, in the
    // same kernel (a cooperative launch): one counter element, no deterministic sums.
    bool fuses_passes() const {
        return slot_tiles() && !counting && kernel.det_targets.empty() && kernel.variants.counting >= 0;
    }
};

// The execution pass of a slot-allocating kernel runs only if the counting pass fit.
std::string skip_if_overflowed(const Entry& e) {
    if (e.counter() < 0 || e.counting) return "";
    return "wf::slots_overflowed(a" + std::to_string(e.counter()) + ".det)";
}

// A slot-allocating kernel's end-of-thread step (see src/device/slots.h).
std::string reservations_end(const Entry& e, const std::string& indent) {
    if (e.counter() < 0) return "";
    return indent + "wf::reservations_end(ctx, a" + std::to_string(e.counter()) + ".det, " +
           (e.counting ? "true" : "false") + ");\n";
}

// A CPU entry runs one chunk of the launch's threads, [begin, end), as one worker's loop; the
// runtime hands chunks to its workers (src/runtime/cpu/worker_pool.hpp). The loop is shaped for
// the host compiler to vectorize across threads: the kernel is inlined into it, the thread's
// context is a local of each iteration (registers, not memory), the index is an int32 induction
// variable (launches have fewer than 2^31 threads), and the iterations are declared independent.
// Only with bounds checks does each iteration test for a fault; it stops the chunk at its first,
// so the runtime reports the first fault in thread order. When every array's last dimension is
// contiguous, the loop runs on copies whose stride there is a constant (kernels without
// deterministic atomics).
void cpu_entry(std::ostringstream& s, const ir::Program& p, const Entry& e, size_t index,
               const std::string& symbol, const EmitOptions& options) {
    const ir::Function& fn = *p.functions[index];
    const bool det = e.accumulates();
    std::string params, call = "f" + std::to_string(index) + "_" + identifier(fn.name) + "(ctx";
    for (size_t i = 0; i < fn.params.size(); ++i) {
        params += ", const " + c_type(fn.type_of(fn.params[i])) + " a" + std::to_string(i);
        call += ", a" + std::to_string(i);
    }
    const std::string chunk = symbol + "_chunk";
    s << "WEFT_KERNEL void " << chunk
      << "(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker" << params
      << ") {\n";
    if (det) s << "    wf::BlockPrivate block_private;\n    wf::block_private_begin(block_private);\n";
    // (Not where threads update shared memory: atomics do not vectorize, and a serial launch's
    // atomics are plain loads and stores, which must stay in thread order.)
    const bool updates =
        det || e.counter() >= 0 ||
        std::find(e.kernel.atomics.begin(), e.kernel.atomics.end(), true) != e.kernel.atomics.end();
    s << "    const bool serial = launch.serial != 0;\n"
      << (options.bounds_check || updates ? "" : "    WEFT_THREADS_INDEPENDENT\n")
      << "    for (wf::i32 i = begin; i < end" << (options.bounds_check ? " && error->code == 0" : "")
      << "; ++i) {\n"
      << "        wf::Ctx ctx{{i, 0, 0, 0}, error, " << (det ? "&block_private" : "nullptr") << ", i, 0};\n"
      << "        ctx.serial = serial;\n"
      << "        ctx.worker = worker;\n"
      << (fn.tid_ndim > 1 ? "        wf::set_tid<" + std::to_string(fn.tid_ndim) + ">(ctx, launch, i);\n"
                          : "")
      << "        " << call << ");\n"
      << reservations_end(e, "        ") << "    }\n";
    if (det) s << "    wf::block_private_end(block_private);\n";
    s << "    (void)launch;\n}\n\n";

    s << "extern \"C\" __attribute__((visibility(\"default\"))) void " << symbol
      << "(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, "
         "wf::i32 worker) {\n";
    std::string dense, plain, densified;
    for (size_t i = 0; i < fn.params.size(); ++i) {
        const ir::Type& t = fn.type_of(fn.params[i]);
        const std::string ct = c_type(t);
        std::string a = "a";  // (not "a" + to_string(i): GCC 12 warns falsely there, -Wrestrict)
        a += std::to_string(i);
        s << "    const " << ct << " " << a << " = *static_cast<const " << ct << "*>(args[" << i << "]);\n";
        plain += ", " + a;
        const std::string per = t.is_array() ? "<" + std::to_string(t.components) + ">(" : "";
        densified += t.is_array() ? ", wf::densified" + per + a + ")" : ", " + a;
        if (t.is_array()) dense += std::string(dense.empty() ? "" : " && ") + "wf::dense" + per + a + ")";
    }
    if (!skip_if_overflowed(e).empty()) s << "    if (" << skip_if_overflowed(e) << ") return;\n";
    const std::string run =
        chunk + "(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker";
    // (Not for deterministic kernels: their atomics do not vectorize, and the copy costs compile time.)
    if (!dense.empty() && !det && e.counter() < 0)
        s << "    if (" << dense << ") return " << run << densified << ");\n";
    s << "    " << run << plain << ");\n}\n";
}

// A grid-stride loop: the runtime launches at most a couple of waves of blocks, so block
// start-up is paid once per resident block rather than once per 256 threads, and each block's
// private accumulator is flushed once. Every thread of a block reaches the end of the entry.
// The resolving entry (`resolving`) is the same, then a grid barrier and the resolve of the
// kernel's sums (src/device/grid.h).
// A kernel that reserves slots on one counter element runs a contiguous range of tiles of
// blockDim threads per block instead, which its passes scan (src/device/slots.h).
void cuda_entry(std::ostringstream& s, const ir::Program& p, const Entry& e, size_t index,
                const std::string& symbol, bool resolving) {
    const ir::Function& fn = *p.functions[index];
    s << "extern \"C\" __global__ void " << symbol << "(";
    std::string call = "f" + std::to_string(index) + "_" + identifier(fn.name) + "(ctx";
    for (size_t i = 0; i < fn.params.size(); ++i) {
        s << c_type(fn.type_of(fn.params[i])) << " a" << i << ", ";
        call += ", a" + std::to_string(i);
    }
    const bool det = e.accumulates();
    const std::string skip = skip_if_overflowed(e);
    s << "const wf::Launch launch) {\n";
    if (det)
        s << "    __shared__ wf::BlockPrivate block_private;\n    wf::block_private_begin(block_private);\n";
    const bool tiled_execution = e.slot_tiles() && !e.counting;  // the tile scan gives the slot
    const std::string det_arg = "a" + std::to_string(e.counter()) + ".det";
    const std::string thread =
        std::string("        wf::Ctx ctx{{0, 0, 0, 0}, launch.error, ") +
        (det ? "&block_private" : "nullptr") + ", i, 0" + (tiled_execution ? ", slot" : "") + "};\n" +
        (fn.tid_ndim ? "        wf::set_tid<" + std::to_string(fn.tid_ndim) + ">(ctx, launch, i);\n" : "") +
        "        " + call + ");\n" +
        (tiled_execution ? "        wf::slot_tile_end(ctx, " + det_arg + ", tiles);\n"
                         : reservations_end(e, "        "));
    if (e.slot_tiles()) {
        // Every thread of the block runs every tile of the block's range (a guard per thread, not
        // a loop bound), so that the per-tile block scan's barriers are reached by all.
        if (!skip.empty()) s << "    const bool skipped = " << skip << ";\n";
        s << "    wf::SlotTiles tiles = wf::slot_tiles(" << det_arg << ", launch.total, "
          << (e.counting ? "true" : "false") << ");\n"
          << "    for (wf::i64 tile = tiles.first; tile < tiles.last; ++tile) {\n"
          << "        const wf::i64 i = tile * blockDim.x + threadIdx.x;\n";
        if (tiled_execution)
            s << "        const wf::i32 slot = wf::slot_tile_begin(" << det_arg
              << ", tiles, i, launch.total);\n";
        s << "        if (i >= launch.total" << (skip.empty() ? "" : " || skipped") << ") continue;\n"
          << thread;
        if (e.counting) s << "        wf::slot_tile_count(" << det_arg << ", tiles, ctx);\n";
        s << "    }\n";
        if (e.counting) s << "    wf::slot_tiles_counted(" << det_arg << ", tiles);\n";
    } else {
        s << "    const wf::i64 stride = static_cast<wf::i64>(gridDim.x) * blockDim.x;\n"
          << "    for (wf::i64 i = static_cast<wf::i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < "
             "launch.total"
          << (skip.empty() ? "" : " && !" + skip) << "; i += stride) {\n"
          << thread << "    }\n";
    }
    if (det) s << "    wf::block_private_end(block_private);\n";
    if (resolving) {
        s << "    if (launch.resolve.barrier) {\n        wf::grid_barrier(launch.resolve.barrier);\n";
        for (size_t i = 0; i < e.kernel.det_targets.size(); ++i)
            s << "        wf::resolve_in_kernel<" << c_type(e.kernel.det_targets[i].dtype)
              << ">(launch.resolve.targets[" << i << "]);\n";
        s << "    }\n";
    }
    if (e.counter() >= 0 && !e.counting) s << "    wf::slots_executed(a" << e.counter() << ".det);\n";
    s << "}\n";
}

// The fused entry (Entry::fuses_passes, src/device/fused_slots.h): one tile per block, the
// counting phase, its block's total published, the wait for every block's, then the execution
// phase, each thread's reservation kept in registers from one to the other. Every thread of
// every block reaches every step's barrier: the entry has no return, and the guards (the
// launch's end, a failed counting phase) are around the kernel's code only. Launched
// cooperatively only, with one block per tile, all resident (CudaModule::launch_fused).
void cuda_fused_entry(std::ostringstream& s, const ir::Program& p, const Entry& e, size_t index,
                      const std::string& symbol) {
    const ir::Function& fn = *p.functions[index];
    const auto counting = static_cast<size_t>(e.kernel.variants.counting);
    const ir::Function& counting_fn = *p.functions[counting];
    s << "extern \"C\" __global__ void " << symbol << "(";
    std::string args;
    for (size_t i = 0; i < fn.params.size(); ++i) {
        s << c_type(fn.type_of(fn.params[i])) << " a" << i << ", ";
        args += ", a" + std::to_string(i);
    }
    const auto tid = [&fn](const char* indent) {
        return fn.tid_ndim ? indent + ("wf::set_tid<" + std::to_string(fn.tid_ndim) + ">(ctx, launch, i);\n")
                           : std::string();
    };
    s << "const wf::Launch launch) {\n"
      << "    const wf::i64 i = static_cast<wf::i64>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
      << "    wf::SlotJoin join = wf::slot_join_begin(launch.slots);\n"
      << "    {\n"
      << "        wf::Ctx ctx{{0, 0, 0, 0}, launch.error, nullptr, i, 0, 0, true};\n"
      << "        if (i < launch.total) {\n"
      << tid("            ") << "            f" << counting << "_" << identifier(counting_fn.name) << "(ctx"
      << args << ");\n"
      << "        }\n"
      << "        wf::slot_join_counted(launch.slots, join, ctx);\n"
      << "    }\n"
      << "    wf::slot_join_wait(launch.slots, join);\n"
      << "    bool diverged = false;\n"
      << "    if (i < launch.total && join.failed == 0) {\n"
      << "        wf::Ctx ctx{{0, 0, 0, 0}, launch.error, nullptr, i, 0,\n"
      << "                    static_cast<wf::i32>(join.slot), true, false, join.asked};\n"
      << tid("        ") << "        f" << index << "_" << identifier(fn.name) << "(ctx" << args << ");\n"
      << "        diverged = wf::slot_join_diverged(ctx, join);\n"
      << "    }\n"
      << "    wf::slot_join_end(launch.slots, join, diverged);\n}\n";
}

std::vector<bool> functions_that_print(const ir::Program& p) {
    std::vector<bool> prints(p.functions.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t f = 0; f < p.functions.size(); ++f) {
            bool any = prints[f];
            ir::for_each_node(p.functions[f]->body, [&](const ir::Node& n) {
                any =
                    any || n.kind == ir::NodeKind::Print || (n.kind == ir::NodeKind::Call && prints[n.bits]);
            });
            if (any != prints[f]) prints[f] = changed = true;
        }
    }
    return prints;
}

// Whether the program's code uses deterministic atomics: a reservation or a deterministic
// accumulation in any function, or an entry that sets up either (src/device/deterministic.h on).
bool uses_deterministic_atomics(const ir::Program& p, const plan::ProgramPlan& plan) {
    for (const plan::KernelPlan& k : plan.kernels)
        if (!k.det_targets.empty() || !k.slots.counters.empty()) return true;
    bool any = false;
    for (const auto& fn : p.functions)
        ir::for_each_node(fn->body, [&](const ir::Node& n) {
            any = any || n.kind == ir::NodeKind::Reserve || n.kind == ir::NodeKind::Accumulate;
        });
    return any;
}

// A kernel inlines the whole deterministic accumulation path at up to this many sites (its own
// and its callees', which inline into it); past that, every site of the kernel and of the
// functions it calls is one call to the path's out-of-line copy (wf::accumulate_call). Each
// inlined site costs the host compiler about 0.4 s and NVRTC more, while a call costs a kernel
// with that many sites little beside its memory traffic (issue 37).
constexpr int kInlinedAccumulations = 4;

// Per function: whether its sites call the out-of-line path, because some kernel that runs it
// has more than kInlinedAccumulations sites.
std::vector<bool> functions_calling_accumulations(const ir::Program& p) {
    const size_t n = p.functions.size();
    std::vector<int64_t> sites(n, -1);  // inlined sites, memoized (calls form no cycle)
    std::function<int64_t(size_t)> count = [&](size_t f) -> int64_t {
        if (sites[f] >= 0) return sites[f];
        int64_t total = 0;
        ir::for_each_node(p.functions[f]->body, [&](const ir::Node& node) {
            if (node.kind == ir::NodeKind::Accumulate) ++total;
            if (node.kind == ir::NodeKind::Call) total += count(static_cast<size_t>(node.bits));
        });
        return sites[f] = std::min<int64_t>(total, int64_t{1} << 40);
    };
    std::vector<bool> calls(n, false);
    std::function<void(size_t)> mark = [&](size_t f) {
        if (calls[f]) return;
        calls[f] = true;
        ir::for_each_node(p.functions[f]->body, [&](const ir::Node& node) {
            if (node.kind == ir::NodeKind::Call) mark(static_cast<size_t>(node.bits));
        });
    };
    for (size_t f = 0; f < n; ++f)
        if (p.functions[f]->is_kernel && count(f) > kInlinedAccumulations) mark(f);
    return calls;
}

}  // namespace

Generated emit(const ir::Program& program, const plan::ProgramPlan& plan, const EmitOptions& options) {
    Generated g;
    std::ostringstream s;
    // The name is user text: quoted and escaped, no newline or backslash can end the comment.
    s << "// module " << base::c_string_literal(program.module_name) << "\n";
    for (size_t i = 0; i < program.functions.size(); ++i) s << signature(program, i) << ";\n";
    const std::vector<bool> calls_accumulations = functions_calling_accumulations(program);
    for (size_t i = 0; i < program.functions.size(); ++i) {
        s << "\n" << signature(program, i) << " {\n";
        FunctionEmitter(program, plan, i, options, g, calls_accumulations[i]).body(s);
        s << "}\n";
    }
    // The resolving entries and the fused entries are modules of their own (the functions again,
    // then those entries), each compiled only when a launch needs one of its entries.
    std::ostringstream resolving_module, fused_module;
    resolving_module << s.str();
    fused_module << s.str();
    for (size_t i = 0; i < program.functions.size(); ++i) {
        if (!program.functions[i]->is_kernel) {
            g.entries.emplace_back();
            g.resolving_entries.emplace_back();
            g.fused_entries.emplace_back();
            continue;
        }
        g.entries.push_back("weft_kernel_" + std::to_string(i));
        const plan::KernelPlan* kernel = plan.entry(static_cast<uint32_t>(i));
        WEFT_INTERNAL_CHECK(kernel, "codegen", "kernel '" + program.functions[i]->name + "' has a plan");
        const Entry entry{*kernel, plan.functions[i].variant == plan::Variant::Counting};
        const bool resolving = options.dialect == Dialect::Cuda && entry.resolves_in_kernel();
        g.resolving_entries.push_back(resolving ? g.entries.back() + "_resolving" : "");
        const bool fused = options.dialect == Dialect::Cuda && entry.fuses_passes();
        g.fused_entries.push_back(fused ? g.entries.back() + "_fused" : "");
        s << "\n";
        if (options.dialect == Dialect::Cuda)
            cuda_entry(s, program, entry, i, g.entries.back(), false);
        else
            cpu_entry(s, program, entry, i, g.entries.back(), options);
        if (resolving) {
            resolving_module << "\n";
            cuda_entry(resolving_module, program, entry, i, g.resolving_entries.back(), true);
        }
        if (fused) {
            fused_module << "\n";
            cuda_fused_entry(fused_module, program, entry, i, g.fused_entries.back());
        }
    }
    const auto any = [](const std::vector<std::string>& entries) {
        return std::any_of(entries.begin(), entries.end(), [](const auto& e) { return !e.empty(); });
    };
    if (any(g.resolving_entries)) g.resolving_source = resolving_module.str();
    if (any(g.fused_entries)) g.fused_source = fused_module.str();
    for (const auto& fn : program.functions) g.params.push_back(fn->params.size());
    g.prints = functions_that_print(program);
    g.deterministic = uses_deterministic_atomics(program, plan);
    g.source = s.str();
    return g;
}

const std::string& prelude_for(const Generated& g) {
    return g.deterministic ? prelude() : plain_prelude();
}

}  // namespace weft::codegen
