// The adjoint rules of Copy, Unary, Binary, Math, Select and Cast, one case per operation.
#include "autodiff/adjoint_rules.hpp"

namespace weft::autodiff {

namespace {

using ir::BinaryOp;
using ir::MathOp;

// d(result)/d(a) * g and d(result)/d(b) * g for result = op(a, b).
void binary(BinaryOp op, ir::ValueId a, ir::ValueId b, ir::ValueId g, RuleContext& c) {
    Emitter& e = c.e;
    auto to_a = [&](auto f) {
        if (c.wants(a)) c.add(a, f());
    };
    auto to_b = [&](auto f) {
        if (c.wants(b)) c.add(b, f());
    };
    auto A = [&] { return c.primal(a); };
    auto B = [&] { return c.primal(b); };
    switch (op) {
        case BinaryOp::Add:
            to_a([&] { return g; });
            to_b([&] { return g; });
            return;
        case BinaryOp::Sub:
            to_a([&] { return g; });
            to_b([&] { return e.unary(ir::UnaryOp::Neg, g); });
            return;
        case BinaryOp::Mul:
            to_a([&] { return e.binary(BinaryOp::Mul, g, B()); });
            to_b([&] { return e.binary(BinaryOp::Mul, g, A()); });
            return;
        case BinaryOp::Div:  // a / b: g / b and -g * a / (b * b)
            to_a([&] { return e.binary(BinaryOp::Div, g, B()); });
            to_b([&] {
                const ir::ValueId q = e.binary(BinaryOp::Div, e.binary(BinaryOp::Mul, g, A()), B());
                return e.unary(ir::UnaryOp::Neg, e.binary(BinaryOp::Div, q, B()));
            });
            return;
        case BinaryOp::Mod: {  // fmod(a, b) = a - trunc(a / b) * b: g and -g * trunc(a / b)
            to_a([&] { return g; });
            to_b([&] {
                const ir::ValueId q = e.binary(BinaryOp::Div, A(), B());
                const ir::ValueId negative = e.binary(BinaryOp::Lt, q, e.zero(e.type(q).dtype));
                const ir::ValueId t = e.select(negative, e.math(MathOp::Ceil, q), e.math(MathOp::Floor, q));
                return e.unary(ir::UnaryOp::Neg, e.binary(BinaryOp::Mul, g, t));
            });
            return;
        }
        case BinaryOp::Min:
        case BinaryOp::Max: {  // the operand that was chosen gets g (a, on a tie)
            const ir::ValueId first = e.binary(op == BinaryOp::Min ? BinaryOp::Le : BinaryOp::Ge, A(), B());
            const ir::ValueId none = e.zero(e.type(g).dtype);
            to_a([&] { return e.select(first, g, none); });
            to_b([&] { return e.select(first, none, g); });
            return;
        }
        case BinaryOp::Pow:  // a^b: g * b * a^(b - 1) and g * a^b * log(a)
            to_a([&] {
                const ir::ValueId one = e.one(e.type(g).dtype);
                const ir::ValueId p = e.binary(BinaryOp::Pow, A(), e.binary(BinaryOp::Sub, B(), one));
                return e.binary(BinaryOp::Mul, g, e.binary(BinaryOp::Mul, B(), p));
            });
            to_b([&] {
                const ir::ValueId p = e.binary(BinaryOp::Pow, A(), B());
                return e.binary(BinaryOp::Mul, g, e.binary(BinaryOp::Mul, p, e.math(MathOp::Log, A())));
            });
            return;
        case BinaryOp::BitAnd:
        case BinaryOp::BitOr:
        case BinaryOp::BitXor:
        case BinaryOp::Shl:
        case BinaryOp::Shr:
        case BinaryOp::And:
        case BinaryOp::Or:
        case BinaryOp::Eq:
        case BinaryOp::Ne:
        case BinaryOp::Lt:
        case BinaryOp::Le:
        case BinaryOp::Gt:
        case BinaryOp::Ge: return;  // integer or bool results: no derivative
    }
}

// d(op(a))/d(a) * g.
void math(MathOp op, ir::ValueId a, ir::ValueId g, RuleContext& c) {
    if (!c.wants(a)) return;
    Emitter& e = c.e;
    const ir::ValueId A = c.primal(a);
    switch (op) {
        case MathOp::Abs:  // sign(a) * g (g at 0)
            c.add(a, e.select(e.binary(BinaryOp::Lt, A, e.zero(e.type(A).dtype)),
                              e.unary(ir::UnaryOp::Neg, g), g));
            return;
        case MathOp::Sqrt: {  // g / (2 sqrt(a))
            const ir::ValueId r = e.math(MathOp::Sqrt, A);
            c.add(a, e.binary(BinaryOp::Div, g, e.binary(BinaryOp::Add, r, r)));
            return;
        }
        case MathOp::Floor:
        case MathOp::Ceil: return;  // piecewise constant: zero almost everywhere
        case MathOp::Sin: c.add(a, e.binary(BinaryOp::Mul, g, e.math(MathOp::Cos, A))); return;
        case MathOp::Cos:
            c.add(a, e.unary(ir::UnaryOp::Neg, e.binary(BinaryOp::Mul, g, e.math(MathOp::Sin, A))));
            return;
        case MathOp::Exp: c.add(a, e.binary(BinaryOp::Mul, g, e.math(MathOp::Exp, A))); return;
        case MathOp::Log: c.add(a, e.binary(BinaryOp::Div, g, A)); return;
    }
}

}  // namespace

void scalar_adjoint(const ir::Function& fn, const ir::Node& n, ir::ValueId g, RuleContext& c) {
    Emitter& e = c.e;
    switch (n.kind) {
        case ir::NodeKind::Copy:
            if (c.wants(n.args[0])) c.add(n.args[0], g);
            return;
        case ir::NodeKind::Unary:
            if (n.unary_op() == ir::UnaryOp::Neg && c.wants(n.args[0]))
                c.add(n.args[0], e.unary(ir::UnaryOp::Neg, g));
            return;  // not and bitnot: bool and integer results
        case ir::NodeKind::Binary: return binary(n.binary_op(), n.args[0], n.args[1], g, c);
        case ir::NodeKind::Math: return math(n.math_op(), n.args[0], g, c);
        case ir::NodeKind::Select: {
            const ir::ValueId cond = c.primal(n.args[0]);
            const ir::ValueId none = e.zero(e.type(g).dtype);
            if (c.wants(n.args[1])) c.add(n.args[1], e.select(cond, g, none));
            if (c.wants(n.args[2])) c.add(n.args[2], e.select(cond, none, g));
            return;
        }
        case ir::NodeKind::Cast:  // between float types the adjoint converts back; from an integer: none
            if (c.wants(n.args[0])) c.add(n.args[0], e.cast(fn.type_of(n.args[0]).dtype, g));
            return;
        default: return;
    }
}

}  // namespace weft::autodiff
