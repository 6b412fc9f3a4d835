// Device printing: weft::print("x = %f\n", x), printf-style, checked while tracing.
#pragma once

#include <string_view>

#include "weft/scalar.hpp"

namespace weft {

/// A format string with the user's source position. Conversions: %d %i %u %x %X %o %c with
/// an optional l/ll length for integers and bools; %f %e %g %a (upper case too) for floats; %%.
struct Format {
    /// The format string.
    std::string_view text;
    /// The user's source position, for errors.
    detail::Loc loc;
    /// Implicitly, from a string literal: `weft::print("x = %f\n", x)` (the text must outlive tracing).
    Format(const char* t, std::source_location s = std::source_location::current())
        : text(t), loc(detail::Loc::from(s)) {}
};

namespace detail {

template <class X>
Ref print_arg(const X& x, Loc loc) {
    if constexpr (std::is_arithmetic_v<X>) {
        return emit_const(dtype_of<X>, literal_bits(x), loc);
    } else {
        return Access::ref(static_cast<const scalar_of_t<X>&>(x));
    }
}

}  // namespace detail

/// printf from every thread that runs it: `args` are traced scalars or C++ numbers, one per
/// conversion of `format`; a mismatch is a weft::Error naming the line, while tracing.
template <class... X>
void print(const Format& format, const X&... args) {
    detail::emit_print(format.text, {detail::print_arg(args, format.loc)...}, format.loc);
}

}  // namespace weft
