// weft::RecordedLaunch: a launch checked once and issued many times, with arguments replaced by
// name; deterministic kernels included, inside and outside graph captures.
#include <gtest/gtest.h>

#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Float;
using weft::test::error_from;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

// sums[bins[t]] += scale * values[t], deterministically.
struct Scaled {
    weft::Module module{"recorded_scaled", {.deterministic = Deterministic::RunToRun}};
    weft::Kernel<Array<float>, Array<int>, weft::Scalar<float>, Array<float>> kernel =
        module.kernel("recorded_scaled", {"values", "bins", "scale", "sums"},
                      [](Array<float> values, Array<int> bins, Float scale, Array<float> sums) {
                          auto t = weft::tid();
                          weft::atomic_add(sums, bins[t], scale * values[t]);
                      });
};

TEST(RecordedLaunch, IssuesWithItsArgumentsAndTheirReplacements) {
    Scaled s;
    const int n = 1000;
    auto values = weft::ones<float>(n, dev());
    std::vector<int> b(n);
    for (int i = 0; i < n; ++i) b[i] = i % 4;
    auto bins = weft::from_vector(b, dev());
    auto sums = weft::zeros<float>(4, dev());
    weft::RecordedLaunch launch(s.kernel, n, values, bins, 1.0f, sums);
    launch.launch();
    launch.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 500.0f));

    launch.set("scale", 0.5f);
    auto other = weft::zeros<float>(4, dev());
    launch.set("sums", other);
    launch.launch();
    EXPECT_EQ(other.to_vector(), std::vector<float>(4, 125.0f));
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 500.0f)) << "the replaced array is not written";

    // Extents may change: a shorter launch over a shorter array.
    auto fewer = weft::ones<float>(8, dev());
    launch.set("values", fewer);
    launch.set_dim(8);
    launch.launch();
    EXPECT_EQ(other.to_vector(), std::vector<float>(4, 126.0f));
}

TEST(RecordedLaunch, ReplacementsKeepTheArgumentsKindDtypeAndShapeClass) {
    Scaled s;
    auto values = weft::ones<float>(16, dev());
    auto bins = weft::zeros<int>(16, dev());
    auto sums = weft::zeros<float>(4, dev());
    weft::RecordedLaunch launch(s.kernel, 16, values, bins, 1.0f, sums);

    const weft::Error dtype = error_from([&] { launch.set("sums", weft::zeros<double>(4, dev())); });
    EXPECT_EQ(dtype.kernel(), "recorded_scaled");
    EXPECT_TRUE(has(dtype.message(), "recorded as a 1-D contiguous array of float32")) << dtype.message();
    EXPECT_TRUE(has(dtype.message(), "float64")) << dtype.message();
    EXPECT_TRUE(has(dtype.file(), "recorded_launch_test.cpp")) << dtype.file();

    auto wide = weft::zeros<float>({4, 8}, dev());
    const weft::Error strided = error_from([&] { launch.set("sums", wide.select(1, 0)); });
    EXPECT_TRUE(has(strided.message(), "cannot become a 1-D strided array of float32")) << strided.message();

    // Scalars follow weft::launch's rule: a value the parameter's type holds, of any C++ type.
    const weft::Error scalar = error_from([&] { launch.set("scale", 1e300); });
    EXPECT_TRUE(has(scalar.message(),
                    "the value 1.0000000000000001e+300 for 'scale' does not fit its float32 "
                    "parameter (float32 holds finite values up to 3.40282347e+38"))
        << scalar.message();
    const weft::Error kind = error_from([&] { launch.set("scale", values); });
    EXPECT_TRUE(has(kind.message(), "is a scalar")) << kind.message();
    const weft::Error unknown = error_from([&] { launch.set("total", values); });
    EXPECT_TRUE(has(unknown.message(), "no parameter named 'total'")) << unknown.message();
    EXPECT_TRUE(has(unknown.message(), "'values', 'bins', 'scale', 'sums'")) << unknown.message();

    // A refused replacement changes nothing.
    launch.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>({16.0f, 0.0f, 0.0f, 0.0f}));
}

// set() converts scalars by weft::launch's rule: an int or a double for a float32 parameter, a
// whole double for an int32 one; a value the type cannot hold is refused, naming the caller's line.
TEST(RecordedLaunch, ScalarsConvertAsInALaunch) {
    weft::Module module{"recorded_convert"};
    auto kernel = module.kernel("recorded_convert", {"scale", "count", "out"},
                                [](Float scale, weft::Int count, Array<float> out) {
                                    out[weft::tid()] = scale * weft::Float(count);
                                });
    auto out = weft::zeros<float>(2, dev());
    weft::launch(kernel, 2, 2, 3.0, out);  // the launch's rule
    EXPECT_EQ(out.to_vector(), std::vector<float>(2, 6.0f));
    weft::RecordedLaunch recorded(kernel, 2, 1.0f, 1, out);
    recorded.set("scale", 2);
    recorded.set("count", 5.0);
    recorded.launch();
    EXPECT_EQ(out.to_vector(), std::vector<float>(2, 10.0f));
    recorded.set("scale", 0.25);
    recorded.set("count", int64_t{8});
    recorded.launch();
    EXPECT_EQ(out.to_vector(), std::vector<float>(2, 2.0f));

    const int line = __LINE__ + 1;
    const weft::Error e = error_from([&] { recorded.set("count", 1.5); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(),
                    "the value 1.5 for 'count' does not fit its int32 parameter (int32 holds "
                    "whole numbers from -2147483648 to 2147483647)"))
        << e.message();
    EXPECT_TRUE(has(error_from([&] { recorded.set("count", int64_t{1} << 40); }).message(), "1099511627776"));
    EXPECT_TRUE(has(error_from([&] { recorded.set("out", 1); }).message(), "'out' is an array"));
    recorded.launch();  // refused values changed nothing
    EXPECT_EQ(out.to_vector(), std::vector<float>(2, 2.0f));
}

// Captured, a recorded launch keeps the arguments it had: later replacements do not change the
// graph.
TEST(RecordedLaunch, ACapturedIssueKeepsItsArguments) {
    Scaled s;
    auto values = weft::ones<float>(64, dev());
    auto bins = weft::zeros<int>(64, dev());
    auto sums = weft::zeros<float>(4, dev());
    weft::RecordedLaunch launch(s.kernel, 64, values, bins, 2.0f, sums);
    launch.launch();
    const weft::Graph graph = weft::capture(dev(), [&] { launch.launch(); });
    launch.set("scale", 100.0f);
    graph.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>({256.0f, 0.0f, 0.0f, 0.0f}));
    const weft::RecordedLaunch copy = launch;  // copies do not share replacements
    launch.set("scale", 1.0f);
    copy.launch();
    EXPECT_EQ(sums.to_vector(), std::vector<float>({6656.0f, 0.0f, 0.0f, 0.0f}));
}

}  // namespace
