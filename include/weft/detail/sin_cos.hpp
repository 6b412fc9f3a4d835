// sin and cos built of + - * / floor and select, for composite builtins whose bits must be the
// same on the CPU and GPUs (the device libraries' sin and cos may differ in the last bit).
#pragma once

#include <array>
#include <cmath>
#include <utility>

#include "weft/detail/composite.hpp"

namespace weft::detail {

// x rounded toward zero to `bits` significant bits (so k * part is exact for small integers k).
inline long double leading_bits(long double x, int bits) {
    int e = 0;
    std::frexp(x, &e);
    return std::ldexp(std::trunc(std::ldexp(x, bits - e)), e - bits);
}

// {sin(x), cos(x)}: x is reduced to r in [-pi/4, pi/4] by the nearest multiple k of pi/2, with
// pi/2 split into three parts whose products with k are exact (Cody and Waite), then Taylor
// polynomials in r are evaluated by Horner's rule and k mod 4 picks the signs. Accurate while
// |x| is below about 2^(p/2) for a p-bit significand (4096 for float32).
template <ElementType T>
std::pair<Ref, Ref> sin_cos(Ref x, Loc loc) {
    constexpr int digits = sizeof(T) <= 2 ? 11 : sizeof(T) <= 4 ? 24 : 53;
    constexpr int sin_terms = sizeof(T) <= 4 ? 6 : 9;  // r, r^3, ...: the next term is below an ulp
    const long double half_pi = 1.570796326794896619231321691639751442L;
    const long double p1 = leading_bits(half_pi, digits / 2);
    const long double p2 = leading_bits(half_pi - p1, digits / 2);
    const long double p3 = half_pi - p1 - p2;
    auto c = [&](long double v) { return constant<T>(static_cast<double>(v), loc); };

    const Ref k = emit_math(MathOp::Floor,
                            add(mul(x, c(0.6366197723675813430755350534900574L), loc), c(0.5L), loc), loc);
    const Ref r = sub(sub(sub(x, mul(k, c(p1), loc), loc), mul(k, c(p2), loc), loc), mul(k, c(p3), loc), loc);
    const Ref r2 = mul(r, r, loc);
    // sin r = r (1 - r^2/3! + r^4/5! - ...), cos r = 1 - r^2/2! + r^4/4! - ...
    auto series = [&](int first, int terms) {
        std::array<long double, 12> coef{};
        long double f = 1;
        for (int n = 1; n <= first; ++n) f *= n;
        for (int j = 0; j < terms; ++j) {
            coef[j] = (j % 2 ? -1 : 1) / f;
            f *= (first + 2 * j + 1) * (first + 2 * j + 2);
        }
        Ref p = c(coef[terms - 1]);
        for (int j = terms - 2; j >= 0; --j) p = add(mul(p, r2, loc), c(coef[j]), loc);
        return p;
    };
    const Ref s = mul(r, series(1, sin_terms), loc);
    const Ref co = series(0, sin_terms + 1);
    // The quadrant k mod 4, computed in T (k is an integer there; no conversion to an int type).
    const Ref quadrant = sub(k, mul(c(4), emit_math(MathOp::Floor, mul(k, c(0.25L), loc), loc), loc), loc);
    auto is = [&](int q) { return emit_binary(BinaryOp::Eq, quadrant, c(q), loc); };
    auto pick = [&](Ref q0, Ref q1, Ref q2, Ref q3) {
        return emit_select(is(0), q0, emit_select(is(1), q1, emit_select(is(2), q2, q3, loc), loc), loc);
    };
    const Ref ns = neg(s, loc), nc = neg(co, loc);
    return {pick(s, co, ns, nc), pick(co, ns, nc, s)};
}

}  // namespace weft::detail
