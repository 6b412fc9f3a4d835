// Deterministic accumulation (Pattern 1): bit-exact results against an independent exact-sum oracle, on every
// strategy.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/deterministic_cases.hpp"
#include "support/errors.hpp"
#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::Int;
using weft::test::Case;
using weft::test::Config;
using weft::test::describe;
using weft::test::exact_sum;
using weft::test::has;
using weft::test::kConfigs;
using weft::test::kOps;
using weft::test::matches_oracle;
using weft::test::Op;
using weft::test::op_name;
using weft::test::OpKernel;
using weft::test::OpKernels;
using weft::test::oracle;
using weft::test::random_case;
using weft::test::random_value;
using weft::test::run;
using weft::test::same_bits;
using weft::test::same_bits_all;
using weft::test::same_value;
using weft::test::type_name;

weft::Device dev() {
    return weft::test::test_device();
}

template <class T>
T from_bits(weft::test::BitsOf<T> b) {
    return std::bit_cast<T>(b);
}

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();
template <class T>
constexpr T kMax = std::numeric_limits<T>::max();
template <class T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
template <class T>
constexpr T kDenormMin = std::numeric_limits<T>::denorm_min();

// ---------------------------------------------------------------------------------------------
// The oracle itself, on cases worked out by hand.

TEST(DeterministicOracle, ExactSumsOfOrdinaryValues) {
    EXPECT_TRUE(same_bits(exact_sum(0.0f, {1.0f, 2.0f, 3.0f}), 6.0f));
    EXPECT_TRUE(same_bits(exact_sum(10.0, {-2.5, 0.25}), 7.75));
    // 1e20 + 1 - 1e20 is 1 exactly (in floating point, left to right, it is 0).
    EXPECT_TRUE(same_bits(exact_sum(0.0f, {1e20f, 1.0f, -1e20f}), 1.0f));
    EXPECT_TRUE(same_bits(exact_sum(0.0, {1e20, 1.0, -1e20}), 1.0));
    EXPECT_TRUE(same_bits(exact_sum(1e20f, {1.0f, -1e20f}), 1.0f));
    // 2^24 + 1 + 1 is 2^24 + 2, though 2^24 + 1 alone rounds to 2^24 (a tie, to even).
    EXPECT_TRUE(same_bits(exact_sum(16777216.0f, {1.0f}), 16777216.0f));
    EXPECT_TRUE(same_bits(exact_sum(16777216.0f, {1.0f, 1.0f}), 16777218.0f));
    // 0.1 + 0.2 in double rounds once: the exact sum of the two doubles is nearest to 0.30000000000000004.
    EXPECT_TRUE(same_bits(exact_sum(0.0, {0.1, 0.2}), 0.1 + 0.2));
    // A million tiny values that each vanish when added to 1 one at a time.
    std::vector<float> tiny(1 << 20, std::ldexp(1.0f, -30));
    EXPECT_TRUE(same_bits(exact_sum(1.0f, tiny), 1.0f + std::ldexp(1.0f, -10)));
}

TEST(DeterministicOracle, RoundsTiesToEven) {
    const float half_ulp = std::ldexp(1.0f, -24);  // half an ulp of 1.0f
    EXPECT_TRUE(same_bits(exact_sum(1.0f, {half_ulp}), 1.0f)) << "1 is even";
    const float odd = 1.0f + std::ldexp(1.0f, -23);
    EXPECT_TRUE(same_bits(exact_sum(odd, {half_ulp}), 1.0f + std::ldexp(1.0f, -22))) << "up to even";
    // Just above the tie rounds up; just below rounds down.
    EXPECT_TRUE(same_bits(exact_sum(1.0f, {half_ulp, std::ldexp(1.0f, -60)}), odd));
    EXPECT_TRUE(same_bits(exact_sum(odd, {half_ulp, -std::ldexp(1.0f, -60)}), odd));
    // Negative ties are symmetric.
    EXPECT_TRUE(same_bits(exact_sum(-1.0f, {-half_ulp}), -1.0f));
    EXPECT_TRUE(same_bits(exact_sum(-odd, {-half_ulp}), -(1.0f + std::ldexp(1.0f, -22))));
    const double dhalf = std::ldexp(1.0, -53);
    EXPECT_TRUE(same_bits(exact_sum(1.0, {dhalf}), 1.0));
    EXPECT_TRUE(same_bits(exact_sum(1.0 + std::ldexp(1.0, -52), {dhalf}), 1.0 + std::ldexp(1.0, -51)));
    // A carry out of the significand: (2 - 2^-23) + 2^-24 rounds up to 2.
    EXPECT_TRUE(same_bits(exact_sum(2.0f - std::ldexp(1.0f, -23), {half_ulp}), 2.0f));
}

TEST(DeterministicOracle, Subnormals) {
    const float d = kDenormMin<float>;  // 2^-149
    EXPECT_TRUE(same_bits(exact_sum(0.0f, {d, d, d}), from_bits<float>(3)));
    EXPECT_TRUE(same_bits(exact_sum(d, {-d}), 0.0f));
    EXPECT_TRUE(same_bits(exact_sum(0.0f, {-d, -d}), from_bits<float>(0x80000002u)));
    // The largest subnormal plus the smallest one is the smallest normal.
    EXPECT_TRUE(same_bits(exact_sum(from_bits<float>(0x007fffffu), {d}), std::numeric_limits<float>::min()));
    // A normal minus a subnormal lands exactly on a subnormal.
    EXPECT_TRUE(same_bits(exact_sum(std::numeric_limits<float>::min(), {-d}), from_bits<float>(0x007fffffu)));
    // 2^24 + 2^-149 is far below an ulp and rounds away.
    EXPECT_TRUE(same_bits(exact_sum(16777216.0f, {d}), 16777216.0f));
    EXPECT_TRUE(same_bits(exact_sum(0.0, {kDenormMin<double>, kDenormMin<double>}), from_bits<double>(2)));
    EXPECT_TRUE(same_bits(exact_sum(std::numeric_limits<double>::min(), {-kDenormMin<double>}),
                          from_bits<double>(0x000fffffffffffffull)));
}

TEST(DeterministicOracle, OverflowAndInfinities) {
    const float m = kMax<float>;  // (2^24 - 1) * 2^104; its ulp is 2^104
    EXPECT_TRUE(same_bits(exact_sum(m, {m}), kInf<float>));
    EXPECT_TRUE(same_bits(exact_sum(-m, {-m}), -kInf<float>));
    // Partial sums that overflow do not matter; only the exact total does.
    EXPECT_TRUE(same_bits(exact_sum(m, {m, -m}), m));
    // max + half an ulp is a tie between max (odd significand) and 2^128: it rounds to infinity.
    EXPECT_TRUE(same_bits(exact_sum(m, {std::ldexp(1.0f, 103)}), kInf<float>));
    // A quarter of an ulp rounds back down to max.
    EXPECT_TRUE(same_bits(exact_sum(m, {std::ldexp(1.0f, 102)}), m));
    EXPECT_TRUE(same_bits(exact_sum(kMax<double>, {kMax<double>}), kInf<double>));
    EXPECT_TRUE(same_bits(exact_sum(kMax<double>, {std::ldexp(1.0, 970)}), kInf<double>));
    EXPECT_TRUE(same_bits(exact_sum(kMax<double>, {std::ldexp(1.0, 969)}), kMax<double>));

    EXPECT_TRUE(same_bits(exact_sum(1.0f, {kInf<float>, 2.0f}), kInf<float>));
    EXPECT_TRUE(same_bits(exact_sum(kInf<float>, {-m, -m}), kInf<float>))
        << "an infinity beats finite overflow";
    EXPECT_TRUE(same_bits(exact_sum(1.0, {-kInf<double>}), -kInf<double>));
    EXPECT_TRUE(std::isnan(exact_sum(kInf<float>, {-kInf<float>})));
    EXPECT_TRUE(std::isnan(exact_sum(0.0f, {1.0f, kNaN<float>, kInf<float>})));
    EXPECT_TRUE(std::isnan(exact_sum(kNaN<double>, {})));
}

TEST(DeterministicOracle, SignedZeros) {
    EXPECT_TRUE(same_bits(exact_sum(-0.0f, {}), -0.0f));
    EXPECT_TRUE(same_bits(exact_sum(-0.0f, {-0.0f, -0.0f}), -0.0f));
    EXPECT_TRUE(same_bits(exact_sum(-0.0f, {-0.0f, 0.0f}), 0.0f)) << "a +0.0 was added";
    EXPECT_TRUE(same_bits(exact_sum(0.0f, {-0.0f}), 0.0f)) << "the target held +0.0";
    EXPECT_TRUE(same_bits(exact_sum(-0.0, {1.0, -1.0}), -0.0)) << "an exact zero keeps the target's -0.0";
    EXPECT_TRUE(same_bits(exact_sum(0.0, {1.0, -1.0}), 0.0));
    EXPECT_TRUE(same_bits(exact_sum(2.0f, {-2.0f}), 0.0f));
    EXPECT_TRUE(same_bits(exact_sum(-0.0f, {-5.0f}), -5.0f));
}

TEST(DeterministicOracle, TotalOrderMinMax) {
    using weft::test::total_order_max;
    using weft::test::total_order_min;
    EXPECT_TRUE(same_bits(total_order_min(0.0f, {-0.0f}), -0.0f));
    EXPECT_TRUE(same_bits(total_order_max(-0.0f, {0.0f}), 0.0f));
    EXPECT_TRUE(same_bits(total_order_max(0.0f, {-0.0f}), 0.0f));
    EXPECT_TRUE(same_bits(total_order_min(-0.0, {0.0, -0.0}), -0.0));
    EXPECT_TRUE(same_bits(total_order_min(3.0f, {-kInf<float>, 2.0f}), -kInf<float>));
    EXPECT_TRUE(same_bits(total_order_max(3.0, {kInf<double>, 2.0}), kInf<double>));
    EXPECT_TRUE(same_bits(total_order_max(-7.0f, {-kDenormMin<float>, -1.0f}), -kDenormMin<float>));
    EXPECT_TRUE(std::isnan(total_order_max(1.0f, {kNaN<float>, kInf<float>})));
    EXPECT_TRUE(std::isnan(total_order_min(1.0f, {-kInf<float>, kNaN<float>})));
    EXPECT_TRUE(std::isnan(total_order_min(kNaN<double>, {-1.0})));
    EXPECT_TRUE(same_bits(total_order_max(5.0, {}), 5.0));
    EXPECT_FALSE(same_value(1.0f, kNaN<float>));
    EXPECT_TRUE(same_value(-kNaN<float>, kNaN<float>));
    EXPECT_FALSE(same_value(-0.0f, 0.0f));
}

TEST(DeterministicOracle, ByDestinationAndComparisons) {
    using weft::test::mismatches;
    using weft::test::reduce_by_destination;
    using weft::test::Reduction;
    const std::vector<float> initial = {0.0f, -0.0f, 5.0f};
    const std::vector<int> index = {0, 2, 0, 0};
    const std::vector<float> values = {1e20f, 1.0f, 1.0f, -1e20f};
    EXPECT_EQ(
        mismatches(reduce_by_destination(Reduction::Sum, initial, index, values), {1.0f, -0.0f, 6.0f}, false),
        "");
    EXPECT_EQ(mismatches(reduce_by_destination(Reduction::Min, initial, index, values), {-1e20f, -0.0f, 1.0f},
                         false),
              "");
    EXPECT_EQ(mismatches(reduce_by_destination(Reduction::Max, initial, index, values), {1e20f, -0.0f, 5.0f},
                         false),
              "");
    EXPECT_NE(mismatches(std::vector<float>{0.0f}, {-0.0f}, true), "");
    EXPECT_EQ(mismatches(std::vector<float>{-kNaN<float>}, {kNaN<float>}, true), "");
    EXPECT_NE(mismatches(std::vector<float>{-kNaN<float>}, {kNaN<float>}, false), "");
    // random_value: the requested exponents, subnormals below the normal range.
    std::mt19937_64 rng(1);
    for (int i = 0; i < 1000; ++i) {
        const float v = random_value<float>(rng, -3, 2);
        EXPECT_TRUE(std::fabs(v) >= 0.125f && std::fabs(v) < 8.0f) << v;
        const float s = random_value<float>(rng, -160, -150);
        EXPECT_TRUE(std::fabs(s) < std::numeric_limits<float>::min()) << s;
    }
}

// ---------------------------------------------------------------------------------------------
// The suite: the op kernels of support/deterministic_cases.hpp, and kernels only these tests use.

// Accumulation through weft functions: three call sites, two of them on the same target.
template <class T>
struct FunctionKernels {
    weft::Func<void(Array<T>, Int, weft::Scalar<T>)> add_to, take_from;
    weft::Kernel<Array<T>, Array<int>, Array<T>, Array<T>> three_calls;

    explicit FunctionKernels(weft::Module& m)
        : add_to(m.func("add_to_" + type_name<T>(),
                        [](Array<T> out, Int i, weft::Scalar<T> v) { weft::atomic_add(out, i, v); })),
          take_from(m.func("take_from_" + type_name<T>(),
                           [](Array<T> out, Int i, weft::Scalar<T> v) { out[i] -= v; })),
          three_calls(m.kernel("three_calls_" + type_name<T>(), {"values", "index", "first", "second"},
                               [add = add_to, take = take_from](Array<T> values, Array<int> index,
                                                                Array<T> first, Array<T> second) {
                                   auto t = weft::tid();
                                   auto v = values[t];
                                   add(first, index[t], v);
                                   add(second, index[t] % second.shape(0), v * 2);
                                   take(first, 0, v);
                               })) {}
};

// 2-D targets: a(i, j) forms and an atomic on a row view taken inside the kernel.
template <class T>
struct GridKernels {
    weft::Kernel<Array<T>, Array<int>, Array<int>, Array<T, 2>> add, max;

    explicit GridKernels(weft::Module& m)
        : add(m.kernel("grid_add_" + type_name<T>(), {"values", "rows", "cols", "grid"},
                       [](Array<T> values, Array<int> rows, Array<int> cols, Array<T, 2> grid) {
                           auto t = weft::tid();
                           auto v = values[t];
                           auto r = rows[t];
                           auto c = cols[t];
                           weft::atomic_add(grid, r, c, v);
                           grid(c % grid.shape(0), r % grid.shape(1)) += v * 0.5;
                           weft::atomic_sub(grid[r], c, v * 0.25);
                       })),
          max(m.kernel("grid_max_" + type_name<T>(), {"values", "rows", "cols", "grid"},
                       [](Array<T> values, Array<int> rows, Array<int> cols, Array<T, 2> grid) {
                           auto t = weft::tid();
                           weft::atomic_max(grid, rows[t], cols[t], values[t]);
                           weft::atomic_max(grid[rows[t]], cols[t], values[t] * 0.5);
                       })) {}
};

// A data-dependent loop around an accumulation (the spec's loop_accumulate).
template <class T>
using LoopKernel = weft::Kernel<Array<T>, Array<int>, Array<int>, Array<T>>;

template <class T>
LoopKernel<T> define_loop(weft::Module& m) {
    return m.kernel("loop_add_" + type_name<T>(), {"values", "loop_counts", "index", "loop_target"},
                    [](Array<T> values, Array<int> loop_counts, Array<int> index, Array<T> loop_target) {
                        auto t = weft::tid();
                        weft::for_(loop_counts[t],
                                   [&](Int) { weft::atomic_add(loop_target, index[t], values[t]); });
                    });
}

// Every kernel of the suite, compiled in one module per configuration.
struct Suite {
    weft::Module module;
    OpKernels<float> f32;
    OpKernels<double> f64;
    FunctionKernels<float> fn32;
    FunctionKernels<double> fn64;
    GridKernels<float> grid32;
    GridKernels<double> grid64;
    LoopKernel<float> loop32;
    LoopKernel<double> loop64;
    // The spec's allowed counterpart of a mixed-family target: one family per array.
    weft::Kernel<Array<float>, Array<float>, Array<float>> sum_and_max;
    // Two sites of one family (add and sub) on one target.
    weft::Kernel<Array<double>, Array<int>, Array<double>> add_and_sub;
    // Atomics that stay as they are: integer accumulation, cas, exch.
    weft::Kernel<Array<int>, Array<int>, Array<int64_t>, Array<int>, Array<int>> untouched;

    explicit Suite(const Config& c, const weft::OptionsPatch& extra = {})
        : module(std::string("det_") + c.name, with(c, extra)),
          f32(module),
          f64(module),
          fn32(module),
          fn64(module),
          grid32(module),
          grid64(module),
          loop32(define_loop<float>(module)),
          loop64(define_loop<double>(module)),
          sum_and_max(module.kernel("sum_and_max", {"values", "sum_out", "max_out"},
                                    [](Array<float> values, Array<float> sum_out, Array<float> max_out) {
                                        auto tid = weft::tid();
                                        weft::atomic_add(sum_out, 0, values[tid]);
                                        weft::atomic_max(max_out, 0, values[tid]);
                                    })),
          add_and_sub(module.kernel("add_and_sub", {"values", "index", "out"},
                                    [](Array<double> values, Array<int> index, Array<double> out) {
                                        auto t = weft::tid();
                                        weft::atomic_add(out, index[t], values[t]);
                                        weft::atomic_sub(out, (index[t] + 1) % out.shape(0), values[t]);
                                    })),
          untouched(module.kernel("untouched", {"index", "counts", "wide_counts", "lock", "swapped"},
                                  [](Array<int> index, Array<int> counts, Array<int64_t> wide_counts,
                                     Array<int> lock, Array<int> swapped) {
                                      auto t = weft::tid();
                                      weft::atomic_add(counts, index[t], 1);
                                      counts[index[t] + 4] += 2;
                                      weft::atomic_max(wide_counts, 0, weft::cast<int64_t>(t));
                                      weft::atomic_cas(lock, 0, 0, 1);
                                      weft::atomic_exch(swapped, t, t * 3);
                                  })) {}

    template <class T>
    const OpKernels<T>& ops() const {
        if constexpr (std::is_same_v<T, float>)
            return f32;
        else
            return f64;
    }
    template <class T>
    const FunctionKernels<T>& functions() const {
        if constexpr (std::is_same_v<T, float>)
            return fn32;
        else
            return fn64;
    }
    template <class T>
    const GridKernels<T>& grids() const {
        if constexpr (std::is_same_v<T, float>)
            return grid32;
        else
            return grid64;
    }
    template <class T>
    const LoopKernel<T>& loop() const {
        if constexpr (std::is_same_v<T, float>)
            return loop32;
        else
            return loop64;
    }

private:
    static weft::OptionsPatch with(const Config& c, weft::OptionsPatch p) {
        p.deterministic = c.mode;
        p.deterministic_strategy = c.strategy;
        return p;
    }
};

const Suite& suite(const Config& c) {
    static std::map<std::string, std::unique_ptr<Suite>> suites;
    auto& s = suites[c.name];
    if (!s) s = std::make_unique<Suite>(c);
    return *s;
}

// ---------------------------------------------------------------------------------------------
// Inputs.

// Hand-made destinations, each a trap for some order-dependent or sloppy implementation. The
// contributions of each destination are spread over the threads, interleaved with the others.
template <class T>
Case<T> adversarial_case() {
    const T big = std::is_same_v<T, float> ? T(1e20) : T(1e200);
    const T m = kMax<T>;
    const T d = kDenormMin<T>;
    const T half_ulp = std::ldexp(T(1), -std::numeric_limits<T>::digits);
    const T odd = T(1) + 2 * half_ulp;
    const std::vector<std::pair<T, std::vector<T>>> groups = {
        {T(0), {big, T(1), -big}},                    // 0: 1 exactly
        {T(0), {m, m, -m}},                           // 1: max; partial sums overflow
        {T(0), {m, m}},                               // 2: overflows to +inf
        {-m, {-m, T(1)}},                             // 3: overflows to -inf
        {T(1), {kInf<T>, T(2), -big}},                // 4: +inf
        {T(0), {kInf<T>, -kInf<T>}},                  // 5: NaN
        {T(0), {T(1), kNaN<T>, T(3)}},                // 6: NaN
        {T(-0.0), {T(-0.0), T(-0.0)}},                // 7: -0.0
        {T(-0.0), {T(-0.0), T(0.0)}},                 // 8: +0.0
        {T(-0.0), {T(1), T(-1)}},                     // 9: -0.0 (an exact zero keeps it)
        {T(0), {d, d, d, d, d, -d}},                  // 10: 4 * denorm_min
        {T(1), {half_ulp}},                           // 11: a tie, to even: 1
        {odd, {half_ulp}},                            // 12: a tie, to even: up
        {T(1), {half_ulp, half_ulp / 1024}},          // 13: just above the tie: up
        {T(-1), {-half_ulp, -half_ulp}},              // 14: -(1 + 2 half ulps), exact
        {kNaN<T>, {T(1)}},                            // 15: NaN from the target
        {-kInf<T>, {T(5), -big}},                     // 16: -inf from the target
        {T(0), {std::numeric_limits<T>::min(), -d}},  // 17: normal - subnormal = subnormal
        {big, {-big, d}},                             // 18: denorm_min
        {T(3), {}},                                   // 19: untouched
        {T(0), {-m, -m, m, T(-0.0)}},                 // 20: -max
        {T(-2), {T(-0.0), T(0.0), T(-0.0)}},          // 21: -2 (min -2, max +0.0)
    };
    Case<T> c{"adversarial", {}, {}, {}};
    for (const auto& g : groups) c.initial.push_back(g.first);
    // Interleave: round r takes the r-th contribution of every group that has one.
    for (size_t r = 0;; ++r) {
        bool any = false;
        for (size_t g = 0; g < groups.size(); ++g) {
            if (r >= groups[g].second.size()) continue;
            any = true;
            c.index.push_back(static_cast<int>(g));
            c.values.push_back(groups[g].second[r]);
        }
        if (!any) break;
    }
    // Many copies of a quarter ulp of 1, which vanishes when added to 1 one at a time:
    // 1 + 4096 quarter ulps = 1 + 1024 ulps exactly.
    c.initial.push_back(T(1));
    for (int i = 0; i < 4096; ++i) {
        c.index.push_back(static_cast<int>(c.initial.size()) - 1);
        c.values.push_back(half_ulp / 2);
    }
    return c;
}

// Three launches of every op on `c`: identical bits each time, and the oracle's values.
template <class T>
void check_repeats_and_oracle(const Suite& s, const Case<T>& c) {
    for (Op op : kOps) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + type_name<T>() + " " + c.name);
        const auto want = oracle(op, c.initial, c.index, c.values);
        const auto first = run(s.ops<T>().get(op), c);
        EXPECT_TRUE(matches_oracle(first, want));
        for (int repeat = 1; repeat < 3; ++repeat)
            EXPECT_TRUE(same_bits_all(run(s.ops<T>().get(op), c), first)) << "repeat " << repeat;
    }
}

class DeterministicAccumulate : public ::testing::TestWithParam<Config> {
protected:
    const Suite& s() const { return suite(GetParam()); }
};

TEST_P(DeterministicAccumulate, ManyThreadsIntoFewOutputs) {
    check_repeats_and_oracle(s(), random_case<float>("few", 30000, 3, -20, 20, 1));
    check_repeats_and_oracle(s(), random_case<double>("few", 30000, 3, -40, 40, 2));
}

TEST_P(DeterministicAccumulate, ManyThreadsIntoManyOutputs) {
    // More than 65,536 float64 elements: Auto may choose a different strategy here.
    check_repeats_and_oracle(s(), random_case<float>("many", 100000, 70000, -30, 30, 3));
    check_repeats_and_oracle(s(), random_case<double>("many", 100000, 70000, -60, 60, 4));
}

TEST_P(DeterministicAccumulate, ExponentsOverTheWholeRange) {
    // Subnormals to huge values in one sum: most bits of the exact sum are far below the result's ulp.
    check_repeats_and_oracle(s(), random_case<float>("wide", 20000, 7, -160, 100, 5));
    check_repeats_and_oracle(s(), random_case<double>("wide", 20000, 7, -1100, 1000, 6));
}

TEST_P(DeterministicAccumulate, AdversarialValues) {
    check_repeats_and_oracle(s(), adversarial_case<float>());
    check_repeats_and_oracle(s(), adversarial_case<double>());
}

// In floating point, left to right, 1e20 + 1 - 1e20 is 0. The CPU runs threads in order, so a
// plain atomic would give exactly that; a deterministic target gets the exact 1.
TEST_P(DeterministicAccumulate, CancellationIsExact) {
    const Case<float> c{"cancel", {0.0f}, {0, 0, 0}, {1e20f, 1.0f, -1e20f}};
    EXPECT_EQ(run(s().f32.add, c), std::vector<float>{1.0f});
    EXPECT_EQ(run(s().f32.sub, c), std::vector<float>{-1.0f});
    const Case<double> d{"cancel", {0.0}, {0, 0, 0}, {1e300, 1.0, -1e300}};
    EXPECT_EQ(run(s().f64.plus_equals, d), std::vector<double>{1.0});
}

TEST_P(DeterministicAccumulate, AddAndSubOnOneTarget) {
    const auto c = random_case<double>("add_sub", 20000, 5, -30, 30, 7);
    // Oracle: +v at index, -v at (index + 1) % 5.
    std::vector<int> all_index = c.index;
    std::vector<double> all_values = c.values;
    for (size_t t = 0; t < c.index.size(); ++t) {
        all_index.push_back((c.index[t] + 1) % 5);
        all_values.push_back(-c.values[t]);
    }
    const auto want = oracle(Op::Add, c.initial, all_index, all_values);
    std::vector<double> first;
    for (int repeat = 0; repeat < 3; ++repeat) {
        auto out = weft::from_vector(c.initial, dev());
        weft::launch(s().add_and_sub, static_cast<int64_t>(c.index.size()),
                     weft::from_vector(c.values, dev()), weft::from_vector(c.index, dev()), out);
        const auto got = out.to_vector();
        if (repeat == 0) {
            EXPECT_TRUE(matches_oracle(got, want));
            first = got;
        } else {
            EXPECT_TRUE(same_bits_all(got, first)) << "repeat " << repeat;
        }
    }
}

// The spec's allowed counterpart of the rejected mixed-family kernel.
TEST_P(DeterministicAccumulate, SumToOneArrayMaxToAnother) {
    std::mt19937_64 rng(8);
    std::vector<float> values(25000);
    for (auto& v : values) v = random_value<float>(rng, -20, 20);
    values[777] = -0.0f;
    auto sum_out = weft::from_vector(std::vector<float>{-0.0f}, dev());
    auto max_out = weft::from_vector(std::vector<float>{-kInf<float>}, dev());
    weft::launch(s().sum_and_max, static_cast<int64_t>(values.size()), weft::from_vector(values, dev()),
                 sum_out, max_out);
    EXPECT_TRUE(matches_oracle(sum_out.to_vector(), {exact_sum(-0.0f, values)}));
    EXPECT_TRUE(matches_oracle(max_out.to_vector(), {weft::test::total_order_max(-kInf<float>, values)}));
}

// ---------------------------------------------------------------------------------------------
// Functions, 2-D targets and views.

template <class T>
void check_three_calls(const Suite& s, bool same_array) {
    SCOPED_TRACE(type_name<T>() + (same_array ? " one array for both targets" : " two arrays"));
    const int n = 20000, outputs = 16, second_outputs = 5;
    const auto c = random_case<T>("calls", n, outputs, -20, 20, 9);
    std::vector<T> second_initial(c.initial.begin(), c.initial.begin() + second_outputs);
    // Contributions per call site, as (array, index, value).
    std::vector<int> first_index, second_index;
    std::vector<T> first_values, second_values;
    for (int t = 0; t < n; ++t) {
        first_index.push_back(c.index[t]);
        first_values.push_back(c.values[t]);
        second_index.push_back(c.index[t] % second_outputs);
        second_values.push_back(c.values[t] * T(2));
        first_index.push_back(0);
        first_values.push_back(-c.values[t]);
    }
    std::vector<T> first_first;
    for (int repeat = 0; repeat < 3; ++repeat) {
        auto first = weft::from_vector(c.initial, dev());
        if (same_array) {
            // Both parameters are the same array: every contribution lands in it.
            std::vector<int> all_index = first_index;
            std::vector<T> all_values = first_values;
            all_index.insert(all_index.end(), second_index.begin(), second_index.end());
            all_values.insert(all_values.end(), second_values.begin(), second_values.end());
            weft::launch(s.functions<T>().three_calls, n, weft::from_vector(c.values, dev()),
                         weft::from_vector(c.index, dev()), first, first.slice(0, 0, second_outputs));
            const auto got = first.to_vector();
            EXPECT_TRUE(matches_oracle(got, oracle(Op::Add, c.initial, all_index, all_values)));
            if (repeat == 0) first_first = got;
            EXPECT_TRUE(same_bits_all(got, first_first));
        } else {
            auto second = weft::from_vector(second_initial, dev());
            weft::launch(s.functions<T>().three_calls, n, weft::from_vector(c.values, dev()),
                         weft::from_vector(c.index, dev()), first, second);
            const auto got = first.to_vector();
            EXPECT_TRUE(matches_oracle(got, oracle(Op::Add, c.initial, first_index, first_values)));
            EXPECT_TRUE(matches_oracle(second.to_vector(),
                                       oracle(Op::Add, second_initial, second_index, second_values)));
            if (repeat == 0) first_first = got;
            EXPECT_TRUE(same_bits_all(got, first_first));
        }
    }
}

TEST_P(DeterministicAccumulate, FunctionCalledFromThreeSites) {
    check_three_calls<float>(s(), false);
    check_three_calls<double>(s(), false);
}

// One array passed for both target parameters: the contributions of both must still be summed
// exactly, with one rounding.
template <class T>
void check_aliased_targets_round_once(const Suite& s) {
    SCOPED_TRACE(type_name<T>());
    // One thread, v = a quarter ulp of 1: first[1] += v and second[1] += 2v, with second[1] being
    // first[1]. Exactly, 1 + 3/4 ulp rounds up to 1 + ulp; rounding each parameter's sum on its
    // own gives 1 + 1/4 ulp -> 1, then 1 + 1/2 ulp -> 1 (a tie, to even), in either order.
    const T v = std::ldexp(T(1), -std::numeric_limits<T>::digits - 1);
    const T one_ulp_up = T(1) + 4 * v;
    auto first = weft::from_vector(std::vector<T>{T(0), T(1), T(0), T(0), T(0)}, dev());
    weft::launch(s.functions<T>().three_calls, 1, weft::from_vector(std::vector<T>{v}, dev()),
                 weft::from_vector(std::vector<int>{1}, dev()), first, first);
    EXPECT_TRUE(matches_oracle(first.to_vector(), std::vector<T>{-v, one_ulp_up, T(0), T(0), T(0)}));
}

TEST_P(DeterministicAccumulate, OneArrayForTwoTargetParameters) {
    check_three_calls<float>(s(), true);
    check_three_calls<double>(s(), true);
    check_aliased_targets_round_once<float>(s());
    check_aliased_targets_round_once<double>(s());
}

// grid_add: (r, c) += v; (c, r) += v / 2; row r, column c -= v / 4. Returns the row-major result.
template <class T>
std::vector<T> grid_oracle(Op op, const std::vector<T>& initial, int rows, int cols,
                           const std::vector<int>& r, const std::vector<int>& c, const std::vector<T>& v) {
    std::vector<int> index;
    std::vector<T> values;
    for (size_t t = 0; t < v.size(); ++t) {
        index.push_back(r[t] * cols + c[t]);
        values.push_back(v[t]);
        if (op == Op::Add) {
            index.push_back((c[t] % rows) * cols + r[t] % cols);
            values.push_back(v[t] * T(0.5));
            index.push_back(r[t] * cols + c[t]);
            values.push_back(-v[t] * T(0.25));
        } else {
            index.push_back(r[t] * cols + c[t]);
            values.push_back(v[t] * T(0.5));
        }
    }
    return oracle(op, initial, index, values);
}

template <class T>
void check_grid(const Suite& s, bool transposed_view) {
    SCOPED_TRACE(type_name<T>() + (transposed_view ? " through a transposed view" : ""));
    const int rows = 12, cols = 12, n = 20000;
    auto c = random_case<T>("grid", n, rows * cols, -20, 20, 10);
    c.initial[5] = T(-0.0);
    std::vector<int> r(n), col(n);
    for (int t = 0; t < n; ++t) {
        r[t] = c.index[t] / cols;
        col[t] = c.index[t] % cols;
    }
    for (Op op : {Op::Add, Op::Max}) {
        SCOPED_TRACE(op_name(op));
        const auto& kernel = op == Op::Add ? s.grids<T>().add : s.grids<T>().max;
        const auto want = grid_oracle(op, c.initial, rows, cols, r, col, c.values);
        std::vector<T> first;
        for (int repeat = 0; repeat < 3; ++repeat) {
            std::vector<T> got;
            if (transposed_view) {
                // The kernel's (i, j) is element (j, i) of the array underneath.
                std::vector<T> under(c.initial.size());
                for (int i = 0; i < rows; ++i)
                    for (int j = 0; j < cols; ++j) under[j * rows + i] = c.initial[i * cols + j];
                auto base = weft::from_vector(under, {cols, rows}, dev());
                weft::launch(kernel, n, weft::from_vector(c.values, dev()), weft::from_vector(r, dev()),
                             weft::from_vector(col, dev()), base.transpose());
                got = base.transpose().to_vector();
            } else {
                auto grid = weft::from_vector(c.initial, {rows, cols}, dev());
                weft::launch(kernel, n, weft::from_vector(c.values, dev()), weft::from_vector(r, dev()),
                             weft::from_vector(col, dev()), grid);
                got = grid.to_vector();
            }
            if (repeat == 0) {
                EXPECT_TRUE(matches_oracle(got, want));
                first = got;
            } else {
                EXPECT_TRUE(same_bits_all(got, first)) << "repeat " << repeat;
            }
        }
    }
}

TEST_P(DeterministicAccumulate, TwoDimensionalTargets) {
    check_grid<float>(s(), false);
    check_grid<double>(s(), false);
}

TEST_P(DeterministicAccumulate, TwoDimensionalTargetThroughATransposedView) {
    check_grid<float>(s(), true);
    check_grid<double>(s(), true);
}

// A strided view as the target: its elements get the documented results, and the elements
// between them (holding NaNs with payloads, -0.0 and ordinary values) keep their bits.
template <class T>
void check_strided_view(const Suite& s) {
    using Bits = weft::test::BitsOf<T>;
    const int outputs = 40, n = 20000;
    const auto c = random_case<T>("strided", n, outputs, -20, 20, 11);
    std::vector<T> under(outputs * 3);
    for (int i = 0; i < outputs * 3; ++i) {
        const Bits quiet = Bits(1) << (std::numeric_limits<T>::digits - 2);
        const Bits nan_bits = weft::test::bits_of(kInf<T>) | quiet | static_cast<Bits>(i + 1);  // a payload
        under[i] = i % 3 == 0 ? T(0) : i % 3 == 1 ? std::bit_cast<T>(nan_bits) : -std::bit_cast<T>(nan_bits);
        if (i % 7 == 0 && i % 3 != 0) under[i] = T(-0.0);
    }
    for (int i = 0; i < outputs; ++i) under[3 * i] = c.initial[i];  // the view's elements
    for (Op op : kOps) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + type_name<T>());
        auto base = weft::from_vector(under, dev());
        weft::launch(s.ops<T>().get(op), n, weft::from_vector(c.values, dev()),
                     weft::from_vector(c.index, dev()), base.slice(0, 0, outputs * 3, 3));
        const auto got = base.to_vector();
        std::vector<T> view, gaps, want_gaps;
        for (int i = 0; i < outputs * 3; ++i) {
            if (i % 3 == 0) {
                view.push_back(got[i]);
            } else {
                gaps.push_back(got[i]);
                want_gaps.push_back(under[i]);
            }
        }
        EXPECT_TRUE(matches_oracle(view, oracle(op, c.initial, c.index, c.values)));
        EXPECT_TRUE(same_bits_all(gaps, want_gaps)) << "elements outside the view changed";
    }
}

TEST_P(DeterministicAccumulate, StridedViewTarget) {
    check_strided_view<float>(s());
    check_strided_view<double>(s());
}

// A row of a 2-D array (select) as a 1-D target: the other rows are left alone.
TEST_P(DeterministicAccumulate, RowViewTarget) {
    const int rows = 4, cols = 50, n = 20000;
    const auto c = random_case<double>("row", n, cols, -30, 30, 12);
    std::vector<double> under(rows * cols);
    for (int i = 0; i < rows * cols; ++i) under[i] = 1000.0 + i;
    for (int j = 0; j < cols; ++j) under[2 * cols + j] = c.initial[j];
    for (Op op : {Op::Add, Op::MinusEquals, Op::Min}) {
        SCOPED_TRACE(op_name(op));
        auto base = weft::from_vector(under, {rows, cols}, dev());
        weft::launch(s().f64.get(op), n, weft::from_vector(c.values, dev()),
                     weft::from_vector(c.index, dev()), base[2]);
        auto want = under;
        const auto row = oracle(op, c.initial, c.index, c.values);
        std::copy(row.begin(), row.end(), want.begin() + 2 * cols);
        EXPECT_TRUE(matches_oracle(base.to_vector(), want));
    }
}

// A broadcast view's elements share memory: all contributions to them land on that one element.
TEST_P(DeterministicAccumulate, BroadcastViewTargetSharesOneElementPerColumn) {
    const int rows = 6, cols = 8, n = 20000;
    const auto c = random_case<float>("broadcast", n, rows * cols, -20, 20, 13);
    std::vector<float> row_initial(c.initial.begin(), c.initial.begin() + cols);
    std::vector<int> r(n), col(n);
    for (int t = 0; t < n; ++t) {
        r[t] = c.index[t] / cols;
        col[t] = c.index[t] % cols;
    }
    // grid_max: (r, c) max= v and (r, c) max= v / 2; every (r, c) of column c is the one element c.
    std::vector<int> index;
    std::vector<float> values;
    for (int t = 0; t < n; ++t) {
        index.push_back(col[t]);
        values.push_back(c.values[t]);
        index.push_back(col[t]);
        values.push_back(c.values[t] * 0.5f);
    }
    auto row = weft::from_vector(row_initial, {1, cols}, dev());
    weft::launch(s().grid32.max, n, weft::from_vector(c.values, dev()), weft::from_vector(r, dev()),
                 weft::from_vector(col, dev()), row.broadcast({rows, cols}));
    EXPECT_TRUE(matches_oracle(row.to_vector(), oracle(Op::Max, row_initial, index, values)));
}

// ---------------------------------------------------------------------------------------------
// Data-dependent loops, with and without a record bound.

template <class T>
struct LoopCase {
    Case<T> c;
    std::vector<int> counts;
    // The contributions the loop makes, for the oracle.
    std::vector<int> all_index;
    std::vector<T> all_values;
};

template <class T>
LoopCase<T> loop_case(int n, int outputs, int max_count, uint64_t seed) {
    LoopCase<T> l{random_case<T>("loop", n, outputs, -20, 20, seed), {}, {}, {}};
    std::mt19937_64 rng(seed + 100);
    for (int t = 0; t < n; ++t) {
        const int k = static_cast<int>(rng() % static_cast<uint64_t>(max_count + 1));  // zero-trip loops too
        l.counts.push_back(k);
        for (int i = 0; i < k; ++i) {
            l.all_index.push_back(l.c.index[t]);
            l.all_values.push_back(l.c.values[t]);
        }
    }
    return l;
}

template <class T>
std::vector<T> run_loop(const LoopKernel<T>& kernel, const LoopCase<T>& l) {
    auto out = weft::from_vector(l.c.initial, dev());
    weft::launch(kernel, static_cast<int64_t>(l.counts.size()), weft::from_vector(l.c.values, dev()),
                 weft::from_vector(l.counts, dev()), weft::from_vector(l.c.index, dev()), out);
    return out.to_vector();
}

// The documented record overflow: it names kernel and target, says what to do, and the target
// keeps its pre-launch value.
template <class T>
void expect_overflow_report(const weft::Error& e, const std::string& kernel, const std::vector<T>& target,
                            const std::vector<T>& before) {
    EXPECT_EQ(e.kernel(), kernel) << e.what();
    EXPECT_NE(std::string(e.what()).find("'loop_target'"), std::string::npos)
        << "the error names the target: " << e.what();
    EXPECT_NE(std::string(e.what()).find("deterministic_max_records"), std::string::npos) << e.what();
    EXPECT_TRUE(same_bits_all(target, before)) << "the target must keep its pre-launch value";
}

// Loops of 0 to `max_count` trips into 1 and into 3000 outputs: the oracle's values, twice the same bits.
// With `may_overflow` (a record strategy with no bound that holds), the launch may instead
// report the documented overflow.
template <class T>
void check_loop(const LoopKernel<T>& kernel, int max_count, bool may_overflow = false) {
    SCOPED_TRACE(type_name<T>() + " up to " + std::to_string(max_count) + " trips");
    for (int outputs : {1, 3000}) {
        const auto l = loop_case<T>(6000, outputs, max_count, 14 + outputs);
        const auto want = oracle(Op::Add, l.c.initial, l.all_index, l.all_values);
        if (may_overflow) {
            auto out = weft::from_vector(l.c.initial, dev());
            const auto error = weft::test::error_by_sync(dev(), [&] {
                weft::launch(kernel, static_cast<int64_t>(l.counts.size()),
                             weft::from_vector(l.c.values, dev()), weft::from_vector(l.counts, dev()),
                             weft::from_vector(l.c.index, dev()), out);
            });
            if (error) {
                expect_overflow_report(*error, kernel.name(), out.to_vector(), l.c.initial);
                continue;
            }
            EXPECT_TRUE(matches_oracle(out.to_vector(), want)) << outputs << " outputs";
            continue;
        }
        const auto first = run_loop(kernel, l);
        EXPECT_TRUE(matches_oracle(first, want)) << outputs << " outputs";
        EXPECT_TRUE(same_bits_all(run_loop(kernel, l), first)) << outputs << " outputs, repeat";
    }
}

// No deterministic_max_records. Within the static estimate (at most one trip) every strategy
// gives the oracle's values; beyond it the Exact strategy still does, and a record strategy
// either does too or reports the documented overflow (the spec's fixed scatter capacity).
TEST_P(DeterministicAccumulate, DataDependentLoopWithoutRecordBound) {
    check_loop(s().loop32, 1);
    check_loop(s().loop64, 1);
    const bool records = GetParam().strategy == DeterministicStrategy::Records;
    check_loop(s().loop32, 8, records);  // Auto: float32 sums are exact
    check_loop(s().loop64, 8, records);  // Auto: 3000 float64 elements are exact
}

// A loop kernel alone in a module with `options` (weft::unique_kernel takes no parameter names).
template <class T>
LoopKernel<T> unique_loop(const std::string& name, const weft::OptionsPatch& options) {
    weft::Module m(name, options);
    return m.kernel(name, {"values", "loop_counts", "index", "loop_target"},
                    [](Array<T> values, Array<int> loop_counts, Array<int> index, Array<T> loop_target) {
                        auto t = weft::tid();
                        weft::for_(loop_counts[t],
                                   [&](Int) { weft::atomic_add(loop_target, index[t], values[t]); });
                    });
}

TEST(DeterministicLoops, DataDependentLoopWithARecordBoundThatHolds) {
    std::map<DeterministicStrategy, std::vector<double>> results;
    for (auto strategy : {DeterministicStrategy::Exact, DeterministicStrategy::Records}) {
        SCOPED_TRACE(weft::strategy_name(strategy));
        const weft::OptionsPatch options{.deterministic = Deterministic::RunToRun,
                                         .deterministic_strategy = strategy,
                                         .deterministic_max_records = 8};
        const auto loop32 =
            unique_loop<float>(std::string("bounded_loop_f32_") + weft::strategy_name(strategy), options);
        const auto loop64 =
            unique_loop<double>(std::string("bounded_loop_f64_") + weft::strategy_name(strategy), options);
        check_loop(loop32, 8);
        check_loop(loop64, 8);
        results[strategy] = run_loop(loop64, loop_case<double>(5000, 11, 8, 33));
    }
    EXPECT_TRUE(same_bits_all(results[DeterministicStrategy::Records], results[DeterministicStrategy::Exact]))
        << "Records vs Exact";
}

// The Exact strategy keeps no records: a record bound smaller than the loop changes nothing.
TEST(DeterministicLoops, ExactStrategyIgnoresATooSmallRecordBound) {
    const auto kernel =
        unique_loop<float>("exact_small_bound", {.deterministic = Deterministic::RunToRun,
                                                 .deterministic_strategy = DeterministicStrategy::Exact,
                                                 .deterministic_max_records = 2});
    const auto l = loop_case<float>(4096, 7, 8, 21);
    EXPECT_TRUE(matches_oracle(run_loop(kernel, l), oracle(Op::Add, l.c.initial, l.all_index, l.all_values)));
}

// Runs `launch`; returns the error reported for it: at the launch on the CPU (or with
// deterministic_debug), else no later than the next synchronize of the device.
std::optional<weft::Error> launch_error(const std::function<void()>& launch, bool immediate) {
    try {
        launch();
    } catch (const weft::Error& e) {
        return e;
    }
    if (immediate) {
        ADD_FAILURE() << "the launch returned without reporting the overflow";
    }
    try {
        weft::synchronize(dev());
    } catch (const weft::Error& e) {
        return e;
    }
    return std::nullopt;
}

void check_overflow(bool debug) {
    const std::string name = std::string("overflowing_loop") + (debug ? "_debug" : "");
    weft::Module m(name, {.deterministic = Deterministic::RunToRun,
                          .deterministic_strategy = DeterministicStrategy::Records,
                          .deterministic_max_records = 2,
                          .deterministic_debug = debug});
    // side_sums gets one record per thread (within the bound); loop_target one per trip.
    const auto kernel = m.kernel(
        name, {"values", "loop_counts", "index", "loop_target", "side_sums"},
        [](Array<float> values, Array<int> loop_counts, Array<int> index, Array<float> loop_target,
           Array<float> side_sums) {
            auto t = weft::tid();
            weft::atomic_add(side_sums, t % 3, values[t]);
            weft::for_(loop_counts[t], [&](Int) { weft::atomic_add(loop_target, index[t], values[t]); });
        });
    // Every thread emits 3 to 5 records against a bound of 2, far more than the 1024-record floor.
    const int n = 4096;
    auto l = loop_case<float>(n, 9, 2, 22);
    for (int& k : l.counts) k += 3;
    std::vector<float> initial = l.c.initial;
    initial[2] = -0.0f;
    initial[4] = kNaN<float>;
    auto out = weft::from_vector(initial, dev());
    auto side = weft::zeros<float>(3, dev());
    const auto error = launch_error(
        [&] {
            weft::launch(kernel, n, weft::from_vector(l.c.values, dev()), weft::from_vector(l.counts, dev()),
                         weft::from_vector(l.c.index, dev()), out, side);
        },
        debug || dev().is_cpu());
    ASSERT_TRUE(error.has_value()) << "a record overflow was not reported";
    expect_overflow_report(*error, name, out.to_vector(), initial);
    // Only the overflowing target is reported as overflowing; the note after it says what the
    // failed launch left: everything undone where the overflow is found at the launch, else the
    // writes to side_sums that stay applied.
    const std::string what = error->what();
    const size_t note = what.find("The launch was");
    ASSERT_NE(note, std::string::npos) << what;
    EXPECT_EQ(what.substr(0, note).find("side_sums"), std::string::npos) << what;
    if (debug || dev().is_cpu()) {
        EXPECT_NE(what.find("The launch was undone", note), std::string::npos) << what;
        EXPECT_EQ(side.to_vector(), std::vector<float>(3, 0.0f)) << "side_sums was not undone";
    } else {
        EXPECT_NE(what.find("'side_sums' were applied", note), std::string::npos) << what;
    }

    // The error was reported once; a launch within the bound then works.
    EXPECT_NO_THROW(weft::synchronize(dev()));
    auto ok = loop_case<float>(n, 9, 2, 23);
    auto ok_out = weft::from_vector(ok.c.initial, dev());
    side.zero_();
    weft::launch(kernel, n, weft::from_vector(ok.c.values, dev()), weft::from_vector(ok.counts, dev()),
                 weft::from_vector(ok.c.index, dev()), ok_out, side);
    EXPECT_TRUE(
        matches_oracle(ok_out.to_vector(), oracle(Op::Add, ok.c.initial, ok.all_index, ok.all_values)));
    std::vector<int> side_index(n);
    for (int t = 0; t < n; ++t) side_index[t] = t % 3;
    EXPECT_TRUE(matches_oracle(side.to_vector(),
                               oracle(Op::Add, std::vector<float>(3, 0.0f), side_index, ok.c.values)));
    EXPECT_NO_THROW(weft::synchronize(dev()));
}

TEST(DeterministicLoops, RecordOverflowIsAnErrorAndLeavesTheTargetAlone) {
    check_overflow(false);
}

TEST(DeterministicLoops, RecordOverflowWithDebugIsReportedAtTheLaunch) {
    check_overflow(true);
}

// ---------------------------------------------------------------------------------------------
// Every strategy against every other, bit for bit (NaN payloads included).

template <class T>
void check_strategies_agree(const Case<T>& c) {
    for (Op op : kOps) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + type_name<T>() + " " + c.name);
        const auto reference = run(suite(kConfigs[0]).ops<T>().get(op), c);
        for (const Config& config : kConfigs)
            EXPECT_TRUE(same_bits_all(run(suite(config).ops<T>().get(op), c), reference))
                << config.name << " vs " << kConfigs[0].name;
    }
}

TEST(DeterministicStrategies, EveryStrategyGivesTheSameBits) {
    check_strategies_agree(adversarial_case<float>());
    check_strategies_agree(adversarial_case<double>());
    check_strategies_agree(random_case<float>("few", 20000, 3, -150, 100, 31));
    check_strategies_agree(random_case<double>("many", 40000, 70000, -1000, 1000, 32));
    // Auto's compact windows for a large float32 target; records' long segments (a GPU sums a
    // segment of more than 8,192 records with many blocks).
    check_strategies_agree(random_case<float>("large", 40000, 70000, -40, 40, 35));
    check_strategies_agree(random_case<float>("hot", 50000, 2, -30, 30, 36));
    check_strategies_agree(random_case<double>("hot", 50000, 2, -300, 300, 37));
    check_strategies_agree(random_case<float>("one hot among many", 50000, 500, -30, 30, 38, 0.5));
}

TEST(DeterministicStrategies, LoopsFunctionsAndGridsAgreeAcrossStrategies) {
    const auto l = loop_case<double>(5000, 11, 1, 33);  // within the static estimate: no bound needed
    const auto reference = run_loop(suite(kConfigs[0]).loop64, l);
    for (const Config& config : kConfigs)
        EXPECT_TRUE(same_bits_all(run_loop(suite(config).loop64, l), reference)) << config.name;

    const auto c = random_case<float>("calls", 8000, 16, -60, 60, 34);
    auto run_calls = [&](const Suite& s) {
        auto first = weft::from_vector(c.initial, dev());
        auto second = weft::from_vector(std::vector<float>(c.initial.begin(), c.initial.begin() + 5), dev());
        weft::launch(s.fn32.three_calls, 8000, weft::from_vector(c.values, dev()),
                     weft::from_vector(c.index, dev()), first, second);
        auto a = first.to_vector();
        const auto b = second.to_vector();
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const auto calls_reference = run_calls(suite(kConfigs[0]));
    for (const Config& config : kConfigs)
        EXPECT_TRUE(same_bits_all(run_calls(suite(config)), calls_reference)) << config.name;
}

// ---------------------------------------------------------------------------------------------
// What is lowered and what is left alone, in the printed IR.

// The body of kernel or function `name` in printed IR.
std::string body_of(const std::string& ir, const std::string& header) {
    const size_t begin = ir.find(header);
    if (begin == std::string::npos) return "<" + header + " not found>\n" + ir;
    return ir.substr(begin, ir.find("\n}\n", begin) - begin);
}

TEST_P(DeterministicAccumulate, FloatAtomicsAreLoweredAndOthersAreNot) {
    const std::string ir = s().module.ir();
    for (const char* t : {"float32", "float64"}) {
        SCOPED_TRACE(t);
        const std::string T = t;
        for (const auto& [kernel, lowered] :
             std::vector<std::pair<std::string, std::string>>{{"add_", "accumulate.add"},
                                                              {"sub_", "accumulate.sub"},
                                                              {"plus_equals_", "accumulate.add"},
                                                              {"minus_equals_", "accumulate.sub"},
                                                              {"min_", "accumulate.min"},
                                                              {"max_", "accumulate.max"},
                                                              {"loop_add_", "accumulate.add"}}) {
            const std::string body = body_of(ir, "kernel " + kernel + T + "(");
            EXPECT_TRUE(has(body, lowered)) << body;
            EXPECT_FALSE(has(body, "atomic.")) << body;
        }
        const std::string fn = body_of(ir, "func add_to_" + T + "(");
        EXPECT_TRUE(has(fn, "accumulate.add")) << fn;
        EXPECT_FALSE(has(fn, "atomic.")) << fn;
    }
    const std::string untouched = body_of(ir, "kernel untouched(");
    EXPECT_FALSE(has(untouched, "accumulate.")) << untouched;
    EXPECT_TRUE(has(untouched, "atomic.add")) << untouched;
    EXPECT_TRUE(has(untouched, "atomic.max")) << untouched;
    EXPECT_TRUE(has(untouched, "atomic.cas")) << untouched;
    EXPECT_TRUE(has(untouched, "atomic.exch")) << untouched;
}

TEST_P(DeterministicAccumulate, IntegerAtomicsCasAndExchStillWork) {
    const int n = 5000;
    std::vector<int> index(n);
    for (int t = 0; t < n; ++t) index[t] = (t * 7) % 4;
    auto counts = weft::zeros<int>(8, dev());
    auto wide = weft::full<int64_t>(1, -5, dev());
    auto lock = weft::zeros<int>(1, dev());
    auto swapped = weft::zeros<int>(n, dev());
    weft::launch(s().untouched, n, weft::from_vector(index, dev()), counts, wide, lock, swapped);
    std::vector<int> want(8, 0);
    for (int t = 0; t < n; ++t) {
        want[index[t]] += 1;
        want[index[t] + 4] += 2;
    }
    EXPECT_EQ(counts.to_vector(), want);
    EXPECT_EQ(wide.to_vector(), std::vector<int64_t>{n - 1});
    EXPECT_EQ(lock.to_vector(), std::vector<int>{1});
    std::vector<int> want_swapped(n);
    for (int t = 0; t < n; ++t) want_swapped[t] = t * 3;
    EXPECT_EQ(swapped.to_vector(), want_swapped);
}

INSTANTIATE_TEST_SUITE_P(Deterministic, DeterministicAccumulate, ::testing::ValuesIn(kConfigs),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DeterministicModes, NotGuaranteedLeavesFloatAtomicsAlone) {
    weft::Module m{"det_not_guaranteed", {.deterministic = Deterministic::NotGuaranteed}};
    const OpKernels<float> ops(m);
    const std::string ir = m.ir();
    EXPECT_FALSE(has(ir, "accumulate.")) << ir;
    EXPECT_TRUE(has(body_of(ir, "kernel add_float32("), "atomic.add")) << ir;
    EXPECT_TRUE(has(body_of(ir, "kernel minus_equals_float32("), "atomic.sub")) << ir;
    EXPECT_TRUE(has(body_of(ir, "kernel max_float32("), "atomic.max")) << ir;
}

// ---------------------------------------------------------------------------------------------
// Rejections: each names the kernel, the target parameter and the user's line.

int g_first_line = 0;
int g_second_line = 0;

// `line` and `mentioned` are read after the launch, which traces the kernel and records them.
void expect_rejection(const std::function<void()>& launch, const std::string& kernel,
                      const std::string& target, const int& line, const int* mentioned = nullptr) {
    try {
        launch();
        ADD_FAILURE() << "kernel '" << kernel << "' was not rejected";
    } catch (const weft::Error& e) {
        const std::string what = e.what();
        ASSERT_GT(line, 0);
        EXPECT_EQ(e.kernel(), kernel) << what;
        EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << what;
        EXPECT_TRUE(has(e.file(), "deterministic_test.cpp")) << what;
        EXPECT_TRUE(has(what, "'" + target + "'")) << "the message names the target array: " << what;
        if (mentioned) EXPECT_TRUE(has(what, "line " + std::to_string(*mentioned))) << what;
    }
}

const weft::OptionsPatch kRunToRun{.deterministic = Deterministic::RunToRun};

TEST(DeterministicRejections, TwoReductionFamiliesOnOneTarget) {
    weft::Module m{"mixed_families", kRunToRun};
    auto rejected =
        m.kernel("mixed_families", {"values", "mixed_out"}, [](Array<float> values, Array<float> mixed_out) {
            auto tid = weft::tid();
            g_first_line = __LINE__ + 1;
            weft::atomic_add(mixed_out, 0, values[tid]);
            g_second_line = __LINE__ + 1;
            weft::atomic_max(mixed_out, 0, values[tid]);
        });
    auto values = weft::ones<float>(64, dev());
    auto out = weft::zeros<float>(1, dev());
    expect_rejection([&] { weft::launch(rejected, 64, values, out); }, "mixed_families", "mixed_out",
                     g_second_line, &g_first_line);
    EXPECT_EQ(out.to_vector(), std::vector<float>{0.0f}) << "a rejected kernel does not run";
}

TEST(DeterministicRejections, ConsumedResultOfFloatAtomicAdd) {
    weft::Module m{"consumed_float", {.deterministic = Deterministic::GpuToGpu}};
    auto rejected = m.kernel("consumed_float", {"values", "running_total", "seen"},
                             [](Array<float> values, Array<float> running_total, Array<float> seen) {
                                 auto tid = weft::tid();
                                 g_first_line = __LINE__ + 1;
                                 auto before = weft::atomic_add(running_total, 0, values[tid]);
                                 seen[tid] = before;
                             });
    auto values = weft::ones<float>(64, dev());
    auto total = weft::zeros<float>(1, dev());
    auto seen = weft::zeros<float>(64, dev());
    expect_rejection([&] { weft::launch(rejected, 64, values, total, seen); }, "consumed_float",
                     "running_total", g_first_line);
}

TEST(DeterministicRejections, LoadFromAnAccumulatedArray) {
    weft::Module m{"load_accumulated", kRunToRun};
    auto rejected = m.kernel("load_accumulated", {"values", "hot_bins", "copy"},
                             [](Array<double> values, Array<double> hot_bins, Array<double> copy) {
                                 auto tid = weft::tid();
                                 g_first_line = __LINE__ + 1;
                                 weft::atomic_add(hot_bins, tid % 4, values[tid]);
                                 g_second_line = __LINE__ + 1;
                                 copy[tid] = hot_bins[tid % 4] * 2.0;
                             });
    auto values = weft::ones<double>(64, dev());
    auto bins = weft::zeros<double>(4, dev());
    auto copy = weft::zeros<double>(64, dev());
    expect_rejection([&] { weft::launch(rejected, 64, values, bins, copy); }, "load_accumulated", "hot_bins",
                     g_second_line, &g_first_line);
}

TEST(DeterministicRejections, StoreToAnAccumulatedArray) {
    weft::Module m{"store_accumulated", kRunToRun};
    auto rejected = m.kernel("store_accumulated", {"values", "histogram"},
                             [](Array<float> values, Array<float> histogram) {
                                 auto tid = weft::tid();
                                 g_first_line = __LINE__ + 1;
                                 histogram[tid % 8] -= values[tid];
                                 g_second_line = __LINE__ + 1;
                                 histogram[8] = 1.0f;
                             });
    auto values = weft::ones<float>(64, dev());
    auto histogram = weft::zeros<float>(9, dev());
    expect_rejection([&] { weft::launch(rejected, 64, values, histogram); }, "store_accumulated", "histogram",
                     g_second_line, &g_first_line);
}

// The hazard is found through a weft function too.
TEST(DeterministicRejections, LoadInAFunctionFromAnAccumulatedArray) {
    weft::Module m{"load_in_function", kRunToRun};
    auto peek = m.func("peek", [](Array<float> a, Int i) {
        g_second_line = __LINE__ + 1;
        return a[i] + 1.0f;
    });
    auto rejected = m.kernel("peek_accumulated", {"values", "sums", "peeked"},
                             [peek](Array<float> values, Array<float> sums, Array<float> peeked) {
                                 auto tid = weft::tid();
                                 weft::atomic_add(sums, 0, values[tid]);
                                 peeked[tid] = peek(sums, 0);
                             });
    auto values = weft::ones<float>(16, dev());
    auto sums = weft::zeros<float>(1, dev());
    auto peeked = weft::zeros<float>(16, dev());
    expect_rejection([&] { weft::launch(rejected, 16, values, sums, peeked); }, "peek_accumulated", "sums",
                     g_second_line);
}

// The same kernels are fine without determinism.
TEST(DeterministicRejections, NotGuaranteedAcceptsThem) {
    auto mixed = weft::unique_kernel("mixed_plain", {.deterministic = Deterministic::NotGuaranteed},
                                     [](Array<float> values, Array<float> out) {
                                         auto tid = weft::tid();
                                         weft::atomic_add(out, 0, values[tid]);
                                         weft::atomic_max(out, 1, values[tid]);
                                     });
    auto out = weft::zeros<float>(2, dev());
    weft::launch(mixed, 10, weft::ones<float>(10, dev()), out);
    EXPECT_EQ(out.to_vector(), (std::vector<float>{10.0f, 1.0f}));
}

// ---------------------------------------------------------------------------------------------
// Option scopes: config, module options, unique kernels.

class DeterministicScopes : public ::testing::Test {
protected:
    void SetUp() override { saved_ = weft::config(); }
    void TearDown() override {
        weft::replace_config(saved_);
        EXPECT_EQ(weft::config().deterministic, saved_.deterministic);
        EXPECT_EQ(weft::config().deterministic_strategy, saved_.deterministic_strategy);
    }
    weft::Options saved_;
};

// A kernel whose result tells whether it ran deterministically: on one CPU worker a plain atomic
// adds in thread order, giving 0; the exact sum is 1 on every device.
template <class K>
float cancel_sum(const K& kernel) {
    auto out = weft::zeros<float>(1, dev());
    weft::launch(kernel, 3, weft::from_vector(std::vector<float>{1e20f, 1.0f, -1e20f}, dev()), out);
    return out.to_vector()[0];
}

auto cancel_body() {
    return [](Array<float> values, Array<float> out) { weft::atomic_add(out, 0, values[weft::tid()]); };
}

bool lowered(const weft::Module& m) {
    return has(m.ir(), "accumulate.add");
}

TEST_F(DeterministicScopes, ModuleOptionOverridesConfig) {
    weft::set_config({.deterministic = Deterministic::NotGuaranteed});
    weft::Module on{"scope_on", {.deterministic = Deterministic::RunToRun}};
    auto k_on = on.kernel("cancel", cancel_body());
    EXPECT_TRUE(lowered(on));
    EXPECT_EQ(cancel_sum(k_on), 1.0f);

    weft::set_config({.deterministic = Deterministic::RunToRun});
    weft::Module off{"scope_off", {.deterministic = Deterministic::NotGuaranteed}};
    auto k_off = off.kernel("cancel", cancel_body());
    EXPECT_FALSE(lowered(off));
    if (weft::test::in_thread_order(off))
        EXPECT_EQ(cancel_sum(k_off), 0.0f) << "plain atomics in thread order";
}

TEST_F(DeterministicScopes, ConfigIsCapturedWhenTheModuleIsCreated) {
    weft::set_config(
        {.deterministic = Deterministic::GpuToGpu, .deterministic_strategy = DeterministicStrategy::Records});
    weft::Module before{"scope_before"};
    auto k_before = before.kernel("cancel", cancel_body());
    weft::set_config({.deterministic = Deterministic::NotGuaranteed,
                      .deterministic_strategy = DeterministicStrategy::Auto});
    EXPECT_EQ(before.options().deterministic, Deterministic::GpuToGpu);
    EXPECT_EQ(before.options().deterministic_strategy, DeterministicStrategy::Records);
    EXPECT_TRUE(lowered(before));
    EXPECT_EQ(cancel_sum(k_before), 1.0f);

    weft::Module after{"scope_after"};
    after.kernel("cancel", cancel_body());
    EXPECT_FALSE(lowered(after));

    // set_options toggles an existing module, both ways.
    after.set_options({.deterministic = Deterministic::RunToRun});
    EXPECT_TRUE(lowered(after));
    before.set_options({.deterministic = Deterministic::NotGuaranteed});
    EXPECT_FALSE(lowered(before));
    if (weft::test::in_thread_order(before)) EXPECT_EQ(cancel_sum(k_before), 0.0f);
}

TEST_F(DeterministicScopes, UniqueKernelHasItsOwnOptions) {
    weft::set_config({.deterministic = Deterministic::NotGuaranteed});
    weft::Module shared{"scope_shared"};
    auto plain = shared.kernel("cancel", cancel_body());
    auto unique =
        weft::unique_kernel("scope_unique", {.deterministic = Deterministic::RunToRun}, cancel_body());
    EXPECT_EQ(unique.module().options().deterministic, Deterministic::RunToRun);
    EXPECT_TRUE(lowered(unique.module()));
    EXPECT_FALSE(lowered(shared)) << "the unique kernel's options do not reach other modules";
    EXPECT_EQ(cancel_sum(unique), 1.0f);
    if (weft::test::in_thread_order(shared)) EXPECT_EQ(cancel_sum(plain), 0.0f);

    // A unique kernel taking its strategy from the config, and its mode from its own options.
    weft::set_config({.deterministic_strategy = DeterministicStrategy::Records});
    auto records = weft::unique_kernel("scope_unique_records", {.deterministic = Deterministic::GpuToGpu},
                                       cancel_body());
    EXPECT_EQ(records.module().options().deterministic_strategy, DeterministicStrategy::Records);
    EXPECT_EQ(cancel_sum(records), 1.0f);
}

}  // namespace
