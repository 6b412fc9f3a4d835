// Host types for half-precision elements: weft::float16 (IEEE binary16) and weft::bfloat16.
//
// Each holds the 16 bits a kernel's element holds. Construction from a number rounds once to
// nearest even (a NaN stays a quiet NaN, an overflow is infinity, subnormals are kept);
// conversion to float is exact. The conversions are the same integer code the generated kernels
// use, so the host and every device agree bit for bit.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "weft/dtype.hpp"

namespace weft {

namespace detail {
uint16_t float16_from_double(double x);
uint16_t float16_from_integer(bool negative, uint64_t magnitude);
float float16_to_float(uint16_t bits);
uint16_t bfloat16_from_double(double x);
uint16_t bfloat16_from_integer(bool negative, uint64_t magnitude);
float bfloat16_to_float(uint16_t bits);

template <std::integral I>
constexpr bool negative_of(I x) {
    if constexpr (std::is_signed_v<I>)
        return x < 0;
    else
        return false;
}
template <std::integral I>
constexpr uint64_t magnitude_of(I x) {
    return negative_of(x) ? uint64_t(0) - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
}
}  // namespace detail

#define WEFT_HOST_HALF(name, dtype)                                                                 \
    struct name {                                                                                   \
        /** The 16 bits, as a kernel's element holds them. */                                       \
        uint16_t bits = 0;                                                                          \
                                                                                                    \
        /** Zero. */                                                                                \
        name() = default;                                                                           \
        /** From a float or double: one rounding (a float widens to double exactly). */             \
        explicit name(double x) : bits(detail::name##_from_double(x)) {}                            \
        /** From an integer: one rounding. */                                                       \
        template <std::integral I>                                                                  \
        explicit name(I x)                                                                          \
            : bits(detail::name##_from_integer(detail::negative_of(x), detail::magnitude_of(x))) {} \
        /** The value whose bits are `b`. */                                                        \
        static name from_bits(uint16_t b) {                                                         \
            name h;                                                                                 \
            h.bits = b;                                                                             \
            return h;                                                                               \
        }                                                                                           \
        /** The value as a float (exact). */                                                        \
        operator float() const { return detail::name##_to_float(bits); }                            \
    };                                                                                              \
    /** The half type's DType. */                                                                   \
    template <>                                                                                     \
    struct DTypeOf<name> {                                                                          \
        /** The half type's DType. */                                                               \
        static constexpr DType value = DType::dtype;                                                \
    };

/// The host type of a float16 element: IEEE binary16 (1 sign, 5 exponent, 10 fraction bits).
WEFT_HOST_HALF(float16, Float16)
/// The host type of a bfloat16 element: float32's top 16 bits (1 sign, 8 exponent, 7 fraction bits).
WEFT_HOST_HALF(bfloat16, BFloat16)
#undef WEFT_HOST_HALF

}  // namespace weft
