// Integer edge cases have defined results: division by zero and INT_MIN / -1, for_ loops near the
// int32 limits, and extents that shape() (an int32) cannot return.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Int;

weft::Device dev() {
    return weft::test::test_device();
}

template <class T>
struct Case {
    T a, b, quotient, remainder;
};

// a / b and a % b with b read from memory (so nothing is folded), and with constant divisors.
template <class T>
void check_division(const std::string& name, const std::vector<Case<T>>& cases) {
    for (bool checked : {false, true}) {
        weft::Module m{name, {.bounds_check = checked}};
        auto k = m.kernel("divide", {"a", "b", "q", "r", "by_constants"},
                          [](Array<T> a, Array<T> b, Array<T> q, Array<T> r, Array<T, 2> by_constants) {
                              auto t = weft::tid();
                              q[t] = a[t] / b[t];
                              r[t] = a[t] % b[t];
                              by_constants(t, 0) = a[t] / T(0);
                              by_constants(t, 1) = a[t] % T(0);
                              by_constants(t, 2) = a[t] / static_cast<T>(-1);
                              by_constants(t, 3) = a[t] % static_cast<T>(-1);
                          });
        std::vector<T> a, b;
        for (const Case<T>& c : cases) a.push_back(c.a), b.push_back(c.b);
        const int n = static_cast<int>(cases.size());
        auto q = weft::zeros<T>(n, dev());
        auto r = weft::zeros<T>(n, dev());
        auto by_constants = weft::zeros<T>({n, 4}, dev());
        weft::launch(k, n, weft::from_vector(a, dev()), weft::from_vector(b, dev()), q, r, by_constants);
        const std::vector<T> qs = q.to_vector(), rs = r.to_vector(), cs = by_constants.to_vector();
        for (int i = 0; i < n; ++i) {
            const Case<T>& c = cases[i];
            const std::string what = name + " " + std::to_string(c.a) + " by " + std::to_string(c.b) +
                                     (checked ? " (bounds_check)" : "");
            EXPECT_EQ(qs[i], c.quotient) << what << " /";
            EXPECT_EQ(rs[i], c.remainder) << what << " %";
            EXPECT_EQ(cs[i * 4 + 0], T(0)) << what << " / 0";
            EXPECT_EQ(cs[i * 4 + 1], c.a) << what << " % 0";
            const bool is_signed = std::numeric_limits<T>::is_signed;
            // Signed: x / -1 is -x (INT_MIN stays INT_MIN); unsigned: -1 is the largest value.
            using U = std::make_unsigned_t<T>;
            const T minus = static_cast<T>(U(0) - static_cast<U>(c.a));
            EXPECT_EQ(cs[i * 4 + 2], is_signed ? minus : T(c.a == static_cast<T>(-1))) << what << " / -1";
            EXPECT_EQ(cs[i * 4 + 3], is_signed ? T(0) : T(c.a == static_cast<T>(-1) ? 0 : c.a))
                << what << " % -1";
        }
    }
}

TEST(IntegerDivision, Int32ByZeroAndMinByMinusOneAreDefined) {
    constexpr int32_t min = std::numeric_limits<int32_t>::min();
    check_division<int32_t>("div_int32", {{7, 0, 0, 7},
                                          {-7, 0, 0, -7},
                                          {min, 0, 0, min},
                                          {min, -1, min, 0},
                                          {7, -1, -7, 0},
                                          {-7, 2, -3, -1},
                                          {7, 3, 2, 1}});
}

TEST(IntegerDivision, Int64ByZeroAndMinByMinusOneAreDefined) {
    constexpr int64_t min = std::numeric_limits<int64_t>::min();
    check_division<int64_t>("div_int64", {{7, 0, 0, 7},
                                          {min, 0, 0, min},
                                          {min, -1, min, 0},
                                          {-9, 4, -2, -1},
                                          {1ll << 40, -1, -(1ll << 40), 0}});
}

TEST(IntegerDivision, UnsignedByZeroIsDefined) {
    constexpr uint32_t max32 = std::numeric_limits<uint32_t>::max();
    check_division<uint32_t>("div_uint32", {{7, 0, 0, 7}, {max32, max32, 1, 0}, {max32, 2, max32 / 2, 1}});
    constexpr uint64_t max64 = std::numeric_limits<uint64_t>::max();
    check_division<uint64_t>("div_uint64", {{7, 0, 0, 7}, {max64, max64, 1, 0}, {9, 4, 2, 1}});
}

// Python's range near the int32 limits: every loop ends after exactly its iterations. (The
// kernel stops a runaway loop after 100 iterations, so a wrong trip count fails, not hangs.)
TEST(ForLoops, TripCountsNearTheInt32LimitsDoNotOverflow) {
    constexpr int32_t max = std::numeric_limits<int32_t>::max();
    constexpr int32_t min = std::numeric_limits<int32_t>::min();
    weft::Module m{"for_limits"};
    auto dynamic = m.kernel("dynamic", {"bounds", "out"}, [](Array<int, 2> bounds, Array<int, 2> out) {
        auto t = weft::tid();
        Int count = 0;
        Int last = 0;
        weft::for_(bounds(t, 0), bounds(t, 1), bounds(t, 2), [&](Int i) {
            count = count + 1;
            last = i;
            weft::if_(count > 100, [] { weft::break_(); });
        });
        out(t, 0) = count;
        out(t, 1) = last;
    });
    auto constant = m.kernel("constant", {"out"}, [](Array<int, 2> out) {
        Int count = 0, last = 0;
        auto loop = [&](Int i) {
            count = count + 1;
            last = i;
            weft::if_(count > 100, [] { weft::break_(); });
        };
        weft::for_(2147483000, max, 1000, loop);
        out(0, 0) = count, out(0, 1) = last;
        count = 0;
        weft::for_(min + 5, min, -3, loop);
        out(1, 0) = count, out(1, 1) = last;
        count = 0;
        weft::for_(max - 7, max, loop);
        out(2, 0) = count, out(2, 1) = last;
        count = 0;
        weft::for_(min + 2, min, -1, loop);
        out(3, 0) = count, out(3, 1) = last;
        count = 0;
        weft::for_(0, 10, 4, [&](Int i) {  // continue still steps
            weft::if_(i == 4, [] { weft::continue_(); });
            count = count + 1;
            last = i;
        });
        out(4, 0) = count, out(4, 1) = last;
    });
    // {start, stop, step} -> {iterations, last value} as range(start, stop, step) gives.
    const std::vector<int> bounds = {2147483000, max, 1000,  // one iteration: 2147483000
                                     min + 5,    min, -3,    // min + 5, min + 2
                                     max - 2,    max, 1,     // max - 2, max - 1
                                     max,        min, -max,  // max, 0, -max (= min + 1)
                                     5,          5,   1,     // none
                                     3,          9,   0};    // a run-time step of 0: none
    auto out = weft::zeros<int>({6, 2}, dev());
    weft::launch(dynamic, 6, weft::from_vector(bounds, {6, 3}, dev()), out);
    EXPECT_EQ(out.to_vector(),
              (std::vector<int>{1, 2147483000, 2, min + 2, 2, max - 1, 3, min + 1, 0, 0, 0, 0}));
    auto out2 = weft::zeros<int>({5, 2}, dev());
    weft::launch(constant, 1, out2);
    EXPECT_EQ(out2.to_vector(), (std::vector<int>{1, 2147483000, 2, min + 2, 7, max - 1, 2, min + 1, 2, 8}));
}

// shape() returns an int32: a launch whose kernel reads an extent past 2^31 - 1 is refused,
// naming the argument and dimension (a broadcast view makes such an extent without memory).
TEST(ShapeExtents, ExtentsPastInt32AreRefusedWhereShapeReadsThem) {
    constexpr int64_t big = int64_t{1} << 31;
    weft::Module m{"shape_extents"};
    int launch_line = 0;
    auto reads = m.kernel("reads", {"x", "out"}, [](Array<float> x, Array<int> out) { out[0] = x.shape(0); });
    auto through_view = m.kernel("through_view", {"grid", "out"},
                                 [](Array<float, 2> grid, Array<int> out) { out[0] = grid[0].shape(0); });
    auto extent = m.func("extent", [](Array<float> x) { return x.shape(0); });
    auto through_call = m.kernel("through_call", {"grid", "out"},
                                 [&](Array<float, 2> grid, Array<int> out) { out[0] = extent(grid[0]); });
    auto ignores = m.kernel("ignores", {"x", "out"},
                            [](Array<float> x, Array<int> out) { out[0] = weft::cast<int>(x[weft::tid()]); });
    auto one = weft::full<float>(1, 3.0f, dev());
    auto out = weft::full<int>(1, -1, dev());
    auto fail = [&](auto kernel, const weft::AnyArray& arg, const char* says) {
        try {
            launch_line = __LINE__, weft::launch(kernel, 1, arg, out);
            ADD_FAILURE() << "launch with an extent of 2^31 was accepted";
        } catch (const weft::Error& e) {
            EXPECT_EQ(e.line(), static_cast<uint32_t>(launch_line)) << e.what();
            EXPECT_NE(e.message().find(says), std::string::npos) << e.what();
            EXPECT_NE(e.message().find("shape(), an int32"), std::string::npos) << e.what();
        }
        EXPECT_EQ(out.to_vector(), std::vector<int>{-1});
    };
    fail(reads, one.broadcast({big}), "argument 0 ('x') has extent 2147483648 in dimension 0");
    fail(through_view, one.broadcast({2, big}), "argument 0 ('grid') has extent 2147483648 in dimension 1");
    fail(through_call, one.broadcast({2, big}), "argument 0 ('grid') has extent 2147483648 in dimension 1");
    // Extents shape() does not read may be large; the largest int32 extent is read exactly.
    weft::launch(through_view, 1, one.broadcast({big, 5}), out);
    EXPECT_EQ(out.to_vector(), std::vector<int>{5});
    weft::launch(ignores, 1, one.broadcast({big}), out);
    EXPECT_EQ(out.to_vector(), std::vector<int>{3});
    weft::launch(reads, 1, one.broadcast({big - 1}), out);
    EXPECT_EQ(out.to_vector(), std::vector<int>{2147483647});
}

}  // namespace
