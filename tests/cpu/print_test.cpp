// weft::print: printf-style conversions of every type, checked against the host's snprintf on captured
// stdout.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;

weft::Device dev() {
    return weft::test::test_device();
}

// One worker, so that lines come in thread order (many workers: cpu_workers_test.cpp).
weft::Module& module() {
    static weft::Module m{"print", {.cpu_threads = 1}};
    return m;
}

template <class... A>
std::string host_format(const char* format, A... args) {
    std::string out(static_cast<size_t>(std::snprintf(nullptr, 0, format, args...)), '\0');
    std::snprintf(out.data(), out.size() + 1, format, args...);
    return out;
}

// Runs `launch` with stdout captured; returns what the kernel printed.
template <class F>
std::string captured(F launch) {
    testing::internal::CaptureStdout();
    launch();
    std::fflush(stdout);
    return testing::internal::GetCapturedStdout();
}

const auto k_int32 = module().kernel("print_int32", {"v"}, [](Array<int32_t> v) {
    auto t = weft::tid();
    weft::print("%d|%i|%5d|%-5d|%+d|%05d|%u|%x|%X|%o|%#x\n", v[t], v[t], v[t], v[t], v[t], v[t], v[t], v[t],
                v[t], v[t], v[t]);
});

const auto k_uint32 = module().kernel("print_uint32", {"v"}, [](Array<uint32_t> v) {
    auto t = weft::tid();
    weft::print("%u|%x|%08X|%o|%d\n", v[t], v[t], v[t], v[t], v[t]);
});

const auto k_int64 = module().kernel("print_int64", {"v", "u"}, [](Array<int64_t> v, Array<uint64_t> u) {
    auto t = weft::tid();
    weft::print("%lld|%ld|%d|%llx|%llu|%lu|%llX|%llo\n", v[t], v[t], v[t], v[t], u[t], u[t], u[t], u[t]);
});

const auto k_float = module().kernel("print_float", {"f", "d"}, [](Array<float> f, Array<double> d) {
    auto t = weft::tid();
    weft::print("%f|%.3f|%10.4f|%-9.2f|%e|%.2E|%g|%G|%a\n", f[t], f[t], f[t], f[t], f[t], f[t], f[t], f[t],
                f[t]);
    weft::print("%f|%.10f|%e|%.17g|%g|%+.1f\n", d[t], d[t], d[t], d[t], d[t], d[t]);
});

const auto k_misc = module().kernel("print_misc", {"b", "c"}, [](Array<bool> b, Array<int> c) {
    auto t = weft::tid();
    weft::print("bool %d %u, char %c, 100%% done\n", b[t], b[t], c[t]);
});

const auto k_literals = module().kernel("print_literals", {}, [] {
    weft::print("no arguments\n");
    weft::print("%d %f %lld %u %g\n", 42, 1.5, int64_t{-9000000000}, 7u, 0.25f);
});

const auto k_control = module().kernel("print_in_control_flow", {"n"}, [](Array<int> n) {
    auto t = weft::tid();
    weft::if_(
        t % 2 == 0, [&] { weft::print("thread %d even\n", t); }, [&] { weft::print("thread %d odd\n", t); });
    weft::for_(n[t], [&](weft::Int i) { weft::print("  %d.%d\n", t, i); });
});

const auto f_report = module().func(
    "report", [](weft::Int who, weft::Float what) { weft::print("report from %d: %.2f\n", who, what); });

const auto k_calls = module().kernel("print_from_function", {"v"}, [](Array<float> v) {
    auto t = weft::tid();
    f_report(t, v[t] * 2.0f);
});

TEST(Print, Int32Conversions) {
    WEFT_SKIP_UNLESS_CPU();  // host printf, threads in order
    const std::vector<int32_t> v = {0,
                                    1,
                                    -1,
                                    42,
                                    -42,
                                    255,
                                    65535,
                                    123456789,
                                    std::numeric_limits<int32_t>::max(),
                                    std::numeric_limits<int32_t>::min()};
    const auto out =
        captured([&] { weft::launch(k_int32, static_cast<int64_t>(v.size()), weft::from_vector(v, dev())); });
    std::string want;
    for (int32_t x : v)
        want += host_format("%d|%i|%5d|%-5d|%+d|%05d|%u|%x|%X|%o|%#x\n", x, x, x, x, x, x,
                            static_cast<unsigned>(x), static_cast<unsigned>(x), static_cast<unsigned>(x),
                            static_cast<unsigned>(x), static_cast<unsigned>(x));
    EXPECT_EQ(out, want);
    EXPECT_NE(out.find("|ffffffff|FFFFFFFF|"), std::string::npos) << "-1 prints at 32 bits, as in C";
}

TEST(Print, UInt32Conversions) {
    WEFT_SKIP_UNLESS_CPU();
    const std::vector<uint32_t> v = {0u,          1u,          7u,
                                     0xdeadbeefu, 0x80000000u, std::numeric_limits<uint32_t>::max()};
    const auto out = captured(
        [&] { weft::launch(k_uint32, static_cast<int64_t>(v.size()), weft::from_vector(v, dev())); });
    std::string want;
    for (uint32_t x : v) want += host_format("%u|%x|%08X|%o|%d\n", x, x, x, x, static_cast<int>(x));
    EXPECT_EQ(out, want);
}

TEST(Print, Int64Conversions) {
    WEFT_SKIP_UNLESS_CPU();
    const std::vector<int64_t> v = {0,
                                    -1,
                                    1,
                                    9000000000LL,
                                    -9000000000LL,
                                    std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min()};
    const std::vector<uint64_t> u = {0,
                                     1,
                                     0xdeadbeefcafef00dULL,
                                     1ULL << 63,
                                     std::numeric_limits<uint64_t>::max(),
                                     12345678901234567890ULL,
                                     5};
    const auto out = captured([&] {
        weft::launch(k_int64, static_cast<int64_t>(v.size()), weft::from_vector(v, dev()),
                     weft::from_vector(u, dev()));
    });
    std::string want;
    for (size_t i = 0; i < v.size(); ++i) {
        const long long x = v[i];
        const unsigned long long y = u[i];
        want += host_format("%lld|%lld|%lld|%llx|%llu|%llu|%llX|%llo\n", x, x, x,
                            static_cast<unsigned long long>(x), y, y, y, y);
    }
    EXPECT_EQ(out, want);
}

TEST(Print, FloatAndDoubleConversions) {
    WEFT_SKIP_UNLESS_CPU();
    const std::vector<float> f = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.5f,
                                  3.14159265f,
                                  1e-8f,
                                  123456.789f,
                                  1e30f,
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::denorm_min()};
    std::vector<double> d = {0.0,
                             -2.5,
                             1.0 / 3.0,
                             1e300,
                             -1e-300,
                             2.718281828459045,
                             6.02214076e23,
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::min(),
                             0.1,
                             100.0};
    const auto out = captured([&] {
        weft::launch(k_float, static_cast<int64_t>(f.size()), weft::from_vector(f, dev()),
                     weft::from_vector(d, dev()));
    });
    std::string want;
    for (size_t i = 0; i < f.size(); ++i) {
        const double x = f[i];  // a float passed to printf is promoted to double
        want += host_format("%f|%.3f|%10.4f|%-9.2f|%e|%.2E|%g|%G|%a\n", x, x, x, x, x, x, x, x, x);
        const double y = d[i];
        want += host_format("%f|%.10f|%e|%.17g|%g|%+.1f\n", y, y, y, y, y, y);
    }
    EXPECT_EQ(out, want);
}

TEST(Print, BoolCharAndPercent) {
    WEFT_SKIP_UNLESS_CPU();
    const std::vector<bool> b = {true, false, true};
    const std::vector<int> c = {'A', 'z', '#'};
    const auto out =
        captured([&] { weft::launch(k_misc, 3, weft::from_vector(b, dev()), weft::from_vector(c, dev())); });
    EXPECT_EQ(out,
              "bool 1 1, char A, 100% done\n"
              "bool 0 0, char z, 100% done\n"
              "bool 1 1, char #, 100% done\n");
}

TEST(Print, LiteralArgumentsAndNoArguments) {
    WEFT_SKIP_UNLESS_CPU();
    const auto out = captured([&] { weft::launch(k_literals, 2); });
    const std::string once =
        "no arguments\n" + host_format("%d %f %lld %u %g\n", 42, 1.5, -9000000000LL, 7u, 0.25);
    EXPECT_EQ(out, once + once);
}

TEST(Print, InsideIfAndLoopsInThreadOrder) {
    WEFT_SKIP_UNLESS_CPU();
    const std::vector<int> n = {2, 0, 1, 3};
    const auto out = captured([&] { weft::launch(k_control, 4, weft::from_vector(n, dev())); });
    EXPECT_EQ(out,
              "thread 0 even\n  0.0\n  0.1\n"
              "thread 1 odd\n"
              "thread 2 even\n  2.0\n"
              "thread 3 odd\n  3.0\n  3.1\n  3.2\n");
}

TEST(Print, FromAFunction) {
    WEFT_SKIP_UNLESS_CPU();
    const std::vector<float> v = {0.5f, -1.25f, 10.0f};
    const auto out = captured([&] { weft::launch(k_calls, 3, weft::from_vector(v, dev())); });
    EXPECT_EQ(out, "report from 0: 1.00\nreport from 1: -2.50\nreport from 2: 20.00\n");
}

TEST(Print, IrRecordsTheFormat) {
    const std::string ir = module().ir();
    EXPECT_NE(ir.find("print \"thread %d even\\n\""), std::string::npos) << ir;
    EXPECT_NE(ir.find("print \"no arguments\\n\""), std::string::npos) << ir;
}

}  // namespace
