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

#include "support/half_cases.hpp"

namespace {

using weft::bfloat16;
using weft::float16;
using weft::test::agree;
using weft::test::Config;
using weft::test::half_case;
using weft::test::half_oracle;
using weft::test::HalfCase;
using weft::test::HalfNames;
using weft::test::HalfTypes;
using weft::test::hex;
using weft::test::kConfigs;
using weft::test::Op;

template <class H>
std::vector<uint16_t> run(const Config& config, Op op, const HalfCase<H>& c) {
    return weft::test::run_half(weft::test::half_suite(config).ops<H>().get(op), c);
}

template <class H>
class HalfDeterministic : public ::testing::Test {};
TYPED_TEST_SUITE(HalfDeterministic, HalfTypes, HalfNames);

// float16: 2048 + 1000 ones is 3048 (a sequential float16 sum stays at 2048: 2049 rounds to even).
// bfloat16: 256 + 1000 ones is 1256 (likewise stuck at 256).
TYPED_TEST(HalfDeterministic, SumIsNotASequentialHalfSum) {
    using H = TypeParam;
    const double big = std::is_same_v<H, float16> ? 2048 : 256;
    HalfCase<H> c{"stuck", {H(0)}, {}, {}};
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
    HalfCase<H> c{"once", {H(0)}, {0, 0, 0}, {H(1), H(half_ulp), H(tiny)}};
    const float through_float = static_cast<float>(1.0 + half_ulp + tiny);
    ASSERT_EQ(H(through_float).bits, H(1).bits);  // the double rounding this rules out
    const uint16_t want = H(1 + 2 * half_ulp).bits;
    ASSERT_EQ(weft::test::reference_sum<H>(H(0), c.values), want);
    for (const Config& config : kConfigs)
        for (const Op op : {Op::Add, Op::PlusEquals})
            EXPECT_EQ(hex(run(config, op, c)[0]), hex(want)) << config.name;
}

// Every op and config on random values into one output and into many, against the oracle, and
// identical bits on a second launch.
TYPED_TEST(HalfDeterministic, EveryOpMatchesTheExactOracle) {
    using H = TypeParam;
    const bool f16 = std::is_same_v<H, float16>;
    const std::vector<HalfCase<H>> cases = {
        half_case<H>("one_output", 20000, 1, f16 ? -26 : -30, f16 ? 6 : 20, 1),
        half_case<H>("many_outputs", 20000, 512, f16 ? -26 : -140, f16 ? 15 : 20, 2),
        half_case<H>("overflowing", 4000, 4, f16 ? 12 : 120, f16 ? 15 : 127, 3),
    };
    for (const HalfCase<H>& c : cases) {
        for (const Op op : weft::test::kOps) {
            const auto want = half_oracle(op, c);
            for (const Config& config : kConfigs) {
                const auto got = run(config, op, c);
                EXPECT_TRUE(agree<H>(got, want))
                    << c.name << " " << weft::test::op_name(op) << " " << config.name;
                EXPECT_EQ(got, run(config, op, c))
                    << "a second launch differs: " << c.name << " " << config.name;
            }
        }
    }
}

// Infinities and NaNs follow the sum rules; min/max take a NaN as the winner.
TYPED_TEST(HalfDeterministic, SpecialValues) {
    using H = TypeParam;
    const H inf = H(INFINITY), nan = H(NAN), one = H(1);
    const H neg_inf = H::from_bits(static_cast<uint16_t>(inf.bits | 0x8000u));
    const HalfCase<H> c{
        "special", {one, one, one, H::from_bits(0x8000)}, {0, 1, 1, 2, 3}, {inf, inf, neg_inf, nan, H(-0.0)}};
    for (const Op op : weft::test::kOps) {
        const auto want = half_oracle(op, c);
        for (const Config& config : kConfigs)
            EXPECT_TRUE(agree<H>(run(config, op, c), want)) << weft::test::op_name(op) << " " << config.name;
    }
}

}  // namespace
