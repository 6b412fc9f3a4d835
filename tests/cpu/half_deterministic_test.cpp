// Deterministic atomics on float16 and bfloat16 targets, in every configuration: a sum is the exact
// sum rounded once to the type (not a sequential half-precision sum, and not rounded to float32
// on the way), min/max follow the total order, and repeated launches give the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/deterministic_cases.hpp"
#include "support/half_reference.hpp"

namespace {

using weft::bfloat16;
using weft::float16;
using weft::test::Config;
using weft::test::kConfigs;
using weft::test::Op;
using weft::test::OpKernels;

std::string hex(uint16_t b) {
    char text[8];
    std::snprintf(text, sizeof text, "0x%04x", b);
    return text;
}

// The op kernels of support/deterministic_cases.hpp over both half types, one module per config.
struct Suite {
    weft::Module module;
    OpKernels<float16> f16;
    OpKernels<bfloat16> bf16;

    explicit Suite(const Config& c)
        : module(std::string("half_det_") + c.name, options(c)),
          f16(module),
          bf16(module) {}

    static weft::OptionsPatch options(const Config& c) {
        weft::OptionsPatch p;
        p.deterministic = c.mode;
        p.deterministic_strategy = c.strategy;
        return p;
    }

    template <class H>
    const OpKernels<H>& ops() const {
        if constexpr (std::is_same_v<H, float16>)
            return f16;
        else
            return bf16;
    }
};

const Suite& suite(const Config& c) {
    static std::map<std::string, std::unique_ptr<Suite>> suites;
    auto& s = suites[c.name];
    if (!s) s = std::make_unique<Suite>(c);
    return *s;
}

template <class H>
using Case = weft::test::Case<H>;

// The documented result of every destination.
template <class H>
std::vector<uint16_t> oracle(Op op, const Case<H>& c) {
    std::vector<std::vector<H>> by(c.initial.size());
    for (size_t t = 0; t < c.index.size(); ++t) {
        H v = c.values[t];
        if (weft::test::negates(op)) v.bits ^= 0x8000u;
        by[static_cast<size_t>(c.index[t])].push_back(v);
    }
    std::vector<uint16_t> out;
    for (size_t i = 0; i < by.size(); ++i) {
        if (weft::test::is_sum(op)) {
            out.push_back(weft::test::reference_sum<H>(c.initial[i], by[i]));
            continue;
        }
        // Min/max under the total order, through float32 (exact), with the float oracle.
        std::vector<float> values;
        for (H v : by[i]) values.push_back(static_cast<float>(v));
        const float init = c.initial[i];
        const float r = op == Op::Min ? weft::test::total_order_min(init, values)
                                      : weft::test::total_order_max(init, values);
        out.push_back(std::isnan(r) ? weft::test::reference_round<H>(NAN) : H(r).bits);
    }
    return out;
}

template <class H>
std::vector<uint16_t> run(const Config& config, Op op, const Case<H>& c) {
    const auto got = weft::test::run(suite(config).ops<H>().get(op), c);
    std::vector<uint16_t> bits;
    for (H h : got) bits.push_back(h.bits);
    return bits;
}

template <class H>
::testing::AssertionResult agree(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want) {
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] == want[i] || (weft::test::half_is_nan<H>(got[i]) && weft::test::half_is_nan<H>(want[i])))
            continue;
        if (bad++ < 5) first += "\n  [" + std::to_string(i) + "] got " + hex(got[i]) + ", want " + hex(want[i]);
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << first << "\n  " << bad << " of " << got.size() << " differ";
}

// Random values of H with binary exponents in [min_exp, max_exp] (subnormals below the normal
// range), random signs and significands.
template <class H>
H random_half(std::mt19937_64& rng, int min_exp, int max_exp) {
    constexpr int kM = weft::test::HalfFields<H>::kMantissa;
    const int e = min_exp + static_cast<int>(rng() % static_cast<uint64_t>(max_exp - min_exp + 1));
    const int biased = std::max(0, e + weft::test::kHalfBias<H>);
    const uint16_t bits = static_cast<uint16_t>(((rng() & 1) << 15) | (biased << kM) | (rng() & ((1u << kM) - 1)));
    return H::from_bits(bits);
}

template <class H>
Case<H> random_case(std::string name, int n, int outputs, int min_exp, int max_exp, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Case<H> c{std::move(name), {}, {}, {}};
    for (int i = 0; i < outputs; ++i) c.initial.push_back(random_half<H>(rng, min_exp, max_exp));
    for (int t = 0; t < n; ++t) {
        c.index.push_back(static_cast<int>(rng() % static_cast<uint64_t>(outputs)));
        c.values.push_back(random_half<H>(rng, min_exp, max_exp));
    }
    return c;
}

template <class H>
class HalfDeterministic : public ::testing::Test {};
using HalfTypes = ::testing::Types<float16, bfloat16>;
class HalfNames {
public:
    template <class H>
    static std::string GetName(int) {
        return weft::dtype_name(weft::dtype_of<H>);
    }
};
TYPED_TEST_SUITE(HalfDeterministic, HalfTypes, HalfNames);

// float16: 2048 + 1000 ones is 3048 (a sequential float16 sum stays at 2048: 2049 rounds to even).
// bfloat16: 256 + 1000 ones is 1256 (likewise stuck at 256).
TYPED_TEST(HalfDeterministic, SumIsNotASequentialHalfSum) {
    using H = TypeParam;
    const double big = std::is_same_v<H, float16> ? 2048 : 256;
    Case<H> c{"stuck", {H(0)}, {}, {}};
    c.values.push_back(H(big));
    for (int i = 0; i < 1000; ++i) c.values.push_back(H(1));
    c.index.assign(c.values.size(), 0);
    H sequential(0);
    for (H v : c.values) sequential = H(static_cast<float>(sequential) + static_cast<float>(v));
    ASSERT_EQ(static_cast<float>(sequential), big);  // the sum the test rules out
    for (const Config& config : kConfigs) {
        const auto got = run(config, Op::Add, c);
        EXPECT_EQ(hex(got[0]), hex(H(big + 1000).bits)) << config.name;
    }
}

// 1 + 2^-11 + 2^-24 (float16), 1 + 2^-8 + 2^-25 (bfloat16): the exact sum is just above the
// midpoint between 1 and the next value, so it rounds up; rounded to float32 first it would be
// the midpoint itself, and then round to even: down to 1.
TYPED_TEST(HalfDeterministic, SumIsRoundedOnceNotThroughFloat32) {
    using H = TypeParam;
    const bool f16 = std::is_same_v<H, float16>;
    const double half_ulp = std::ldexp(1.0, f16 ? -11 : -8);
    const double tiny = std::ldexp(1.0, f16 ? -24 : -25);
    Case<H> c{"once", {H(0)}, {0, 0, 0}, {H(1), H(half_ulp), H(tiny)}};
    const float through_float = static_cast<float>(1.0 + half_ulp + tiny);
    ASSERT_EQ(H(through_float).bits, H(1).bits);  // the double rounding this rules out
    const uint16_t want = H(1 + 2 * half_ulp).bits;
    ASSERT_EQ(weft::test::reference_sum<H>(H(0), c.values), want);
    for (const Config& config : kConfigs)
        for (const Op op : {Op::Add, Op::PlusEquals}) EXPECT_EQ(hex(run(config, op, c)[0]), hex(want)) << config.name;
}

// Every op and config on random values into one output and into many, against the oracle, and
// identical bits on a second launch.
TYPED_TEST(HalfDeterministic, EveryOpMatchesTheExactOracle) {
    using H = TypeParam;
    const bool f16 = std::is_same_v<H, float16>;
    const std::vector<Case<H>> cases = {
        random_case<H>("one_output", 20000, 1, f16 ? -26 : -30, f16 ? 6 : 20, 1),
        random_case<H>("many_outputs", 20000, 512, f16 ? -26 : -140, f16 ? 15 : 20, 2),
        random_case<H>("overflowing", 4000, 4, f16 ? 12 : 120, f16 ? 15 : 127, 3),
    };
    for (const Case<H>& c : cases) {
        for (const Op op : weft::test::kOps) {
            const auto want = oracle(op, c);
            for (const Config& config : kConfigs) {
                const auto got = run(config, op, c);
                EXPECT_TRUE(agree<H>(got, want)) << c.name << " " << weft::test::op_name(op) << " " << config.name;
                EXPECT_EQ(got, run(config, op, c)) << "a second launch differs: " << c.name << " " << config.name;
            }
        }
    }
}

// Infinities and NaNs follow the sum rules; min/max take a NaN as the winner.
TYPED_TEST(HalfDeterministic, SpecialValues) {
    using H = TypeParam;
    const H inf = H(INFINITY), nan = H(NAN), one = H(1);
    const H neg_inf = H::from_bits(static_cast<uint16_t>(inf.bits | 0x8000u));
    const Case<H> c{"special", {one, one, one, H::from_bits(0x8000)}, {0, 1, 1, 2, 3}, {inf, inf, neg_inf, nan, H(-0.0)}};
    for (const Op op : weft::test::kOps) {
        const auto want = oracle(op, c);
        for (const Config& config : kConfigs)
            EXPECT_TRUE(agree<H>(run(config, op, c), want)) << weft::test::op_name(op) << " " << config.name;
    }
}

}  // namespace
