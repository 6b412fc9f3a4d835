// Deterministic-mode details: the one NaN every NaN result has, and parameter names of unique kernels.
#include <gtest/gtest.h>

#include <bit>
#include <limits>

#include "support/test_device.hpp"

namespace {

using weft::Array;

TEST(DeterministicDetails, EveryNanResultIsTheCanonicalQuietNan) {
    const weft::Device dev = weft::test::test_device();
    weft::Module m{"nan_results", {.deterministic = weft::Deterministic::RunToRun}};
    auto reduce =
        m.kernel("reduce", {"values", "sums", "maxima", "minima"},
                 [](Array<float> values, Array<float> sums, Array<float> maxima, Array<float> minima) {
                     auto t = weft::tid();
                     weft::atomic_add(sums, 0, values[t]);
                     weft::atomic_max(maxima, 0, values[t]);
                     weft::atomic_min(minima, 0, values[t]);
                 });
    // A NaN with a payload and a sign among ordinary values.
    const float odd_nan = std::bit_cast<float>(0xffc01234u);
    auto values = weft::from_vector<float>({1.0f, odd_nan, -2.0f}, dev);
    auto sums = weft::zeros<float>(1, dev);
    auto maxima = weft::zeros<float>(1, dev);
    auto minima = weft::zeros<float>(1, dev);
    weft::launch(reduce, 3, values, sums, maxima, minima);
    for (const auto& result : {sums, maxima, minima})
        EXPECT_EQ(std::bit_cast<uint32_t>(result.to_vector()[0]), 0x7fc00000u);
}

TEST(DeterministicDetails, UniqueKernelsNameTheirParameters) {
    const weft::Device dev = weft::test::test_device();
    auto rejected = weft::unique_kernel("named_unique", {.deterministic = weft::Deterministic::RunToRun},
                                        {"values", "totals"}, [](Array<float> values, Array<float> totals) {
                                            auto t = weft::tid();
                                            weft::atomic_add(totals, 0, values[t]);
                                            weft::atomic_max(totals, 0, values[t]);
                                        });
    try {
        weft::launch(rejected, 2, weft::zeros<float>(2, dev), weft::zeros<float>(1, dev));
        FAIL() << "two reduction families on one target were accepted";
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find("'totals'"), std::string::npos) << e.what();
        EXPECT_EQ(rejected.module().options().deterministic, weft::Deterministic::RunToRun);
    }
}

}  // namespace
