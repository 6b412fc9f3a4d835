// The host types' conversions: the device prelude's integer code, compiled into the library.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
// clang-format on

#include "weft/half.hpp"

namespace weft::detail {

namespace {

template <class H>
uint16_t from_integer(bool negative, uint64_t magnitude) {
    return static_cast<uint16_t>(wf::round_to_format<wf::Format<H>>(negative, magnitude, 0, false));
}

}  // namespace

uint16_t float16_from_double(double x) {
    return wf::f16(x).bits;
}
uint16_t float16_from_integer(bool negative, uint64_t magnitude) {
    return from_integer<wf::f16>(negative, magnitude);
}
float float16_to_float(uint16_t bits) {
    return wf::to_float(wf::f16::from_bits(bits));
}
uint16_t bfloat16_from_double(double x) {
    return wf::bf16(x).bits;
}
uint16_t bfloat16_from_integer(bool negative, uint64_t magnitude) {
    return from_integer<wf::bf16>(negative, magnitude);
}
float bfloat16_to_float(uint16_t bits) {
    return wf::to_float(wf::bf16::from_bits(bits));
}

}  // namespace weft::detail
