// Scalar kernel code on every element type (operators, casts, math builtins) against host references.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;

// The device under test: the CPU for the "cpu" label, the GPU for the "gpu" label.
weft::Device dev() {
    return weft::test::test_device();
}

// One module holds every kernel of this file, so it is compiled once (and then cached).
weft::Module& module() {
    static weft::Module m{"scalar_ops"};
    return m;
}

template <class T>
std::string type_name() {
    return weft::dtype_name(weft::dtype_of<T>);
}

// ---------------------------------------------------------------------------------------------
// Inputs.

template <class T>
std::vector<T> edge_values() {
    using L = std::numeric_limits<T>;
    if constexpr (std::is_same_v<T, bool>) {
        return {false, true};
    } else if constexpr (std::is_integral_v<T>) {
        std::vector<T> v = {0, 1, 2, 3, 7, 100, 12345, L::max(), T(L::max() - 1), T(L::max() / 2)};
        if constexpr (std::is_signed_v<T>) {
            for (T x : {L::min(), T(L::min() + 1), T(L::min() / 2), T(-1), T(-2), T(-7), T(-100), T(-12345)})
                v.push_back(x);
        } else {
            v.push_back(T(L::max() / 2 + 1));  // the top bit alone
        }
        return v;
    } else {
        return {T(0),
                T(-0.0),
                T(1),
                T(-1),
                T(0.5),
                T(-0.5),
                T(1.5),
                T(2.5),
                T(-2.5),
                T(3),
                T(100),
                T(0.1),
                T(1e-3),
                T(1e10),
                T(-1e10),
                T(123.456),
                L::denorm_min(),
                L::min(),
                L::max(),
                L::lowest(),
                L::epsilon(),
                L::infinity(),
                -L::infinity(),
                L::quiet_NaN(),
                L::signaling_NaN(),
                std::numbers::pi_v<T>,
                T(-std::numbers::e_v<T>)};
    }
}

template <class T>
T random_value(std::mt19937_64& rng) {
    if constexpr (std::is_same_v<T, bool>) {
        return (rng() & 1) != 0;
    } else if constexpr (std::is_integral_v<T>) {
        // Half the values small (where most arithmetic lands), half anywhere in the range.
        if (rng() & 1) return static_cast<T>(std::uniform_int_distribution<int64_t>(-1000, 1000)(rng));
        return static_cast<T>(rng());
    } else {
        switch (rng() % 3) {
            case 0: return std::uniform_real_distribution<T>(-100, 100)(rng);
            case 1: return std::ldexp(std::uniform_real_distribution<T>(-1, 1)(rng), int(rng() % 120) - 60);
            default: {
                // Any bit pattern: subnormals, huge values, infinities and NaNs with payloads.
                using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
                return std::bit_cast<T>(static_cast<Bits>(rng()));
            }
        }
    }
}

// Every edge value, then random values.
template <class T>
std::vector<T> unary_inputs(size_t random_count = 400) {
    std::vector<T> v = edge_values<T>();
    std::mt19937_64 rng(0x5eed0001 + sizeof(T));
    for (size_t i = 0; i < random_count; ++i) v.push_back(random_value<T>(rng));
    return v;
}

// Every pair of edge values, then random pairs.
template <class T>
std::pair<std::vector<T>, std::vector<T>> binary_inputs(size_t random_count = 400) {
    std::vector<T> a, b;
    for (T x : edge_values<T>())
        for (T y : edge_values<T>()) {
            a.push_back(x);
            b.push_back(y);
        }
    std::mt19937_64 rng(0x5eed0002 + sizeof(T));
    for (size_t i = 0; i < random_count; ++i) {
        a.push_back(random_value<T>(rng));
        b.push_back(random_value<T>(rng));
    }
    return {a, b};
}

// ---------------------------------------------------------------------------------------------
// Host references. Signed integer arithmetic wraps in kernels (two's complement, as on GPUs);
// the host computes it in the unsigned type so that it has no undefined behaviour.

template <class T>
using Unsigned = std::make_unsigned_t<T>;

template <class T>
T h_add(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(Unsigned<T>(a) + Unsigned<T>(b));
    else
        return a + b;
}
template <class T>
T h_sub(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(Unsigned<T>(a) - Unsigned<T>(b));
    else
        return a - b;
}
template <class T>
T h_mul(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(Unsigned<T>(a) * Unsigned<T>(b));
    else
        return a * b;
}
template <class T>
T h_neg(T a) {
    if constexpr (std::is_integral_v<T>)
        return T(Unsigned<T>(0) - Unsigned<T>(a));
    else
        return -a;
}
// Float min/max are minNum/maxNum with every NaN quiet: a NaN operand, signaling or not, yields
// the other operand (the C library's fmin gives a NaN for a signaling one).
template <class T>
T h_min(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        return std::isnan(a) ? b : std::isnan(b) ? a : std::fmin(a, b);
    else
        return b < a ? b : a;
}
template <class T>
T h_max(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        return std::isnan(a) ? b : std::isnan(b) ? a : std::fmax(a, b);
    else
        return a < b ? b : a;
}
template <class T>
T h_abs(T a) {
    if constexpr (std::is_floating_point_v<T>)
        return std::fabs(a);
    else if constexpr (std::is_signed_v<T>)
        return a < 0 ? h_neg(a) : a;
    else
        return a;
}

template <class T>
struct ClampBounds {
    static constexpr T lo = std::is_signed_v<T> ? T(-100) : T(2);
    static constexpr T hi = T(1000);
};
template <>
struct ClampBounds<float> {
    static constexpr float lo = -1.5f;
    static constexpr float hi = 2.5f;
};
template <>
struct ClampBounds<double> {
    static constexpr double lo = -1.5;
    static constexpr double hi = 2.5;
};

// ---------------------------------------------------------------------------------------------
// Comparison of results.

template <class T>
std::string show(T v) {
    std::ostringstream s;
    if constexpr (std::is_floating_point_v<T>) {
        s.precision(std::numeric_limits<T>::max_digits10);
        s << v << " (" << std::hexfloat << v << ")";
    } else {
        s << +v;
    }
    return s.str();
}

// Exact: the same bits, except that any NaN matches any NaN.
template <class T>
bool same_bits(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) && std::isnan(b)) return true;
        return std::memcmp(&a, &b, sizeof(T)) == 0;
    } else {
        return a == b;
    }
}

// Exact value: like same_bits, but -0 equals +0 (minNum/maxNum may return either zero).
template <class T>
bool same_value(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) && std::isnan(b)) return true;
        return a == b;
    } else {
        return a == b;
    }
}

// The distance in units in the last place between two floats of one sign.
template <class T>
uint64_t ulps(T a, T b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
    if (a == b) return 0;
    if (std::isinf(a) || std::isinf(b) || std::signbit(a) != std::signbit(b)) return UINT64_MAX;
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const Bits x = std::bit_cast<Bits>(a), y = std::bit_cast<Bits>(b);
    return x > y ? x - y : y - x;
}

// Checks got[i] against want[i] for every i; reports the first few mismatches with their inputs.
template <class T, class Eq, class Describe>
void expect_all(const std::string& what, const std::vector<T>& got, const std::vector<T>& want, Eq eq,
                Describe describe_input) {
    ASSERT_EQ(got.size(), want.size()) << what;
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (eq(got[i], want[i])) continue;
        if (++bad <= 5)
            ADD_FAILURE() << what << " at " << i << " (" << describe_input(i) << "): got " << show<T>(got[i])
                          << ", want " << show<T>(want[i]);
    }
    EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " results differ";
}

// Row `row` of a 2-D result of shape {rows, n}.
template <class T>
std::vector<T> row(const std::vector<T>& all, size_t row, size_t n) {
    return std::vector<T>(all.begin() + static_cast<ptrdiff_t>(row * n),
                          all.begin() + static_cast<ptrdiff_t>((row + 1) * n));
}

template <class T, class F>
std::vector<T> map2(const std::vector<T>& a, const std::vector<T>& b, F f) {
    std::vector<T> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(static_cast<T>(f(a[i], b[i])));
    return out;
}
template <class T, class F>
std::vector<T> map1(const std::vector<T>& a, F f) {
    std::vector<T> out;
    for (T x : a) out.push_back(static_cast<T>(f(x)));
    return out;
}

// ---------------------------------------------------------------------------------------------
// Kernels. All are defined before main, so every test process builds the same module.

constexpr int kArithOps = 10;
constexpr int kDivOps = 4;
constexpr int kCompareOps = 6;
constexpr int kCompoundOps = 5;
constexpr int kBitOps = 8;
constexpr int kMathOps = 10;
constexpr int kBoolOps = 11;

template <class T>
struct NumericKernels {
    using A = Array<T>;
    using A2 = Array<T, 2>;
    weft::Kernel<A, A> copy;
    weft::Kernel<A, A, A2> arith;
    weft::Kernel<A, A, A2> divmod;
    weft::Kernel<A, A, Array<bool, 2>> compare;
    weft::Kernel<A, A, A2> compound;

    NumericKernels()
        : copy(module().kernel("copy_" + type_name<T>(), {"a", "out"},
                               [](A a, A out) {
                                   auto i = weft::tid();
                                   out[i] = a[i];
                               })),
          arith(module().kernel("arith_" + type_name<T>(), {"a", "b", "out"},
                                [](A a, A b, A2 out) {
                                    auto i = weft::tid();
                                    auto x = a[i];
                                    auto y = b[i];
                                    out(0, i) = x + y;
                                    out(1, i) = x - y;
                                    out(2, i) = x * y;
                                    out(3, i) = -x;
                                    out(4, i) = weft::min(x, y);
                                    out(5, i) = weft::max(x, y);
                                    out(6, i) = weft::abs(x);
                                    out(7, i) = weft::select(x < y, y, x);
                                    out(8, i) = weft::clamp(x, ClampBounds<T>::lo, ClampBounds<T>::hi);
                                    out(9, i) = 1 + x * 2;  // literals on either side
                                })),
          divmod(module().kernel("divmod_" + type_name<T>(), {"a", "b", "out"},
                                 [](A a, A b, A2 out) {
                                     auto i = weft::tid();
                                     auto x = a[i];
                                     auto y = b[i];
                                     out(0, i) = x / y;
                                     out(1, i) = x % y;
                                     weft::Scalar<T> q = x;
                                     q /= y;
                                     out(2, i) = q;
                                     weft::Scalar<T> r = x;
                                     r %= y;
                                     out(3, i) = r;
                                 })),
          compare(module().kernel("compare_" + type_name<T>(), {"a", "b", "out"},
                                  [](A a, A b, Array<bool, 2> out) {
                                      auto i = weft::tid();
                                      auto x = a[i];
                                      auto y = b[i];
                                      out(0, i) = x == y;
                                      out(1, i) = x != y;
                                      out(2, i) = x < y;
                                      out(3, i) = x <= y;
                                      out(4, i) = x > y;
                                      out(5, i) = x >= y;
                                  })),
          compound(module().kernel("compound_" + type_name<T>(), {"a", "b", "out"}, [](A a, A b, A2 out) {
              auto i = weft::tid();
              weft::Scalar<T> acc = a[i];
              acc += b[i];
              out(0, i) = acc;
              acc -= 3;
              out(1, i) = acc;
              acc *= b[i];
              out(2, i) = acc;
              acc = a[i];
              out(3, i) = acc;
              acc = 7;
              out(4, i) = acc;
          })) {}
};

template <class T>
struct IntegerKernels {
    using A = Array<T>;
    weft::Kernel<A, A, A, Array<T, 2>> bits;

    IntegerKernels()
        : bits(module().kernel("bits_" + type_name<T>(), {"a", "b", "shift", "out"},
                               [](A a, A b, A shift, Array<T, 2> out) {
                                   auto i = weft::tid();
                                   auto x = a[i];
                                   auto y = b[i];
                                   auto s = shift[i];
                                   out(0, i) = x & y;
                                   out(1, i) = x | y;
                                   out(2, i) = x ^ y;
                                   out(3, i) = ~x;
                                   out(4, i) = x << s;
                                   out(5, i) = x >> s;
                                   weft::Scalar<T> acc = x;
                                   acc &= y;
                                   acc |= 5;
                                   acc ^= x;
                                   acc <<= s;
                                   out(6, i) = acc;
                                   acc >>= s;
                                   out(7, i) = acc;
                               })) {}
};

template <class T>
struct FloatKernels {
    using A = Array<T>;
    weft::Kernel<A, A, Array<T, 2>> math;

    FloatKernels()
        : math(module().kernel("math_" + type_name<T>(), {"a", "b", "out"}, [](A a, A b, Array<T, 2> out) {
              auto i = weft::tid();
              auto x = a[i];
              auto y = b[i];
              out(0, i) = weft::sqrt(x);
              out(1, i) = weft::floor(x);
              out(2, i) = weft::ceil(x);
              out(3, i) = weft::abs(x);
              out(4, i) = weft::sin(x);
              out(5, i) = weft::cos(x);
              out(6, i) = weft::exp(x);
              out(7, i) = weft::log(x);
              out(8, i) = weft::pow(x, y);
              out(9, i) = weft::pow(x, 2);
          })) {}
};

struct BoolKernels {
    weft::Kernel<Array<bool>, Array<bool>, Array<bool, 2>> logic;

    BoolKernels()
        : logic(module().kernel("logic_bool", {"a", "b", "out"},
                                [](Array<bool> a, Array<bool> b, Array<bool, 2> out) {
                                    auto i = weft::tid();
                                    auto x = a[i];
                                    auto y = b[i];
                                    out(0, i) = !x;
                                    out(1, i) = x && y;
                                    out(2, i) = x || y;
                                    out(3, i) = x == y;
                                    out(4, i) = x != y;
                                    out(5, i) = x & y;
                                    out(6, i) = x | y;
                                    out(7, i) = x ^ y;
                                    out(8, i) = weft::select(x, y, !y);
                                    weft::Bool flip = x;
                                    weft::if_(y, [&] { flip = !flip; });
                                    out(9, i) = flip;
                                    out(10, i) = x;
                                })) {}
};

template <class S, class D>
using CastKernel = weft::Kernel<Array<S>, Array<D>, Array<D>>;

template <class S, class D>
CastKernel<S, D> make_cast_kernel() {
    return module().kernel("cast_" + type_name<S>() + "_to_" + type_name<D>(), {"a", "via_cast", "via_ctor"},
                           [](Array<S> a, Array<D> via_cast, Array<D> via_ctor) {
                               auto i = weft::tid();
                               auto x = a[i];
                               via_cast[i] = weft::cast<D>(x);
                               via_ctor[i] = weft::Scalar<D>(x);
                           });
}

using AllTypes = std::tuple<bool, int32_t, uint32_t, int64_t, uint64_t, float, double>;

template <class S, class Targets>
struct CastKernelsFrom;
template <class S, class... D>
struct CastKernelsFrom<S, std::tuple<D...>> {
    std::tuple<CastKernel<S, D>...> kernels{make_cast_kernel<S, D>()...};
};

// Stores every edge value of T as a literal (the host loop runs while tracing: one constant each).
template <class T>
weft::Kernel<Array<T>> make_literal_kernel() {
    return module().kernel("literals_" + type_name<T>(), {"out"}, [](Array<T> out) {
        const std::vector<T> values = edge_values<T>();
        for (size_t k = 0; k < values.size(); ++k) out[static_cast<int64_t>(k)] = values[k];
    });
}

// Definition order is fixed, so every test process traces the same module.
const NumericKernels<int32_t> kNumericI32;
const NumericKernels<uint32_t> kNumericU32;
const NumericKernels<int64_t> kNumericI64;
const NumericKernels<uint64_t> kNumericU64;
const NumericKernels<float> kNumericF32;
const NumericKernels<double> kNumericF64;
const IntegerKernels<int32_t> kIntegerI32;
const IntegerKernels<uint32_t> kIntegerU32;
const IntegerKernels<int64_t> kIntegerI64;
const IntegerKernels<uint64_t> kIntegerU64;
const FloatKernels<float> kFloatF32;
const FloatKernels<double> kFloatF64;
const BoolKernels kBool;
const CastKernelsFrom<bool, AllTypes> kCastsBool;
const CastKernelsFrom<int32_t, AllTypes> kCastsI32;
const CastKernelsFrom<uint32_t, AllTypes> kCastsU32;
const CastKernelsFrom<int64_t, AllTypes> kCastsI64;
const CastKernelsFrom<uint64_t, AllTypes> kCastsU64;
const CastKernelsFrom<float, AllTypes> kCastsF32;
const CastKernelsFrom<double, AllTypes> kCastsF64;
const std::tuple<weft::Kernel<Array<bool>>, weft::Kernel<Array<int32_t>>, weft::Kernel<Array<uint32_t>>,
                 weft::Kernel<Array<int64_t>>, weft::Kernel<Array<uint64_t>>, weft::Kernel<Array<float>>,
                 weft::Kernel<Array<double>>>
    kLiterals{make_literal_kernel<bool>(),     make_literal_kernel<int32_t>(),
              make_literal_kernel<uint32_t>(), make_literal_kernel<int64_t>(),
              make_literal_kernel<uint64_t>(), make_literal_kernel<float>(),
              make_literal_kernel<double>()};

template <class T>
const NumericKernels<T>& numeric() {
    if constexpr (std::is_same_v<T, int32_t>)
        return kNumericI32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return kNumericU32;
    else if constexpr (std::is_same_v<T, int64_t>)
        return kNumericI64;
    else if constexpr (std::is_same_v<T, uint64_t>)
        return kNumericU64;
    else if constexpr (std::is_same_v<T, float>)
        return kNumericF32;
    else
        return kNumericF64;
}
template <class T>
const IntegerKernels<T>& integer() {
    if constexpr (std::is_same_v<T, int32_t>)
        return kIntegerI32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return kIntegerU32;
    else if constexpr (std::is_same_v<T, int64_t>)
        return kIntegerI64;
    else
        return kIntegerU64;
}
template <class T>
const FloatKernels<T>& floating() {
    if constexpr (std::is_same_v<T, float>)
        return kFloatF32;
    else
        return kFloatF64;
}
template <class S>
const auto& casts_from() {
    if constexpr (std::is_same_v<S, bool>)
        return kCastsBool;
    else if constexpr (std::is_same_v<S, int32_t>)
        return kCastsI32;
    else if constexpr (std::is_same_v<S, uint32_t>)
        return kCastsU32;
    else if constexpr (std::is_same_v<S, int64_t>)
        return kCastsI64;
    else if constexpr (std::is_same_v<S, uint64_t>)
        return kCastsU64;
    else if constexpr (std::is_same_v<S, float>)
        return kCastsF32;
    else
        return kCastsF64;
}

template <class T>
std::string pair_input(const std::vector<T>& a, const std::vector<T>& b, size_t i) {
    return "a = " + show<T>(a[i]) + ", b = " + show<T>(b[i]);
}

// ---------------------------------------------------------------------------------------------
// Every numeric type.

template <class T>
class NumericOps : public ::testing::Test {};
using NumericTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(NumericOps, NumericTypes);

TYPED_TEST(NumericOps, LoadAndStoreKeepEveryBitPattern) {
    using T = TypeParam;
    const std::vector<T> a = unary_inputs<T>(1000);
    auto out = weft::zeros<T>(static_cast<int64_t>(a.size()), dev());
    weft::launch(numeric<T>().copy, static_cast<int64_t>(a.size()), weft::from_vector(a, dev()), out);
    const std::vector<T> got = out.to_vector();
    ASSERT_EQ(got.size(), a.size());
    EXPECT_EQ(std::memcmp(got.data(), a.data(), a.size() * sizeof(T)), 0);
}

TYPED_TEST(NumericOps, ArithmeticMatchesHost) {
    using T = TypeParam;
    const auto inputs = binary_inputs<T>();
    const std::vector<T>& a = inputs.first;
    const std::vector<T>& b = inputs.second;
    const size_t n = a.size();
    auto out = weft::zeros<T>({kArithOps, static_cast<int64_t>(n)}, dev());
    weft::launch(numeric<T>().arith, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<T> got = out.to_vector();
    const auto in = [&](size_t i) { return pair_input(a, b, i); };
    const auto lo = ClampBounds<T>::lo;
    const auto hi = ClampBounds<T>::hi;
    expect_all("x + y", row(got, 0, n), map2(a, b, h_add<T>), same_bits<T>, in);
    expect_all("x - y", row(got, 1, n), map2(a, b, h_sub<T>), same_bits<T>, in);
    expect_all("x * y", row(got, 2, n), map2(a, b, h_mul<T>), same_bits<T>, in);
    expect_all("-x", row(got, 3, n), map1(a, h_neg<T>), same_bits<T>, in);
    expect_all("min", row(got, 4, n), map2(a, b, h_min<T>), same_value<T>, in);
    expect_all("max", row(got, 5, n), map2(a, b, h_max<T>), same_value<T>, in);
    expect_all("abs", row(got, 6, n), map1(a, h_abs<T>), same_bits<T>, in);
    expect_all("select", row(got, 7, n), map2(a, b, [](T x, T y) { return x < y ? y : x; }), same_bits<T>,
               in);
    expect_all("clamp", row(got, 8, n), map1(a, [&](T x) { return h_min(h_max(x, lo), hi); }), same_value<T>,
               in);
    expect_all("1 + x * 2", row(got, 9, n), map1(a, [](T x) { return h_add(T(1), h_mul(x, T(2))); }),
               same_bits<T>, in);
}

TYPED_TEST(NumericOps, DivisionAndRemainderMatchHost) {
    using T = TypeParam;
    auto [all_a, all_b] = binary_inputs<T>();
    // Integer division by zero and MIN / -1 are undefined; leave them out.
    std::vector<T> a, b;
    for (size_t i = 0; i < all_a.size(); ++i) {
        if constexpr (std::is_integral_v<T>) {
            if (all_b[i] == 0) continue;
            if (std::is_signed_v<T> && all_a[i] == std::numeric_limits<T>::min() && all_b[i] == T(-1))
                continue;
        }
        a.push_back(all_a[i]);
        b.push_back(all_b[i]);
    }
    const size_t n = a.size();
    auto out = weft::zeros<T>({kDivOps, static_cast<int64_t>(n)}, dev());
    weft::launch(numeric<T>().divmod, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<T> got = out.to_vector();
    const auto in = [&](size_t i) { return pair_input(a, b, i); };
    const auto div = [](T x, T y) { return x / y; };
    const auto mod = [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>)
            return std::fmod(x, y);
        else
            return x % y;
    };
    expect_all("x / y", row(got, 0, n), map2(a, b, div), same_bits<T>, in);
    expect_all("x % y", row(got, 1, n), map2(a, b, mod), same_bits<T>, in);
    expect_all("q /= y", row(got, 2, n), map2(a, b, div), same_bits<T>, in);
    expect_all("r %= y", row(got, 3, n), map2(a, b, mod), same_bits<T>, in);
}

TYPED_TEST(NumericOps, ComparisonsMatchHost) {
    using T = TypeParam;
    const auto inputs = binary_inputs<T>();
    const std::vector<T>& a = inputs.first;
    const std::vector<T>& b = inputs.second;
    const size_t n = a.size();
    auto out = weft::zeros<bool>({kCompareOps, static_cast<int64_t>(n)}, dev());
    weft::launch(numeric<T>().compare, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<bool> got = out.to_vector();
    const auto in = [&](size_t i) { return pair_input(a, b, i); };
    const auto cmp = [&](auto f) {
        std::vector<bool> want;
        for (size_t i = 0; i < n; ++i) want.push_back(f(a[i], b[i]));
        return want;
    };
    const auto eq = [](bool x, bool y) { return x == y; };
    expect_all("==", row(got, 0, n), cmp([](T x, T y) { return x == y; }), eq, in);
    expect_all("!=", row(got, 1, n), cmp([](T x, T y) { return x != y; }), eq, in);
    expect_all("<", row(got, 2, n), cmp([](T x, T y) { return x < y; }), eq, in);
    expect_all("<=", row(got, 3, n), cmp([](T x, T y) { return x <= y; }), eq, in);
    expect_all(">", row(got, 4, n), cmp([](T x, T y) { return x > y; }), eq, in);
    expect_all(">=", row(got, 5, n), cmp([](T x, T y) { return x >= y; }), eq, in);
}

TYPED_TEST(NumericOps, CompoundAssignmentToLocalsMatchesHost) {
    using T = TypeParam;
    const auto inputs = binary_inputs<T>();
    const std::vector<T>& a = inputs.first;
    const std::vector<T>& b = inputs.second;
    const size_t n = a.size();
    auto out = weft::zeros<T>({kCompoundOps, static_cast<int64_t>(n)}, dev());
    weft::launch(numeric<T>().compound, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<T> got = out.to_vector();
    const auto in = [&](size_t i) { return pair_input(a, b, i); };
    const auto step0 = [](T x, T y) { return h_add(x, y); };
    const auto step1 = [&](T x, T y) { return h_sub(step0(x, y), T(3)); };
    const auto step2 = [&](T x, T y) { return h_mul(step1(x, y), y); };
    expect_all("acc += y", row(got, 0, n), map2(a, b, step0), same_bits<T>, in);
    expect_all("acc -= 3", row(got, 1, n), map2(a, b, step1), same_bits<T>, in);
    expect_all("acc *= y", row(got, 2, n), map2(a, b, step2), same_bits<T>, in);
    expect_all("acc = x", row(got, 3, n), a, same_bits<T>, in);
    expect_all("acc = 7", row(got, 4, n), std::vector<T>(n, T(7)), same_bits<T>, in);
}

// ---------------------------------------------------------------------------------------------
// Integer types: bitwise operators and shifts.

template <class T>
class IntegerOps : public ::testing::Test {};
using IntegerTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t>;
TYPED_TEST_SUITE(IntegerOps, IntegerTypes);

TYPED_TEST(IntegerOps, BitwiseOperatorsAndShiftsMatchHost) {
    using T = TypeParam;
    const auto inputs = binary_inputs<T>();
    const std::vector<T>& a = inputs.first;
    const std::vector<T>& b = inputs.second;
    const size_t n = a.size();
    constexpr int kBits = 8 * sizeof(T);
    // Every shift count from 0 to width - 1 (a larger count is undefined).
    std::vector<T> s;
    for (size_t i = 0; i < n; ++i) s.push_back(static_cast<T>(i % kBits));
    auto out = weft::zeros<T>({kBitOps, static_cast<int64_t>(n)}, dev());
    weft::launch(integer<T>().bits, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), weft::from_vector(s, dev()), out);
    const std::vector<T> got = out.to_vector();
    const auto in = [&](size_t i) { return pair_input(a, b, i) + ", shift = " + show<T>(s[i]); };
    const auto per_index = [&](auto f) {
        std::vector<T> want;
        for (size_t i = 0; i < n; ++i) want.push_back(static_cast<T>(f(a[i], b[i], s[i])));
        return want;
    };
    // (Since C++20, << and >> on negative values are defined as in two's complement, like kernels.)
    const auto acc = [](T x, T y, T sh) { return T(T(T(T(x & y) | T(5)) ^ x) << sh); };
    expect_all("x & y", row(got, 0, n), per_index([](T x, T y, T) { return x & y; }), same_bits<T>, in);
    expect_all("x | y", row(got, 1, n), per_index([](T x, T y, T) { return x | y; }), same_bits<T>, in);
    expect_all("x ^ y", row(got, 2, n), per_index([](T x, T y, T) { return x ^ y; }), same_bits<T>, in);
    expect_all("~x", row(got, 3, n), per_index([](T x, T, T) { return ~x; }), same_bits<T>, in);
    expect_all("x << s", row(got, 4, n), per_index([](T x, T, T sh) { return x << sh; }), same_bits<T>, in);
    expect_all("x >> s", row(got, 5, n), per_index([](T x, T, T sh) { return x >> sh; }), same_bits<T>, in);
    expect_all("compound &= |= ^= <<=", row(got, 6, n), per_index(acc), same_bits<T>, in);
    expect_all("compound >>=", row(got, 7, n),
               per_index([&](T x, T y, T sh) { return T(acc(x, y, sh) >> sh); }), same_bits<T>, in);
}

// ---------------------------------------------------------------------------------------------
// Floating-point math builtins.

template <class T>
class FloatMath : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FloatMath, FloatTypes);

TYPED_TEST(FloatMath, BuiltinsMatchTheHostLibrary) {
    using T = TypeParam;
    auto inputs = binary_inputs<T>();
    std::vector<T>& a = inputs.first;
    std::vector<T>& b = inputs.second;
    // Exponents where pow has interesting cases: integers, halves, negatives, zero.
    for (T x : {T(0.5), T(2), T(3), T(-1), T(-2)})
        for (T y : {T(0), T(1), T(2), T(-2), T(0.5), T(3), T(-0.5), T(10)}) {
            a.push_back(x);
            b.push_back(y);
        }
    const size_t n = a.size();
    auto out = weft::zeros<T>({kMathOps, static_cast<int64_t>(n)}, dev());
    weft::launch(floating<T>().math, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<T> got = out.to_vector();
    const auto in = [&](size_t i) { return pair_input(a, b, i); };
    // Correctly rounded (or exact) operations must match bit for bit.
    expect_all("sqrt", row(got, 0, n), map1(a, [](T x) { return std::sqrt(x); }), same_bits<T>, in);
    expect_all("floor", row(got, 1, n), map1(a, [](T x) { return std::floor(x); }), same_bits<T>, in);
    expect_all("ceil", row(got, 2, n), map1(a, [](T x) { return std::ceil(x); }), same_bits<T>, in);
    expect_all("abs", row(got, 3, n), map1(a, [](T x) { return std::fabs(x); }), same_bits<T>, in);
    // Library functions: within a few units in the last place (GPU libraries differ from glibc).
    const auto close = [](T x, T y) { return ulps(x, y) <= 8; };
    expect_all("sin", row(got, 4, n), map1(a, [](T x) { return std::sin(x); }), close, in);
    expect_all("cos", row(got, 5, n), map1(a, [](T x) { return std::cos(x); }), close, in);
    expect_all("exp", row(got, 6, n), map1(a, [](T x) { return std::exp(x); }), close, in);
    expect_all("log", row(got, 7, n), map1(a, [](T x) { return std::log(x); }), close, in);
    // pow(1, y) and pow(x, ±0) are 1 for every x and y, NaN included (C's Annex F, IEEE 754 and
    // CUDA's pow alike): the reference says so itself rather than trust the host's library.
    const auto c_pow = [](T x, T y) { return x == T(1) || y == T(0) ? T(1) : std::pow(x, y); };
    expect_all("pow", row(got, 8, n), map2(a, b, c_pow), close, in);
    expect_all("pow(x, 2)", row(got, 9, n), map1(a, [](T x) { return std::pow(x, T(2)); }), close, in);
}

TYPED_TEST(FloatMath, KnownValues) {
    using T = TypeParam;
    const std::vector<T> a = {T(4), T(2.25), T(-2.5), T(0), T(1), T(-0.0)};
    const std::vector<T> b = {T(0.5), T(2), T(3), T(0), T(-1), T(2)};
    const size_t n = a.size();
    auto out = weft::zeros<T>({kMathOps, static_cast<int64_t>(n)}, dev());
    weft::launch(floating<T>().math, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<T> got = out.to_vector();
    const auto at = [&](int op, size_t i) { return got[op * n + i]; };
    EXPECT_EQ(at(0, 0), T(2));                                 // sqrt(4)
    EXPECT_EQ(at(0, 1), T(1.5));                               // sqrt(2.25)
    EXPECT_TRUE(std::isnan(at(0, 2)));                         // sqrt(-2.5)
    EXPECT_EQ(at(1, 2), T(-3));                                // floor(-2.5)
    EXPECT_EQ(at(2, 2), T(-2));                                // ceil(-2.5)
    EXPECT_EQ(at(3, 2), T(2.5));                               // abs(-2.5)
    EXPECT_EQ(at(4, 3), T(0));                                 // sin(0)
    EXPECT_EQ(at(5, 3), T(1));                                 // cos(0)
    EXPECT_EQ(at(6, 3), T(1));                                 // exp(0)
    EXPECT_EQ(at(7, 4), T(0));                                 // log(1)
    EXPECT_EQ(at(7, 3), -std::numeric_limits<T>::infinity());  // log(0)
    EXPECT_EQ(at(8, 0), T(2));                                 // pow(4, 0.5)
    EXPECT_EQ(at(8, 2), T(-15.625));                           // pow(-2.5, 3)
    EXPECT_EQ(at(8, 3), T(1));                                 // pow(0, 0)
    EXPECT_EQ(at(8, 4), T(1));                                 // pow(1, -1)
    EXPECT_EQ(at(9, 2), T(6.25));                              // pow(-2.5, 2)
    EXPECT_TRUE(std::signbit(at(3, 5)) == false);              // abs(-0) is +0
}

// ---------------------------------------------------------------------------------------------
// bool.

TEST(BoolOps, LogicAndBitwiseOperatorsMatchHost) {
    std::vector<bool> a, b;
    for (int rep = 0; rep < 3; ++rep)
        for (int k = 0; k < 4; ++k) {
            a.push_back((k & 1) != 0);
            b.push_back((k & 2) != 0);
        }
    const size_t n = a.size();
    auto out = weft::full<bool>({kBoolOps, static_cast<int64_t>(n)}, true, dev());
    weft::launch(kBool.logic, static_cast<int64_t>(n), weft::from_vector(a, dev()),
                 weft::from_vector(b, dev()), out);
    const std::vector<bool> got = out.to_vector();
    const auto in = [&](size_t i) { return "a = " + std::to_string(a[i]) + ", b = " + std::to_string(b[i]); };
    const auto eq = [](bool x, bool y) { return x == y; };
    const auto want = [&](auto f) {
        std::vector<bool> w;
        for (size_t i = 0; i < n; ++i) w.push_back(f(bool(a[i]), bool(b[i])));
        return w;
    };
    expect_all("!x", row(got, 0, n), want([](bool x, bool) { return !x; }), eq, in);
    expect_all("x && y", row(got, 1, n), want([](bool x, bool y) { return x && y; }), eq, in);
    expect_all("x || y", row(got, 2, n), want([](bool x, bool y) { return x || y; }), eq, in);
    expect_all("x == y", row(got, 3, n), want([](bool x, bool y) { return x == y; }), eq, in);
    expect_all("x != y", row(got, 4, n), want([](bool x, bool y) { return x != y; }), eq, in);
    expect_all("x & y", row(got, 5, n), want([](bool x, bool y) { return x && y; }), eq, in);
    expect_all("x | y", row(got, 6, n), want([](bool x, bool y) { return x || y; }), eq, in);
    expect_all("x ^ y", row(got, 7, n), want([](bool x, bool y) { return x != y; }), eq, in);
    expect_all("select(x, y, !y)", row(got, 8, n), want([](bool x, bool y) { return x ? y : !y; }), eq, in);
    expect_all("flip in if_", row(got, 9, n), want([](bool x, bool y) { return x != y; }), eq, in);
    expect_all("copy", row(got, 10, n), want([](bool x, bool) { return x; }), eq, in);
}

TEST(BoolOps, BoolArraysRoundTripThroughTheHost) {
    const std::vector<bool> v = {true, false, false, true, true, true, false};
    auto arr = weft::from_vector(v, dev());
    EXPECT_EQ(arr.dtype(), weft::DType::Bool);
    EXPECT_EQ(arr.to_vector(), v);
    arr.fill_(true);
    EXPECT_EQ(arr.to_vector(), std::vector<bool>(v.size(), true));
    EXPECT_EQ(weft::zeros<bool>(3, dev()).to_vector(), std::vector<bool>(3, false));
}

// ---------------------------------------------------------------------------------------------
// Casts between every pair of types, by weft::cast<T>(x) and by Scalar<T>(x).

// Whether converting `x` to D is defined in C++ (a float converted to an integer type must fit).
template <class D, class S>
bool convertible(S x) {
    if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D> && !std::is_same_v<D, bool>) {
        if (!std::isfinite(x)) return false;
        const long double t = std::trunc(static_cast<long double>(x));
        return t >= static_cast<long double>(std::numeric_limits<D>::min()) &&
               t <= static_cast<long double>(std::numeric_limits<D>::max());
    } else {
        return true;
    }
}

template <class S, class D>
void check_cast(const CastKernel<S, D>& kernel) {
    SCOPED_TRACE(type_name<S>() + " -> " + type_name<D>());
    std::vector<S> a;
    for (S x : unary_inputs<S>(300))
        if (convertible<D>(x)) a.push_back(x);
    if constexpr (std::is_floating_point_v<S>) {
        // Values that truncate toward zero, and the extremes of smaller integer types.
        for (S x :
             {S(2.75), S(-2.75), S(0.999), S(-0.999), S(2147483520.0), S(-2147483648.0), S(4294967040.0)})
            if (convertible<D>(x)) a.push_back(x);
    }
    const size_t n = a.size();
    auto via_cast = weft::zeros<D>(static_cast<int64_t>(n), dev());
    auto via_ctor = weft::zeros<D>(static_cast<int64_t>(n), dev());
    weft::launch(kernel, static_cast<int64_t>(n), weft::from_vector(a, dev()), via_cast, via_ctor);
    std::vector<D> want;
    for (S x : a) want.push_back(static_cast<D>(x));
    const auto in = [&](size_t i) { return "x = " + show<S>(a[i]); };
    expect_all("cast<" + type_name<D>() + ">", via_cast.to_vector(), want, same_bits<D>, in);
    expect_all("Scalar<" + type_name<D>() + ">(x)", via_ctor.to_vector(), want, same_bits<D>, in);
}

template <class S>
class Casts : public ::testing::Test {};
using AllTypeList = ::testing::Types<bool, int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(Casts, AllTypeList);

// Constants reach the generated code with their exact bits: extremes, -0, subnormals, inf, NaN.
template <class T>
class Literals : public ::testing::Test {};
TYPED_TEST_SUITE(Literals, AllTypeList);

TYPED_TEST(Literals, EdgeValuesKeepTheirExactBits) {
    using T = TypeParam;
    const std::vector<T> values = edge_values<T>();
    auto out = weft::zeros<T>(static_cast<int64_t>(values.size()), dev());
    weft::launch(std::get<weft::Kernel<Array<T>>>(kLiterals), 1, out);
    expect_all("literal", out.to_vector(), values, same_bits<T>,
               [](size_t) { return std::string("a constant"); });
}

TYPED_TEST(Casts, ToEveryTypeMatchStaticCast) {
    using S = TypeParam;
    std::apply([](const auto&... kernels) { (check_cast(kernels), ...); }, casts_from<S>().kernels);
}

TEST(CastValues, KnownConversions) {
    // float -> int truncates toward zero; int -> bool is "nonzero"; bool -> float is 0 or 1.
    const std::vector<float> f = {2.75f, -2.75f, -0.5f, 0.0f, 16777217.0f};
    auto to_int = weft::zeros<int32_t>(5, dev());
    auto to_int2 = weft::zeros<int32_t>(5, dev());
    weft::launch(std::get<1>(kCastsF32.kernels), 5, weft::from_vector(f, dev()), to_int, to_int2);
    EXPECT_EQ(to_int.to_vector(), (std::vector<int32_t>{2, -2, 0, 0, 16777216}));
    EXPECT_EQ(to_int2.to_vector(), to_int.to_vector());

    const std::vector<int32_t> i = {0, 1, -1, 256, std::numeric_limits<int32_t>::min()};
    auto to_bool = weft::zeros<bool>(5, dev());
    auto to_bool2 = weft::zeros<bool>(5, dev());
    weft::launch(std::get<0>(kCastsI32.kernels), 5, weft::from_vector(i, dev()), to_bool, to_bool2);
    EXPECT_EQ(to_bool.to_vector(), (std::vector<bool>{false, true, true, true, true}));
    EXPECT_EQ(to_bool2.to_vector(), to_bool.to_vector());

    auto to_u32 = weft::zeros<uint32_t>(5, dev());
    auto to_u32b = weft::zeros<uint32_t>(5, dev());
    weft::launch(std::get<2>(kCastsI32.kernels), 5, weft::from_vector(i, dev()), to_u32, to_u32b);
    EXPECT_EQ(to_u32.to_vector(), (std::vector<uint32_t>{0, 1, 0xffffffffu, 256, 0x80000000u}));

    const std::vector<bool> b = {true, false};
    auto to_double = weft::zeros<double>(2, dev());
    auto to_double2 = weft::zeros<double>(2, dev());
    weft::launch(std::get<6>(kCastsBool.kernels), 2, weft::from_vector(b, dev()), to_double, to_double2);
    EXPECT_EQ(to_double.to_vector(), (std::vector<double>{1.0, 0.0}));
}

}  // namespace
