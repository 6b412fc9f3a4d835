// Operation codes shared by the tracer API and the IR (one list, used by both).
#pragma once

#include <cstdint>

namespace weft::detail {

#define WEFT_UNARY_OPS(X) X(Neg, "neg") X(Not, "not") X(BitNot, "bitnot")
#define WEFT_BINARY_OPS(X)                                                                                  \
    X(Add, "add")                                                                                           \
    X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(Mod, "mod") X(Min, "min") X(Max, "max") X(Pow, "pow")       \
        X(BitAnd, "bitand") X(BitOr, "bitor") X(BitXor, "bitxor") X(Shl, "shl") X(Shr, "shr") X(And, "and") \
            X(Or, "or") X(Eq, "eq") X(Ne, "ne") X(Lt, "lt") X(Le, "le") X(Gt, "gt") X(Ge, "ge")
#define WEFT_MATH_OPS(X)                                                                        \
    X(Abs, "abs")                                                                               \
    X(Sqrt, "sqrt") X(Floor, "floor") X(Ceil, "ceil") X(Sin, "sin") X(Cos, "cos") X(Exp, "exp") \
        X(Log, "log")
#define WEFT_ATOMIC_OPS(X)                                                                            \
    X(Add, "add")                                                                                     \
    X(Sub, "sub") X(Min, "min") X(Max, "max") X(Cas, "cas") X(Exch, "exch") X(And, "and") X(Or, "or") \
        X(Xor, "xor")

#define WEFT_ENUM_ENTRY(name, text) name,
enum class UnaryOp : uint8_t { WEFT_UNARY_OPS(WEFT_ENUM_ENTRY) };
enum class BinaryOp : uint8_t { WEFT_BINARY_OPS(WEFT_ENUM_ENTRY) };
enum class MathOp : uint8_t { WEFT_MATH_OPS(WEFT_ENUM_ENTRY) };
enum class AtomicOp : uint8_t { WEFT_ATOMIC_OPS(WEFT_ENUM_ENTRY) };
#undef WEFT_ENUM_ENTRY

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
const char* op_name(MathOp op);
const char* op_name(AtomicOp op);

inline bool is_comparison(BinaryOp op) {
    return op >= BinaryOp::Eq;
}

}  // namespace weft::detail
