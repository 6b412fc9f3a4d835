// Run with WEFT_BOUNDS_CHECK=1 (tests/CMakeLists.txt): the environment turns the check on for
// every module whose options do not set bounds_check, and an out-of-bounds write is a weft::Error
// naming the user's line, with the launch undone, instead of corrupting memory.
#include <gtest/gtest.h>

#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;

TEST(BoundsCheckEnvironment, TurnsTheCheckOnWhereOptionsDoNotSetIt) {
    ASSERT_TRUE(weft::config().bounds_check) << "run this program with WEFT_BOUNDS_CHECK=1";
    const weft::Device dev = weft::test::test_device();
    weft::Module m{"environment_bounds", {.cpu_threads = 1}};
    int line = 0;
    auto k = m.kernel("write_past_end", {"out"}, [&](Array<float> out) {
        auto t = weft::tid();
        line = __LINE__, out[t + 1] = 1.0f;
    });
    auto out = weft::full<float>(8, -2.0f, dev);
    const weft::Error e = weft::test::error_from([&] { weft::launch(k, 8, out); });
    EXPECT_EQ(static_cast<int>(e.line()), line) << e.what();
    EXPECT_TRUE(
        weft::test::has(e.what(), "index 8 is out of bounds for dimension 0 of array 'out' (extent 8)"))
        << e.what();
    EXPECT_EQ(out.to_vector(), std::vector<float>(8, -2.0f)) << "the launch was undone";
}

TEST(BoundsCheckEnvironment, OptionsThatSetTheCheckKeepTheirValue) {
    weft::Module off{"environment_bounds_off", {.bounds_check = false}};
    off.kernel("copy", {"src", "dst"}, [](Array<float> src, Array<float> dst) {
        auto t = weft::tid();
        dst[t] = src[t];
    });
    EXPECT_FALSE(off.options().bounds_check);
    EXPECT_EQ(off.generated_source(weft::Device::cpu()).find("wf::checked"), std::string::npos);
}

}  // namespace
