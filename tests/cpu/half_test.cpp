// float16 and bfloat16: host conversions against an independent reference, kernel arithmetic,
// comparisons, casts and math against host references, arrays and plain atomics.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/half_cases.hpp"
#include "support/half_reference.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::bfloat16;
using weft::float16;
using weft::test::half_is_nan;
using weft::test::half_value;
using weft::test::HalfNames;
using weft::test::HalfTypes;
using weft::test::reference_round;

template <class H>
class Half : public ::testing::Test {};
TYPED_TEST_SUITE(Half, HalfTypes, HalfNames);

weft::Device dev() {
    return weft::test::test_device();
}

weft::Module& module() {
    static weft::Module m{"half"};
    return m;
}

template <class H>
std::string name_of(const char* what) {
    return std::string(what) + "_" + weft::dtype_name(weft::dtype_of<H>);
}

std::string hex(uint16_t b) {
    char text[8];
    std::snprintf(text, sizeof text, "0x%04x", b);
    return text;
}

// Every finite and infinite pattern, then NaNs (made quiet on the way through float).
template <class H>
std::vector<H> every_value() {
    std::vector<H> v;
    for (uint32_t b = 0; b < 65536; ++b) v.push_back(H::from_bits(static_cast<uint16_t>(b)));
    return v;
}

// Random values (all fields random, so NaNs, infinities and subnormals appear), plus the edges.
template <class H>
std::vector<H> random_values(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<H> v;
    for (uint16_t b :
         {0x0000, 0x8000, 0x0001, 0x8001, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x3f80, 0x7f7f, 0x7f80})
        v.push_back(H::from_bits(b));
    while (v.size() < n) v.push_back(H::from_bits(static_cast<uint16_t>(rng())));
    return v;
}

TYPED_TEST(Half, ToFloatIsExactForEveryPattern) {
    using H = TypeParam;
    for (const H h : every_value<H>()) {
        const float f = static_cast<float>(h);
        const long double want = half_value<H>(h.bits);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(f)) << hex(h.bits);
        } else {
            ASSERT_EQ(static_cast<long double>(f), want) << hex(h.bits);
            ASSERT_EQ(std::signbit(f), std::signbit(want)) << hex(h.bits);
        }
    }
}

TYPED_TEST(Half, FromFloatRoundsOnceToNearestEven) {
    using H = TypeParam;
    std::vector<double> inputs;
    // Every value, the midpoints between neighbours (ties) and points just off them.
    for (uint32_t b = 0; b + 1 < 65536; ++b) {
        const long double a = half_value<H>(static_cast<uint16_t>(b));
        const long double c = half_value<H>(static_cast<uint16_t>(b + 1));
        if (std::isnan(a) || std::isnan(c) || std::isinf(a) || std::isinf(c) || (b & 0x7fff) == 0x7fff)
            continue;
        const double mid = static_cast<double>((a + c) / 2);
        inputs.insert(inputs.end(), {static_cast<double>(a), mid, std::nextafter(mid, 0.0),
                                     std::nextafter(mid, mid * 2), -mid});
    }
    std::mt19937_64 rng(5);
    for (int i = 0; i < 100000; ++i) inputs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    for (int i = 0; i < 100000; ++i) inputs.push_back(std::bit_cast<double>(rng()));
    inputs.insert(inputs.end(), {65504.0, 65519.99, 65520.0, 1e300, -1e300, 3.3895313892515355e38,
                                 3.3961776e38, 1e-50, -1e-50, std::ldexp(1.0, -25), std::ldexp(1.0, -134),
                                 std::numeric_limits<double>::infinity()});
    for (const double x : inputs) {
        const uint16_t want = reference_round<H>(static_cast<long double>(x));
        const uint16_t got = H(x).bits;
        if (std::isnan(x)) {
            ASSERT_TRUE(half_is_nan<H>(got)) << x;
            continue;
        }
        ASSERT_EQ(hex(got), hex(want)) << "from double " << x;
        const float f = static_cast<float>(x);
        ASSERT_EQ(hex(H(f).bits), hex(reference_round<H>(static_cast<long double>(f)))) << "from float " << f;
    }
}

TYPED_TEST(Half, NaNStaysAQuietNaN) {
    using H = TypeParam;
    // A signalling float NaN with a payload in its top bits only, and one with none there.
    for (const uint32_t bits : {0x7f800001u, 0x7fa00000u, 0xffc00000u, 0x7fffffffu}) {
        const H h(std::bit_cast<float>(bits));
        EXPECT_TRUE(half_is_nan<H>(h.bits)) << hex(h.bits);
        const unsigned quiet = 1u << (weft::test::HalfFields<H>::kMantissa - 1);
        EXPECT_NE(h.bits & quiet, 0u) << hex(h.bits);
        EXPECT_EQ((h.bits & 0x8000u) != 0, (bits >> 31) != 0);
    }
}

TYPED_TEST(Half, FromIntegersRoundsOnce) {
    using H = TypeParam;
    std::mt19937_64 rng(9);
    std::vector<int64_t> inputs = {0,
                                   1,
                                   -1,
                                   2049,
                                   2051,
                                   65504,
                                   65519,
                                   65520,
                                   -65520,
                                   (1ll << 24) + (1ll << 16) + 1,
                                   std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max()};
    for (int i = 0; i < 20000; ++i) inputs.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
    for (const int64_t x : inputs)
        ASSERT_EQ(hex(H(x).bits), hex(reference_round<H>(static_cast<long double>(x)))) << x;
    // A 32-bit integer that rounds twice through float: 2^24 + 2^16 + 1 is above bfloat16's
    // midpoint 2^24 + 2^16, but float rounds it to the midpoint itself.
    EXPECT_EQ(hex(H(int32_t{(1 << 24) + (1 << 16) + 1}).bits),
              hex(reference_round<H>(static_cast<long double>((1 << 24) + (1 << 16) + 1))));
}

// ---------------------------------------------------------------------------------------------
// Kernels: element-wise operations on arrays of H, against the host computing in float and
// rounding once (the host conversion is checked against the reference above).

template <class H>
struct Ops {
    using A = Array<H>;
    using S = weft::Scalar<H>;
    weft::Kernel<A, A, A, A, A, A, A, A, A, A, A> arithmetic;
    weft::Kernel<A, A, Array<int>> comparisons;
    weft::Kernel<A, Array<float>, Array<double>, Array<int>, Array<float>, A, A, Array<bfloat16>> casts;

    Ops()
        : arithmetic(
              module().kernel(name_of<H>("arithmetic"),
                              {"a", "b", "add", "sub", "mul", "div", "neg", "mn", "mx", "sq", "lit"},
                              [](A a, A b, A add, A sub, A mul, A div, A neg, A mn, A mx, A sq, A lit) {
                                  auto i = weft::tid();
                                  S x = a[i];
                                  S y = b[i];
                                  add[i] = x + y;
                                  sub[i] = x - y;
                                  mul[i] = x * y;
                                  div[i] = x / y;
                                  neg[i] = -x;
                                  mn[i] = weft::min(x, y);
                                  mx[i] = weft::max(x, y);
                                  sq[i] = weft::sqrt(weft::abs(x));
                                  lit[i] = x * 0.1 + 3;
                              })),
          comparisons(module().kernel(name_of<H>("comparisons"), {"a", "b", "out"},
                                      [](A a, A b, Array<int> out) {
                                          auto i = weft::tid();
                                          S x = a[i];
                                          S y = b[i];
                                          out[i] = weft::cast<int>(x < y) + weft::cast<int>(x <= y) * 2 +
                                                   weft::cast<int>(x > y) * 4 + weft::cast<int>(x >= y) * 8 +
                                                   weft::cast<int>(x == y) * 16 +
                                                   weft::cast<int>(x != y) * 32;
                                      })),
          casts(module().kernel(name_of<H>("casts"), {"a", "f", "d", "n", "g", "from_f", "from_n", "other"},
                                [](A a, Array<float> f, Array<double> d, Array<int> n, Array<float> g,
                                   A from_f, A from_n, Array<bfloat16> other) {
                                    auto i = weft::tid();
                                    f[i] = weft::cast<float>(a[i]);
                                    d[i] = weft::cast<double>(a[i]);
                                    n[i] = weft::select(weft::abs(a[i]) < 1e4, weft::cast<int>(a[i]), -7);
                                    from_f[i] = weft::cast<H>(g[i]);
                                    from_n[i] = weft::cast<H>(weft::cast<int>(g[i]));
                                    other[i] = weft::cast<bfloat16>(a[i]);
                                })) {}
};

template <class H>
const Ops<H>& ops() {
    static const Ops<H> o;
    return o;
}

template <class H>
uint16_t host(float x) {
    return H(x).bits;
}

// Bits equal, or both NaN (which NaN an operation makes is not documented).
template <class H>
::testing::AssertionResult same(uint16_t got, uint16_t want) {
    if (got == want || (half_is_nan<H>(got) && half_is_nan<H>(want))) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << hex(got) << ", want " << hex(want);
}

TYPED_TEST(Half, ArithmeticIsFloat32RoundedOnce) {
    using H = TypeParam;
    const auto av = random_values<H>(4096, 1);
    auto bv = random_values<H>(4096, 2);
    std::rotate(bv.begin(), bv.begin() + 5, bv.end());
    const int64_t n = static_cast<int64_t>(av.size());
    auto a = weft::from_vector(av, dev());
    auto b = weft::from_vector(bv, dev());
    std::vector<weft::DeviceArray<H>> out;
    for (int k = 0; k < 9; ++k) out.emplace_back(weft::Shape(n), dev());
    weft::launch(ops<H>().arithmetic, n, a, b, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
                 out[8]);
    std::vector<std::vector<H>> got;
    for (auto& o : out) got.push_back(o.to_vector());
    for (size_t i = 0; i < av.size(); ++i) {
        const float x = av[i], y = bv[i];
        const std::string at = "at " + std::to_string(i) + ": " + hex(av[i].bits) + ", " + hex(bv[i].bits);
        ASSERT_TRUE(same<H>(got[0][i].bits, host<H>(x + y))) << "+ " << at;
        ASSERT_TRUE(same<H>(got[1][i].bits, host<H>(x - y))) << "- " << at;
        ASSERT_TRUE(same<H>(got[2][i].bits, host<H>(x * y))) << "* " << at;
        ASSERT_TRUE(same<H>(got[3][i].bits, host<H>(x / y))) << "/ " << at;
        ASSERT_EQ(hex(got[4][i].bits), hex(static_cast<uint16_t>(av[i].bits ^ 0x8000u))) << "neg " << at;
        // min/max: a NaN operand, signaling or not, yields the other one (minNum, as on GPUs).
        const float lo = std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y);
        const float hi = std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y);
        ASSERT_TRUE(same<H>(got[5][i].bits, host<H>(lo))) << "min " << at;
        ASSERT_TRUE(same<H>(got[6][i].bits, host<H>(hi))) << "max " << at;
        ASSERT_TRUE(same<H>(got[7][i].bits, host<H>(std::sqrt(std::fabs(x))))) << "sqrt " << at;
        // The literals are H constants: 0.1 and 3 rounded to H first, as the kernel language says.
        const float tenth = H(0.1), three = H(3);
        ASSERT_TRUE(same<H>(got[8][i].bits, host<H>(static_cast<float>(H(x * tenth)) + three)))
            << "literal " << at;
    }
}

TYPED_TEST(Half, ComparisonsFollowTheValues) {
    using H = TypeParam;
    auto av = random_values<H>(4096, 3);
    auto bv = av;
    std::rotate(bv.begin(), bv.begin() + 1, bv.end());
    for (size_t i = 0; i < av.size(); i += 7) bv[i] = av[i];  // equal pairs, +0 == -0 among them
    bv[1] = H::from_bits(0x8000);
    av[1] = H::from_bits(0x0000);
    const int64_t n = static_cast<int64_t>(av.size());
    weft::DeviceArray<int> out(weft::Shape(n), dev());
    weft::launch(ops<H>().comparisons, n, weft::from_vector(av, dev()), weft::from_vector(bv, dev()), out);
    const auto got = out.to_vector();
    for (size_t i = 0; i < av.size(); ++i) {
        const float x = av[i], y = bv[i];
        const int want = (x < y) + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) + 32 * (x != y);
        ASSERT_EQ(got[i], want) << hex(av[i].bits) << " vs " << hex(bv[i].bits);
    }
}

TYPED_TEST(Half, CastsConvertExactlyOrRoundOnce) {
    using H = TypeParam;
    const auto av = every_value<H>();
    const int64_t n = static_cast<int64_t>(av.size());
    std::mt19937_64 rng(4);
    std::vector<float> gv(av.size());
    for (auto& g : gv)
        g = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), static_cast<int>(rng() % 40) - 20);
    weft::DeviceArray<float> f(weft::Shape(n), dev());
    weft::DeviceArray<double> d(weft::Shape(n), dev());
    weft::DeviceArray<int> ints(weft::Shape(n), dev());
    weft::DeviceArray<H> from_f(weft::Shape(n), dev()), from_n(weft::Shape(n), dev());
    weft::DeviceArray<bfloat16> other(weft::Shape(n), dev());
    weft::launch(ops<H>().casts, n, weft::from_vector(av, dev()), f, d, ints, weft::from_vector(gv, dev()),
                 from_f, from_n, other);
    const auto fv = f.to_vector();
    const auto dv = d.to_vector();
    const auto iv = ints.to_vector();
    const auto ffv = from_f.to_vector();
    const auto fnv = from_n.to_vector();
    const auto ov = other.to_vector();
    for (size_t i = 0; i < av.size(); ++i) {
        const long double want = half_value<H>(av[i].bits);
        const std::string at = hex(av[i].bits);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(fv[i]) && std::isnan(dv[i])) << at;
        } else {
            ASSERT_EQ(static_cast<long double>(fv[i]), want) << at;
            ASSERT_EQ(static_cast<long double>(dv[i]), want) << at;
            ASSERT_EQ(std::signbit(dv[i]), std::signbit(want)) << at;
            const float bound = H(1e4);  // the kernel's literal is an H
            ASSERT_EQ(iv[i], std::fabs(want) < bound ? static_cast<int>(want) : -7) << at;
            ASSERT_TRUE(same<bfloat16>(ov[i].bits, reference_round<bfloat16>(want))) << at;
        }
        ASSERT_EQ(hex(ffv[i].bits), hex(reference_round<H>(gv[i]))) << gv[i];
        ASSERT_EQ(hex(fnv[i].bits), hex(reference_round<H>(static_cast<int>(gv[i])))) << gv[i];
    }
}

TYPED_TEST(Half, ScalarArgumentsAndArraysKeepTheirBits) {
    using H = TypeParam;
    auto k = module().kernel(name_of<H>("scale"), {"a", "s"}, [](Array<H> a, weft::Scalar<H> s) {
        auto i = weft::tid();
        a[i] = a[i] * s;
    });
    const auto values = every_value<H>();
    auto a = weft::from_vector(values, dev());
    weft::launch(k, static_cast<int64_t>(values.size()), a, H(-0.5));
    const auto got = a.to_vector();
    for (size_t i = 0; i < values.size(); ++i)
        ASSERT_TRUE(same<H>(got[i].bits, host<H>(static_cast<float>(values[i]) * -0.5f)))
            << hex(values[i].bits);
    // A C++ number that overflows the parameter's type is refused (float16 holds up to 65504).
    if constexpr (std::is_same_v<H, float16>) {
        EXPECT_THROW(weft::launch(k, 1, a, 1e6), weft::Error);
        weft::launch(k, 1, a, 2.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Plain atomics: compare-and-swap loops, but add and sub on a GPU, a packed pair add; both on a
// GPU update the enclosing 32-bit word, so neighbours in one word are updated by different
// threads at once here.

template <class H>
struct Atomics {
    using A = Array<H>;
    weft::Kernel<A, Array<int>, A, A> add, sub, min, max;

    Atomics()
        : add(module().kernel(name_of<H>("atomic_add"), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_add(target, index[t], value[t]);
                              })),
          sub(module().kernel(name_of<H>("atomic_sub"), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_sub(target, index[t], value[t]);
                              })),
          min(module().kernel(name_of<H>("atomic_min"), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_min(target, index[t], value[t]);
                              })),
          max(module().kernel(name_of<H>("atomic_max"), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_max(target, index[t], value[t]);
                              })) {}
};

template <class H>
const Atomics<H>& atomics() {
    static const Atomics<H> a;
    return a;
}

TYPED_TEST(Half, PlainAtomicsOnNeighbouringElements) {
    using H = TypeParam;
    constexpr int kTargets = 6;  // three 32-bit words
    constexpr int kThreads = 1200;
    std::vector<int> index(kThreads);
    std::vector<H> add_values(kThreads), minmax_values(kThreads);
    std::mt19937_64 rng(11);
    for (int t = 0; t < kThreads; ++t) {
        index[t] = static_cast<int>(rng() % kTargets);
        // 0 or 1, about 100 per target: every partial sum is an integer below 256, exact in
        // bfloat16 too, so any order of the additions gives the same bits.
        add_values[t] = H(static_cast<int>(rng() % 2));
        minmax_values[t] = H(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                                        static_cast<int>(rng() % 20) - 10));
    }
    std::vector<float> sums(kTargets, 0), lo(kTargets, 100), hi(kTargets, -100);
    for (int t = 0; t < kThreads; ++t) {
        sums[index[t]] += static_cast<float>(add_values[t]);
        lo[index[t]] = std::min(lo[index[t]], static_cast<float>(minmax_values[t]));
        hi[index[t]] = std::max(hi[index[t]], static_cast<float>(minmax_values[t]));
    }
    ASSERT_LT(*std::max_element(sums.begin(), sums.end()), 256.0f);
    const auto d_index = weft::from_vector(index, dev());
    const int64_t n = kThreads;
    weft::DeviceArray<H> old(weft::Shape(n), dev());
    auto run = [&](const weft::Kernel<Array<H>, Array<int>, Array<H>, Array<H>>& k,
                   const std::vector<H>& values, float initial) {
        auto target = weft::from_vector(std::vector<H>(kTargets, H(initial)), dev());
        weft::launch(k, n, target, d_index, weft::from_vector(values, dev()), old);
        return target.to_vector();
    };
    const auto added = run(atomics<H>().add, add_values, 0);
    const auto subtracted = run(atomics<H>().sub, add_values, 0);
    const auto minimum = run(atomics<H>().min, minmax_values, 100);
    const auto maximum = run(atomics<H>().max, minmax_values, -100);
    for (int i = 0; i < kTargets; ++i) {
        EXPECT_EQ(static_cast<float>(added[i]), sums[i]) << i;
        EXPECT_EQ(static_cast<float>(subtracted[i]), -sums[i]) << i;
        EXPECT_EQ(static_cast<float>(minimum[i]), lo[i]) << i;
        EXPECT_EQ(static_cast<float>(maximum[i]), hi[i]) << i;
    }
    // The old values returned by the last run are values the target held: each is the maximum
    // of some of the values, so never above the final maximum.
    const auto olds = old.to_vector();
    for (int t = 0; t < kThreads; ++t)
        EXPECT_LE(static_cast<float>(olds[t]), static_cast<float>(maximum[index[t]]));
}

// One atomic add or sub per element, over random bit patterns (subnormals, infinities, NaNs,
// ties): the element holds its initial value plus the operand rounded once to the type, with
// subnormals kept, and the old value returned is the initial one.
TYPED_TEST(Half, PlainAtomicAddRoundsOnceAndKeepsSubnormals) {
    using H = TypeParam;
    auto initial = random_values<H>(4096, 3);
    const auto operand = random_values<H>(4096, 4);
    // Ties to even around 1 (float16 ulp 2^-10, bfloat16 2^-7) and two smallest subnormals.
    initial[20] = H(1.0f);
    initial[21] = H::from_bits(static_cast<uint16_t>(H(1.0f).bits + 1));
    initial[22] = H::from_bits(0x0001);
    std::vector<H> values = operand;
    values[20] = values[21] = std::is_same_v<H, float16> ? H(0x1p-11f) : H(0x1p-8f);
    values[22] = H::from_bits(0x0001);
    const int64_t n = static_cast<int64_t>(initial.size());
    std::vector<int> index(initial.size());
    for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int>(i);
    const auto d_index = weft::from_vector(index, dev());
    const auto d_values = weft::from_vector(values, dev());
    for (const bool subtract : {false, true}) {
        auto target = weft::from_vector(initial, dev());
        weft::DeviceArray<H> old(weft::Shape(n), dev());
        weft::launch(subtract ? atomics<H>().sub : atomics<H>().add, n, target, d_index, d_values, old);
        const auto got = target.to_vector();
        const auto olds = old.to_vector();
        for (size_t i = 0; i < initial.size(); ++i) {
            const float x = initial[i], y = values[i];
            const std::string at = std::string(subtract ? "sub" : "add") + " at " + std::to_string(i) + ": " +
                                   hex(initial[i].bits) + ", " + hex(values[i].bits);
            ASSERT_TRUE(same<H>(got[i].bits, host<H>(subtract ? x - y : x + y))) << at;
            ASSERT_EQ(hex(olds[i].bits), hex(initial[i].bits)) << at;
        }
        if (!subtract) {  // ties go to even: 1 stays, 1 + ulp rounds up to 1 + 2 ulp
            EXPECT_EQ(hex(got[20].bits), hex(H(1.0f).bits));
            EXPECT_EQ(hex(got[21].bits), hex(static_cast<uint16_t>(H(1.0f).bits + 2)));
        }
        EXPECT_EQ(hex(got[22].bits), hex(subtract ? uint16_t{0} : uint16_t{0x0002})) << "subnormals are kept";
    }
}

// Bit operations are for integers: on a half array they are an error naming the line.
TYPED_TEST(Half, BitwiseAtomicsAreRefusedWithTheLine) {
    using H = TypeParam;
    uint32_t line = 0;
    const weft::Error e = weft::test::error_from([&] {
        weft::Module m{name_of<H>("half_errors")};  // its own: the failed kernel stays in its module
        auto k = m.kernel("bitwise", {"a"}, [&](Array<H> a) {
            line = __LINE__ + 1;
            weft::atomic_or(a, 0, a[1]);
        });
        weft::launch(k, 1, weft::zeros<H>(2, dev()));
    });
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_TRUE(weft::test::has(e.message(), "atomic_or is not supported on an array of")) << e.what();
    EXPECT_TRUE(weft::test::has(e.message(), weft::dtype_name(weft::dtype_of<H>))) << e.what();
}

}  // namespace
