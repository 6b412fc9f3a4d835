// Errors blame what the user wrote: the user's kernel (never an internal counting pass), a
// scalar argument whose value its parameter's type cannot hold, and the line of set_option.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Int;

weft::Device dev() {
    return weft::test::test_device();
}

// Runs `f`, which must throw a weft::Error from this file at `line`, naming `kernel` (unless
// empty), whose message holds each of `says` and none of `never`.
void expect_error(const std::function<void()>& f, const std::string& kernel, uint32_t line,
                  std::initializer_list<const char*> says, std::initializer_list<const char*> never = {}) {
    try {
        f();
        ADD_FAILURE() << "no error";
    } catch (const weft::Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kernel(), kernel) << what;
        EXPECT_EQ(e.line(), line) << what;
        EXPECT_NE(e.file().find("errors_blame_test.cpp"), std::string::npos) << what;
        for (const char* s : says)
            EXPECT_NE(what.find(s), std::string::npos) << "missing \"" << s << "\" in: " << what;
        for (const char* s : never)
            EXPECT_EQ(what.find(s), std::string::npos) << "\"" << s << "\" in: " << what;
    }
}

// An index fault in the counting pass of a slot-allocating kernel (and in a function it calls)
// names the user's kernel and function.
TEST(ErrorsBlame, FaultsInTheCountingPassNameTheUsersKernel) {
    weft::Module m{"count_fault", {.deterministic = weft::Deterministic::RunToRun, .bounds_check = true}};
    // clang-format off
    auto read = m.func("read_value", [](Array<float> values, Int i) { return values[i]; }); const uint32_t read_line = __LINE__;
    // clang-format on
    auto k = m.kernel("count_fault", {"values", "counter", "out"},
                      [&](Array<float> values, Array<int> counter, Array<float> out) {
                          auto t = weft::tid();
                          auto v = read(values, t + 100);  // out of bounds
                          auto slot = weft::atomic_add(counter, 0, 1);
                          out[slot] = v;
                      });
    auto values = weft::zeros<float>(4, dev());
    auto counter = weft::zeros<int>(1, dev());
    auto out = weft::zeros<float>(4, dev());
    expect_error([&] { weft::launch(k, 4, values, counter, out); }, "count_fault", read_line,
                 {"out of bounds", "in function 'read_value'"}, {"__count"});
    EXPECT_EQ(counter.to_vector(), std::vector<int>{0});
}

// Each of `values`, passed for a parameter of type T, is rejected at the launch's line.
TEST(ErrorsBlame, ScalarArgumentsThatDoNotFitAreRejected) {
    weft::Module m{"narrowing"};
    auto take32 =
        m.kernel("take_int32", {"n", "out"}, [](Int n, Array<int64_t> out) { out[0] = weft::Int64(n); });
    auto take_u32 = m.kernel("take_uint32", {"n", "out"},
                             [](weft::UInt n, Array<int64_t> out) { out[0] = weft::Int64(n); });
    auto take_f = m.kernel("take_float", {"x", "out"}, [](weft::Float x, Array<float> out) { out[0] = x; });
    auto take_b = m.kernel("take_bool", {"b", "out"},
                           [](weft::Bool b, Array<int> out) { out[0] = weft::select(b, Int(1), Int(0)); });
    auto out64 = weft::zeros<int64_t>(1, dev());
    auto outf = weft::zeros<float>(1, dev());
    auto outi = weft::zeros<int>(1, dev());
    // clang-format off
    uint32_t line = __LINE__; expect_error([&] { weft::launch(take32, 1, (int64_t{1} << 32) + 5, out64); }, "take_int32", line,
                 {"argument 0 ('n') is 4294967301", "int32", "-2147483648 to 2147483647"});
    line = __LINE__; expect_error([&] { weft::launch(take_u32, 1, -1, out64); }, "take_uint32", line, {"argument 0 ('n') is -1", "uint32"});
    line = __LINE__; expect_error([&] { weft::launch(take32, 1, 2.5, out64); }, "take_int32", line, {"is 2.5"});
    line = __LINE__; expect_error([&] { weft::launch(take32, 1, 2147483648.0, out64); }, "take_int32", line, {"is 2147483648"});
    line = __LINE__; expect_error([&] { weft::launch(take_f, 1, 1e300, outf); }, "take_float", line, {"is 1.0000000000000001e+300", "float32"});
    line = __LINE__; expect_error([&] { weft::launch(take_b, 1, 2, outi); }, "take_bool", line, {"is 2", "bool"});
    // clang-format on
    EXPECT_EQ(out64.to_vector(), std::vector<int64_t>{0}) << "a rejected launch must not run";

    // Values that fit are passed as they are; a double rounds to the nearest float.
    weft::launch(take32, 1, int64_t{-2147483648LL}, out64);
    EXPECT_EQ(out64.to_vector(), std::vector<int64_t>{-2147483648LL});
    weft::launch(take_u32, 1, uint64_t{4294967295u}, out64);
    EXPECT_EQ(out64.to_vector(), std::vector<int64_t>{4294967295LL});
    weft::launch(take32, 1, 7.0, out64);
    EXPECT_EQ(out64.to_vector(), std::vector<int64_t>{7});
    weft::launch(take_f, 1, 0.1, outf);
    EXPECT_EQ(outf.to_vector(), std::vector<float>{0.1f});
    weft::launch(take_b, 1, 1, outi);
    EXPECT_EQ(outi.to_vector(), std::vector<int>{1});
}

// set_option and friends name the caller's line.
TEST(ErrorsBlame, OptionErrorsNameTheCallersLine) {
    const weft::Options saved = weft::config();
    weft::Module m{"option_lines"};
    uint32_t line = __LINE__ + 1;
    expect_error([&] { m.set_option("block_dim", int64_t{33}); }, "", line, {"block_dim", "option_lines"});
    line = __LINE__ + 1;
    expect_error([&] { m.set_options({.optimization_level = 9}); }, "", line, {"optimization_level"});
    line = __LINE__ + 1;
    expect_error([&] { weft::set_config_option("no_such_option", true); }, "", line, {"unknown option"});
    line = __LINE__ + 1;
    expect_error([&] { weft::set_config({.deterministic_max_records = -1}); }, "", line,
                 {"deterministic_max_records"});
    weft::Options options;
    line = __LINE__ + 1;
    expect_error([&] { weft::set_option(options, "debug", int64_t{1}); }, "", line, {"takes a bool"});
    EXPECT_TRUE(weft::config() == saved) << "a rejected change must leave the config alone";
}

}  // namespace
