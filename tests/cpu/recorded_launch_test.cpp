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

    const weft::Error scalar = error_from([&] { launch.set("scale", 2.0); });
    EXPECT_TRUE(has(scalar.message(), "'scale' is a float32 scalar but the value is a float64"))
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
