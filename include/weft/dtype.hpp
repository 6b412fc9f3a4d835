// Element types shared by the kernel language, the IR and the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

/// Everything public in Weft: kernels and functions (Module), arrays, launches, streams, graphs,
/// autodiff and the kernel language.
namespace weft {

/// Float16 is IEEE binary16 and BFloat16 the brain float (float32's top 16 bits); their host
/// types are in weft/half.hpp.
enum class DType : uint8_t {
    Bool,     ///< bool, one byte holding 0 or 1.
    Int32,    ///< int32_t.
    UInt32,   ///< uint32_t.
    Int64,    ///< int64_t.
    UInt64,   ///< uint64_t.
    Float16,  ///< IEEE binary16 (host type weft::float16).
    Float32,  ///< float.
    Float64,  ///< double.
    BFloat16  ///< The brain float (host type weft::bfloat16).
};

/// The type's name as messages print it: "bool", "int32", ..., "float64", "bfloat16".
const char* dtype_name(DType t);
/// Bytes per scalar: 1 for bool, 2 for the halves, 4 or 8 for the others.
size_t dtype_size(DType t);
/// Whether t is a floating type: float16, bfloat16, float32 or float64.
bool is_float(DType t);
/// Whether t is one of the four integer types (bool is neither integer nor float).
bool is_integer(DType t);
/// Whether t holds negative values: int32, int64 and the floating types.
bool is_signed(DType t);
/// Whether t is float16 or bfloat16.
bool is_half(DType t);

/// DTypeOf<T>::value is the DType of the element type T; weft/half.hpp adds weft::float16 and
/// weft::bfloat16.
template <class T>
struct DTypeOf;
/// bool is DType::Bool.
template <>
struct DTypeOf<bool> {
    static constexpr DType value = DType::Bool;  ///< DType::Bool.
};
/// int32_t is DType::Int32.
template <>
struct DTypeOf<int32_t> {
    static constexpr DType value = DType::Int32;  ///< DType::Int32.
};
/// uint32_t is DType::UInt32.
template <>
struct DTypeOf<uint32_t> {
    static constexpr DType value = DType::UInt32;  ///< DType::UInt32.
};
/// int64_t is DType::Int64.
template <>
struct DTypeOf<int64_t> {
    static constexpr DType value = DType::Int64;  ///< DType::Int64.
};
/// uint64_t is DType::UInt64.
template <>
struct DTypeOf<uint64_t> {
    static constexpr DType value = DType::UInt64;  ///< DType::UInt64.
};
/// float is DType::Float32.
template <>
struct DTypeOf<float> {
    static constexpr DType value = DType::Float32;  ///< DType::Float32.
};
/// double is DType::Float64.
template <>
struct DTypeOf<double> {
    static constexpr DType value = DType::Float64;  ///< DType::Float64.
};

/// A scalar element type: one with a DType (bool, the integers, the floats, the halves).
template <class T>
concept ElementType = requires {
    DTypeOf<T>::value;
};

/// The DType of element type T (`dtype_of<float>` is DType::Float32).
template <ElementType T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace weft
