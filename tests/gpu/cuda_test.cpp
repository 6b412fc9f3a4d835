// GPU-only behaviour: properties, copies, CPU/GPU agreement, streams, events, errors, scan.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Device;

const Device gpu = Device::cuda(0);
const Device cpu = Device::cpu();

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if constexpr (std::is_same_v<T, bool>)
        std::copy(v.begin(), v.end(), b.begin());
    else
        std::memcpy(b.data(), v.data(), b.size());
    return b;
}

TEST(Cuda, DefaultDeviceAndPropertiesDescribeTheGpu) {
    EXPECT_TRUE(weft::cuda_available());
    EXPECT_EQ(weft::default_device(), gpu);
    EXPECT_EQ(weft::device("cuda:0"), gpu);
    const weft::DeviceInfo info = weft::device_info(gpu);
    EXPECT_FALSE(info.name.empty());
    EXPECT_GE(info.compute_capability_major, 5);
    EXPECT_GT(info.multiprocessors, 0);
    EXPECT_GT(info.total_memory, uint64_t{1} << 30);
    EXPECT_THROW(weft::device("cuda:" + std::to_string(weft::devices().size() + 5)), weft::Error);
}

template <class T>
void round_trip(std::vector<T> values) {
    auto on_gpu = weft::from_vector(values, gpu);
    auto copied = on_gpu.to(gpu);  // device to device
    auto back = copied.to(cpu);
    EXPECT_EQ(bytes_of(back.to_vector()), bytes_of(values));
    EXPECT_EQ(bytes_of(copied.to_vector()), bytes_of(values));
}

TEST(Cuda, CopiesEveryDtypeBetweenHostAndDevice) {
    round_trip<bool>({true, false, true, true});
    round_trip<int32_t>({1, -2, 3, INT32_MIN, INT32_MAX});
    round_trip<uint32_t>({1, 2, UINT32_MAX});
    round_trip<int64_t>({INT64_MIN, 0, INT64_MAX});
    round_trip<uint64_t>({0, UINT64_MAX, 12345678901234ull});
    round_trip<float>({1.5f, -0.0f, std::numeric_limits<float>::infinity(), 1e-42f});
    round_trip<double>({1.5, -0.0, 1e300, 4.9e-324});
    auto z = weft::full<float>({3, 5}, 2.5f, gpu);
    z.zero_();
    EXPECT_EQ(z.to_vector(), std::vector<float>(15, 0.0f));
}

// A kernel whose arithmetic is exact, so CPU and GPU must agree to the bit.
weft::Module agreement{"agreement"};
auto mix = agreement.kernel(
    "mix", {"x", "i", "out_f", "out_i", "hist"},
    [](Array<float> x, Array<int> i, Array<float> out_f, Array<int64_t> out_i, Array<int> hist) {
        auto t = weft::tid();
        auto v = x[t];
        weft::Float acc = 0.0f;
        weft::for_(i[t] & 7, [&](weft::Int k) { acc += v * weft::cast<float>(k) - 0.5f; });
        out_f[t] = weft::select(v > 0.0f, weft::floor(acc), weft::abs(acc));
        out_i[t] = weft::cast<int64_t>(i[t]) * int64_t(1 << 20) + weft::cast<int64_t>(t);
        weft::atomic_add(hist, i[t] & 15, 1);
        weft::atomic_max(hist, 16, i[t]);
    });

TEST(Cuda, ResultsMatchTheCpuBitForBit) {
    const int n = 100000;
    std::mt19937 rng(7);
    std::vector<float> x(n);
    std::vector<int> i(n);
    for (int k = 0; k < n; ++k) {
        x[k] = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 8.0f;
        i[k] = static_cast<int>(rng() % 100000);
    }
    auto run = [&](Device d) {
        auto out_f = weft::zeros<float>(n, d);
        auto out_i = weft::zeros<int64_t>(n, d);
        auto hist = weft::zeros<int>(17, d);
        weft::launch(mix, n, weft::from_vector(x, d), weft::from_vector(i, d), out_f, out_i, hist);
        return std::tuple(bytes_of(out_f.to_vector()), out_i.to_vector(), hist.to_vector());
    };
    EXPECT_EQ(run(cpu), run(gpu));
}

TEST(Cuda, BlockSizeDoesNotChangeResults) {
    const int n = 70001;
    std::vector<float> x(n, 1.0f);
    std::vector<int> i(n);
    std::iota(i.begin(), i.end(), 0);
    std::vector<std::vector<float>> results;
    for (int block : {32, 128, 256, 1024}) {
        agreement.set_options({.block_dim = block});
        auto out_f = weft::zeros<float>(n, gpu);
        auto out_i = weft::zeros<int64_t>(n, gpu);
        auto hist = weft::zeros<int>(17, gpu);
        weft::launch(mix, n, weft::from_vector(x, gpu), weft::from_vector(i, gpu), out_f, out_i, hist);
        results.push_back(out_f.to_vector());
        EXPECT_EQ(hist.to_vector()[16], n - 1);
    }
    agreement.set_options({.block_dim = 256});
    for (const auto& r : results) EXPECT_EQ(r, results[0]);
}

weft::Module streams{"streams"};
auto add_one = streams.kernel("add_one", {"a"}, [](Array<float> a) {
    auto t = weft::tid();
    a[t] = a[t] + 1.0f;
});

TEST(Cuda, StreamsOrderWorkAndEventsTimeIt) {
    const int n = 1 << 20;
    weft::Stream s1(gpu);
    weft::Stream s2(gpu);
    auto a = weft::zeros<float>(n, gpu);
    weft::Event start(gpu), mid(gpu), end(gpu);
    {
        weft::ScopedStream scope(s1);
        start.record();
        for (int r = 0; r < 10; ++r) weft::launch(add_one, n, a);
        mid.record();
    }
    {
        // s2 waits for s1's ten launches, then adds one more.
        weft::ScopedStream scope(s2);
        s2.wait(mid);
        weft::launch(add_one, n, a);
        end.record();
    }
    s2.synchronize();
    EXPECT_EQ(a.to_vector(), std::vector<float>(n, 11.0f));
    EXPECT_GT(weft::Event::elapsed_ms(start, mid), 0.0f);
    EXPECT_GE(weft::Event::elapsed_ms(start, end), weft::Event::elapsed_ms(start, mid));
}

weft::Module faults{"faults"};
auto scatter = faults.kernel("scatter", {"where", "out"}, [](Array<int64_t> where, Array<float> out) {
    auto t = weft::tid();
    out[where[t]] = 1.0f;
});

TEST(Cuda, AsynchronousErrorsSurfaceAtSynchronizationWithTheKernelName) {
    auto where = weft::from_vector<int64_t>({int64_t(1) << 40}, gpu);
    auto out = weft::zeros<float>(4, gpu);
    weft::launch(scatter, 1, where, out);  // returns before the fault is known
    try {
        weft::synchronize(gpu);
        FAIL() << "the illegal address was not reported";
    } catch (const weft::Error& e) {
        EXPECT_NE(std::string(e.what()).find("'scatter'"), std::string::npos) << e.what();
    }
}

TEST(Cuda, DebugModeReportsTheFailingLaunchItself) {
    faults.set_options({.debug = true});
    auto where = weft::from_vector<int64_t>({int64_t(1) << 40}, gpu);
    auto out = weft::zeros<float>(4, gpu);
    try {
        weft::launch(scatter, 1, where, out);
        FAIL() << "debug mode did not check the launch";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "scatter");
    }
}

TEST(Cuda, BoundsCheckingNamesTheArrayAndUndoesTheLaunch) {
    faults.set_options({.bounds_check = true});
    std::vector<int64_t> where(1000);
    std::iota(where.begin(), where.end(), 0);
    where[777] = 5000;
    auto w = weft::from_vector(where, gpu);
    auto out = weft::full<float>(1000, -3.0f, gpu);
    try {
        weft::launch(scatter, 1000, w, out);
        FAIL() << "the out-of-bounds store was not reported";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "scatter");
        EXPECT_NE(e.message().find("index 5000"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("'out'"), std::string::npos) << e.message();
    }
    EXPECT_EQ(out.to_vector(), std::vector<float>(1000, -3.0f));
    faults.set_options({.bounds_check = false});
}

TEST(Cuda, ScanMatchesTheCpuForIntegersAndExactFloats) {
    for (int64_t n : {1, 1000, 1024, 1025, 300000, 3000001}) {
        std::vector<int> vi(static_cast<size_t>(n));
        std::vector<float> vf(static_cast<size_t>(n));
        for (int64_t k = 0; k < n; ++k) {
            vi[k] = static_cast<int>((k * 7919) % 13) - 6;
            vf[k] = static_cast<float>((k * 31) % 5);
        }
        for (bool inclusive : {true, false}) {
            auto ci = weft::from_vector(vi, cpu), gi = weft::from_vector(vi, gpu);
            auto co = weft::empty<int>(n, cpu), go = weft::empty<int>(n, gpu);
            weft::array_scan(ci, co, inclusive);
            weft::array_scan(gi, go, inclusive);
            EXPECT_EQ(co.to_vector(), go.to_vector()) << "n=" << n;
            auto cf = weft::from_vector(vf, cpu), gf = weft::from_vector(vf, gpu);
            weft::array_scan(cf, cf, inclusive);  // in place
            weft::array_scan(gf, gf, inclusive);
            EXPECT_EQ(cf.to_vector(), gf.to_vector()) << "n=" << n;
        }
    }
}

TEST(Cuda, FloatScanRepeatsExactly) {
    const int n = 1 << 21;
    std::mt19937 rng(3);
    std::vector<float> v(n);
    for (auto& x : v) x = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
    auto in = weft::from_vector(v, gpu);
    auto first = weft::empty<float>(n, gpu);
    weft::array_scan(in, first, true);
    const auto expected = bytes_of(first.to_vector());
    for (int r = 0; r < 3; ++r) {
        auto again = weft::empty<float>(n, gpu);
        weft::array_scan(in, again, true);
        EXPECT_EQ(bytes_of(again.to_vector()), expected);
    }
}

TEST(Cuda, LaunchRejectsArraysOnTwoDevices) {
    auto where = weft::zeros<int64_t>(4, gpu);
    auto out = weft::zeros<float>(4, cpu);
    const int line = __LINE__ + 2;
    try {
        weft::launch(scatter, 4, where, out);
        FAIL() << "mixed devices were accepted";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "scatter");
        EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
        EXPECT_NE(e.message().find("'out') is on cpu but earlier arrays are on cuda:0"), std::string::npos)
            << e.message();
    }
}

}  // namespace
