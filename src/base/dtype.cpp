// Properties of element types and names of operations.
#include "weft/dtype.hpp"

#include "weft/detail/ops.hpp"

namespace weft {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::Bool: return "bool";
        case DType::Int32: return "int32";
        case DType::UInt32: return "uint32";
        case DType::Int64: return "int64";
        case DType::UInt64: return "uint64";
        case DType::Float16: return "float16";
        case DType::Float32: return "float32";
        case DType::Float64: return "float64";
        case DType::BFloat16: return "bfloat16";
    }
    return "?";
}

size_t dtype_size(DType t) {
    switch (t) {
        case DType::Bool: return 1;
        case DType::Float16:
        case DType::BFloat16: return 2;
        case DType::Int32:
        case DType::UInt32:
        case DType::Float32: return 4;
        case DType::Int64:
        case DType::UInt64:
        case DType::Float64: return 8;
    }
    return 0;
}

bool is_float(DType t) {
    return is_half(t) || t == DType::Float32 || t == DType::Float64;
}

bool is_half(DType t) {
    return t == DType::Float16 || t == DType::BFloat16;
}

bool is_integer(DType t) {
    return t == DType::Int32 || t == DType::UInt32 || t == DType::Int64 || t == DType::UInt64;
}

bool is_signed(DType t) {
    return t == DType::Int32 || t == DType::Int64 || is_float(t);
}

namespace detail {

#define WEFT_NAME_CASE(name, text) \
    case name: return text;
const char* op_name(UnaryOp op) {
    using enum UnaryOp;
    switch (op) { WEFT_UNARY_OPS(WEFT_NAME_CASE) }
    return "?";
}
const char* op_name(BinaryOp op) {
    using enum BinaryOp;
    switch (op) { WEFT_BINARY_OPS(WEFT_NAME_CASE) }
    return "?";
}
const char* op_name(MathOp op) {
    using enum MathOp;
    switch (op) { WEFT_MATH_OPS(WEFT_NAME_CASE) }
    return "?";
}
const char* op_name(AtomicOp op) {
    using enum AtomicOp;
    switch (op) { WEFT_ATOMIC_OPS(WEFT_NAME_CASE) }
    return "?";
}
#undef WEFT_NAME_CASE

}  // namespace detail
}  // namespace weft
