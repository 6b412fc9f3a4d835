// Element types shared by the kernel language, the IR and the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace weft {

/// Float16 is IEEE binary16 and BFloat16 the brain float (float32's top 16 bits); their host
/// types are in weft/half.hpp.
enum class DType : uint8_t { Bool, Int32, UInt32, Int64, UInt64, Float16, Float32, Float64, BFloat16 };

const char* dtype_name(DType t);
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_integer(DType t);  // bool is neither integer nor float
bool is_signed(DType t);
bool is_half(DType t);  // float16 or bfloat16

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
    static constexpr DType value = DType::Bool;
};
template <>
struct DTypeOf<int32_t> {
    static constexpr DType value = DType::Int32;
};
template <>
struct DTypeOf<uint32_t> {
    static constexpr DType value = DType::UInt32;
};
template <>
struct DTypeOf<int64_t> {
    static constexpr DType value = DType::Int64;
};
template <>
struct DTypeOf<uint64_t> {
    static constexpr DType value = DType::UInt64;
};
template <>
struct DTypeOf<float> {
    static constexpr DType value = DType::Float32;
};
template <>
struct DTypeOf<double> {
    static constexpr DType value = DType::Float64;
};

template <class T>
concept ElementType = requires {
    DTypeOf<T>::value;
};

template <ElementType T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace weft
