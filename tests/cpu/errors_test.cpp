// User errors: each raises weft::Error naming the kernel, this file's line and what to do instead.
#include "support/errors.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

// A traced value never converts to a C++ value implicitly. (A C++ `if`, `while` or `?:` on one
// stops with a message naming weft::if_: tests/compile_errors/if_on_traced_value.cpp.)
static_assert(!std::is_convertible_v<weft::Bool, bool>);
static_assert(!std::is_convertible_v<weft::Element<bool>, bool>);
static_assert(!std::is_convertible_v<weft::Int, int>);
static_assert(!std::is_convertible_v<weft::Float, float>);

namespace {

using weft::Array;
using weft::Float;
using weft::Int;
using weft::test::error_from;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

// The error names `kernel` and this file at `line`, in its fields and in what(), and its
// message contains every one of `says`.
void expect_error(const weft::Error& e, const std::string& kernel, int line,
                  std::initializer_list<const char*> says) {
    EXPECT_EQ(e.kernel(), kernel) << e.what();
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.what();
    EXPECT_NE(e.file().find("errors_test.cpp"), std::string::npos) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("errors_test.cpp:" + std::to_string(line) + ": "), std::string::npos) << what;
    if (!kernel.empty()) EXPECT_NE(what.find("kernel '" + kernel + "'"), std::string::npos) << what;
    for (const char* s : says)
        EXPECT_NE(e.message().find(s), std::string::npos) << "missing \"" << s << "\" in: " << what;
}

// ---------------------------------------------------------------------------------------------
// Compile-time rejections.

// Bool's only conversion to bool is the explicit one that stops compilation with a message
// (tests/compile_errors/if_on_traced_value.cpp); the traced !, && and || still trace, on elements,
// on Bools and with literals, and tie with no built-in operator.
TEST(CompileTimeChecks, TracedBoolHasNoConversionToBool) {
    EXPECT_FALSE((std::is_convertible_v<weft::Bool, bool>));
    weft::Module m{"err_bool_ops"};
    auto k = m.kernel("bool_ops", {"a", "out"}, [](Array<bool> a, Array<bool> out) {
        auto t = weft::tid();
        out[2 * t] = !a[t] && (a[t] || !a[t]);  // !a
        weft::Bool b = a[t];
        weft::Bool c = !b;
        out[2 * t + 1] = (false || b) && (c || true) && !(c && b);  // a
    });
    auto out = weft::zeros<bool>(4, dev());
    weft::launch(k, 2, weft::from_vector(std::vector<bool>{true, false}, dev()), out);
    EXPECT_EQ(out.to_vector(), (std::vector<bool>{false, true, true, false}));
}

// ---------------------------------------------------------------------------------------------
// Launch arguments, checked at run time by the dynamic launch.

struct LaunchFixture {
    weft::Module m{"err_launch"};
    weft::Kernel<Array<float>, Array<int, 2>, Int> k =
        m.kernel("takes_three", {"values", "grid", "count"},
                 [](Array<float> values, Array<int, 2> grid, Int count) { values[weft::tid()] = 1.0f; });
    weft::AnyArray values = weft::zeros<float>(4, dev());
    weft::AnyArray grid = weft::zeros<int>({2, 2}, dev());
};

TEST(LaunchErrors, WrongArgumentCount) {
    LaunchFixture f;
    const std::vector<weft::LaunchArg> args = {f.values, f.grid};
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, args); });
    expect_error(e, "takes_three", line, {"takes 3 arguments, got 2"});
    const std::vector<weft::LaunchArg> four = {f.values, f.grid, weft::scalar_arg(1), weft::scalar_arg(2)};
    const auto e4 = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, four); });
    expect_error(e4, "takes_three", line, {"takes 3 arguments, got 4"});
}

TEST(LaunchErrors, WrongArrayType) {
    LaunchFixture f;
    const std::vector<weft::LaunchArg> args = {weft::zeros<double>(4, dev()), f.grid, weft::scalar_arg(1)};
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, args); });
    expect_error(e, "takes_three", line,
                 {"argument 0 ('values')", "must be a 1-D array of float32", "got a 1-D array of float64"});
}

TEST(LaunchErrors, WrongNumberOfDimensions) {
    LaunchFixture f;
    const std::vector<weft::LaunchArg> args = {f.values, weft::zeros<int>(4, dev()), weft::scalar_arg(1)};
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, args); });
    expect_error(e, "takes_three", line,
                 {"argument 1 ('grid')", "must be a 2-D array of int32", "got a 1-D array of int32"});
}

TEST(LaunchErrors, WrongScalarTypeAndKind) {
    LaunchFixture f;
    int line = 0;
    const std::vector<weft::LaunchArg> wrong_scalar = {f.values, f.grid, weft::scalar_arg(1.5)};
    const auto e1 = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, wrong_scalar); });
    expect_error(e1, "takes_three", line,
                 {"argument 2 ('count')", "must be an int32 scalar", "got a float64 scalar"});

    const std::vector<weft::LaunchArg> array_for_scalar = {f.values, f.grid, f.values};
    const auto e2 = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, array_for_scalar); });
    expect_error(e2, "takes_three", line,
                 {"argument 2 ('count')", "must be an int32 scalar", "got a 1-D array"});

    const std::vector<weft::LaunchArg> scalar_for_array = {weft::scalar_arg(1.0f), f.grid,
                                                           weft::scalar_arg(1)};
    const auto e3 = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, scalar_for_array); });
    expect_error(e3, "takes_three", line,
                 {"argument 0 ('values')", "must be a 1-D array of float32", "scalar"});
}

TEST(LaunchErrors, EmptyArray) {
    LaunchFixture f;
    const std::vector<weft::LaunchArg> args = {weft::AnyArray(), f.grid, weft::scalar_arg(1)};
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(*f.k.state(), 4, args); });
    expect_error(e, "takes_three", line, {"argument 0 ('values')", "empty"});
}

// ---------------------------------------------------------------------------------------------
// Launch dimensions.

struct DimFixture {
    weft::Module m{"err_dims"};
    weft::Kernel<Array<int>> one = m.kernel("one_d", {"out"}, [](Array<int> out) { out[weft::tid()] = 1; });
    weft::Kernel<Array<int, 2>> two = m.kernel("two_d", {"out"}, [](Array<int, 2> out) {
        auto [i, j] = weft::tid<2>();
        out(i, j) = 1;
    });
    weft::DeviceArray<int> out1 = weft::full<int>(4, 7, dev());
    weft::DeviceArray<int> out2 = weft::full<int>({2, 2}, 7, dev());
};

TEST(LaunchErrors, ZeroThreads) {
    DimFixture f;
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(f.one, 0, f.out1); });
    expect_error(e, "one_d", line, {"launch dimension 0 is 0", "at least 1", "skip the launch"});
    const auto e2 = error_from([&] { line = __LINE__, weft::launch(f.two, {2, 0}, f.out2); });
    expect_error(e2, "two_d", line, {"launch dimension 1 is 0", "at least 1"});
    EXPECT_EQ(f.out1.to_vector(), std::vector<int>(4, 7));
}

TEST(LaunchErrors, NegativeThreads) {
    DimFixture f;
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(f.one, -5, f.out1); });
    expect_error(e, "one_d", line, {"launch dimension 0 is -5", "at least 1"});
    const auto e2 = error_from([&] { line = __LINE__, weft::launch(f.two, {-1, 2}, f.out2); });
    expect_error(e2, "two_d", line, {"launch dimension 0 is -1"});
}

TEST(LaunchErrors, TooManyThreads) {
    DimFixture f;
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(f.one, int64_t{1} << 31, f.out1); });
    expect_error(e, "one_d", line, {"more than 2^31 - 1 threads", "split it into several launches"});
    // Each extent fits, the product does not.
    const auto e2 = error_from([&] { line = __LINE__, weft::launch(f.two, {65536, 32768}, f.out2); });
    expect_error(e2, "two_d", line, {"more than 2^31 - 1 threads"});
    const auto e3 = error_from([&] { line = __LINE__, weft::launch(f.one, int64_t{1} << 40, f.out1); });
    expect_error(e3, "one_d", line, {"more than 2^31 - 1 threads"});
    EXPECT_EQ(f.out2.to_vector(), std::vector<int>(4, 7));
}

TEST(LaunchErrors, LaunchDimensionsDifferFromTid) {
    DimFixture f;
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, weft::launch(f.two, 4, f.out2); });
    expect_error(e, "two_d", line, {"tid<2>()", "launched with 1 dimensions", "launch it with 2"});
    const auto e2 = error_from([&] { line = __LINE__, weft::launch(f.one, {2, 2}, f.out1); });
    expect_error(e2, "one_d", line, {"tid()", "launched with 2 dimensions", "launch it with 1"});
    const auto e3 = error_from([&] { line = __LINE__, weft::launch(f.two, {1, 2, 2}, f.out2); });
    expect_error(e3, "two_d", line, {"launched with 3 dimensions"});
    EXPECT_EQ(f.out1.to_vector(), std::vector<int>(4, 7));
    EXPECT_EQ(f.out2.to_vector(), std::vector<int>(4, 7));
}

TEST(KernelErrors, MixingTidForms) {
    weft::Module m{"err_mixed_tid"};
    int line = 0;
    auto k = m.kernel("mixed_tid", {"out"}, [&](Array<int, 2> out) {
        auto [i, j] = weft::tid<2>();
        out(i, j) = 1;
        line = __LINE__, out(weft::tid(), 0) = 2;
    });
    const auto e = error_from([&] { weft::launch(k, {2, 2}, weft::zeros<int>({2, 2}, dev())); });
    expect_error(e, "mixed_tid", line,
                 {"1-D launch here but for a 2-D launch elsewhere", "use one form per kernel"});
}

TEST(KernelErrors, MixingTidFormsThroughAFunction) {
    weft::Module m{"err_mixed_tid_func"};
    auto row = m.func("row", [] { return weft::tid<2>()[0]; });
    int line = 0;
    auto k = m.kernel("mixed_tid_func", {"out"}, [&](Array<int> out) {
        auto t = weft::tid();
        line = __LINE__, out[t] = row();
    });
    const auto e = error_from([&] { weft::launch(k, 2, weft::zeros<int>(2, dev())); });
    expect_error(e, "mixed_tid_func", line, {"use one form per kernel"});
}

// ---------------------------------------------------------------------------------------------
// Traced values outside their kernel.

TEST(KernelErrors, ValueFromAnotherKernel) {
    std::optional<Float> leaked;
    weft::Module a{"err_leak_a"};
    auto source = a.kernel("source", {"values"},
                           [&](Array<float> values) { leaked.emplace(values[weft::tid()] * 2.0f); });
    weft::launch(source, 1, weft::zeros<float>(1, dev()));
    ASSERT_TRUE(leaked.has_value());

    weft::Module b{"err_leak_b"};
    int line = 0;
    auto sink = b.kernel("sink", {"out"}, [&](Array<float> out) {
        auto t = weft::tid();
        line = __LINE__, out[t] = *leaked + 1.0f;
    });
    auto out = weft::full<float>(3, 5.0f, dev());
    const auto e = error_from([&] { weft::launch(sink, 3, out); });
    expect_error(e, "sink", line, {"belongs to another kernel or function", "pass it in as a parameter"});
    EXPECT_EQ(out.to_vector(), std::vector<float>(3, 5.0f));
}

TEST(KernelErrors, ValueCreatedOutsideAnyKernel) {
    int line = 0;
    const auto e = error_from([&] { line = __LINE__, Float(1.0f); });
    expect_error(e, "", line, {"outside a kernel or weft function", "define them inside the lambda"});
}

// ---------------------------------------------------------------------------------------------
// Operations a type does not support. Each kernel is in a module of its own: a module with an
// error in any kernel cannot be compiled.

// Traces `body` as kernel `name` over one float and one int array; returns the error.
template <class Body>
weft::Error trace_error(const std::string& name, Body body) {
    weft::Module m{"err_" + name};
    auto k = m.kernel(name, {"f", "i"}, body);
    return error_from([&] { weft::launch(k, 2, weft::zeros<float>(2, dev()), weft::zeros<int>(2, dev())); });
}

TEST(TypeErrors, SqrtOfAnInt) {
    int line = 0;
    const auto e = trace_error("sqrt_int", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, f[t] = weft::cast<float>(weft::sqrt(i[t]));
    });
    expect_error(e, "sqrt_int", line,
                 {"sqrt needs a floating-point operand, got int32", "weft::cast<float>(x)"});
}

TEST(TypeErrors, OtherFloatMathOfInts) {
    int line = 0;
    const auto e = trace_error("sin_int", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, i[t] = weft::sin(i[t]);
    });
    expect_error(e, "sin_int", line, {"sin needs a floating-point operand", "weft::cast<float>(x)"});
}

TEST(TypeErrors, AtomicAndOnAFloatArray) {
    int line = 0;
    const auto e = trace_error("and_float", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, weft::atomic_and(f, t, 1.0f);
    });
    expect_error(e, "and_float", line,
                 {"atomic_and is not supported on an array of float32", "integer arrays only"});
}

TEST(TypeErrors, AtomicExchAndCasOnAFloatArray) {
    int line = 0;
    const auto e = trace_error("cas_float", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, weft::atomic_cas(f, t, 0.0f, 1.0f);
    });
    expect_error(e, "cas_float", line, {"atomic_cas is not supported on an array of float32"});
    const auto e2 = trace_error("exch_float", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, weft::atomic_exch(f, t, 1.0f);
    });
    expect_error(e2, "exch_float", line, {"atomic_exch is not supported on an array of float32"});
}

TEST(TypeErrors, PowOfInts) {
    int line = 0;
    const auto e = trace_error("pow_int", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, i[t] = weft::pow(i[t], 2);
    });
    expect_error(e, "pow_int", line, {"pow is not defined for int32", "weft::cast<float>(x)"});
}

TEST(TypeErrors, BitwiseOperatorsOnFloats) {
    int line = 0;
    const auto e = trace_error("and_of_floats", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, f[t] = f[t] & f[t];
    });
    expect_error(e, "and_of_floats", line, {"bitand is not defined for float32", "weft::cast<T>(x)"});
    const auto e2 = trace_error("xor_of_floats", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, f[t] = f[t] ^ 1.0f;
    });
    expect_error(e2, "xor_of_floats", line, {"bitxor is not defined for float32"});
    const auto e3 = trace_error("shift_float", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, f[t] = f[t] << 1.0f;
    });
    expect_error(e3, "shift_float", line, {"shl is not defined for float32", "shifts take integers"});
    const auto e4 = trace_error("not_float", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, f[t] = ~f[t];
    });
    expect_error(e4, "not_float", line, {"operator ~ is not defined for float32", "takes integers"});
}

TEST(TypeErrors, LogicalNotOfAnInt) {
    int line = 0;
    const auto e = trace_error("not_int", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, i[t] = !i[t];
    });
    expect_error(e, "not_int", line, {"operator ! is not defined for int32", "compare with == 0"});
    const auto e2 = trace_error("and_int", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, f[t] = weft::select(i[t] && i[t], f[t], 0.0f);
    });
    expect_error(e2, "and_int", line, {"and is not defined for int32", "compare with != 0"});
}

TEST(TypeErrors, ArithmeticOnBools) {
    int line = 0;
    const auto e = trace_error("add_bools", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        weft::Bool b = i[t] > 0;
        line = __LINE__, b = b + b;
    });
    expect_error(e, "add_bools", line, {"add is not defined for bool", "weft::cast<int>(x)"});
    const auto e2 = trace_error("negate_bool", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        weft::Bool b = i[t] > 0;
        line = __LINE__, b = -b;
    });
    expect_error(e2, "negate_bool", line, {"operator - is not defined for bool", "use !"});
}

TEST(TypeErrors, ShapeOfAMissingDimension) {
    int line = 0;
    const auto e = trace_error("bad_shape", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        line = __LINE__, i[t] = f.shape(1);
    });
    expect_error(e, "bad_shape", line, {"shape(1) of a 1-D array", "numbered from 0"});
}

// ---------------------------------------------------------------------------------------------
// Control flow misuse.

TEST(ControlErrors, BreakOutsideALoop) {
    int line = 0;
    const auto e = trace_error("stray_break", [&](Array<float> f, Array<int> i) {
        weft::if_(i[weft::tid()] > 0, [&] { line = __LINE__, weft::break_(); });
    });
    expect_error(e, "stray_break", line, {"break_ outside a for_ or while_ body"});
    const auto e2 = trace_error("stray_continue",
                                [&](Array<float> f, Array<int> i) { line = __LINE__, weft::continue_(); });
    expect_error(e2, "stray_continue", line, {"continue_ outside a for_ or while_ body"});
}

TEST(ControlErrors, AssigningTheForLoopVariable) {
    int line = 0;
    const auto e = trace_error("assign_loop_var", [&](Array<float> f, Array<int> i) {
        weft::for_(0, 10, [&](Int k) { line = __LINE__, k += 2; });
    });
    expect_error(e, "assign_loop_var", line,
                 {"the loop variable of for_ cannot be assigned", "copy it into a local variable"});
    const auto e2 = trace_error("assign_loop_var2", [&](Array<float> f, Array<int> i) {
        weft::for_(10, [&](Int k) {
            i[k] = 1;
            line = __LINE__, k = Int(5);
        });
    });
    expect_error(e2, "assign_loop_var2", line, {"the loop variable of for_ cannot be assigned"});
}

TEST(ControlErrors, CopiesOfTheLoopVariableMayBeAssigned) {
    weft::Module m{"err_loop_copy"};
    auto k = m.kernel("loop_copy", {"out"}, [](Array<int> out) {
        weft::for_(0, 4, [&](Int k) {
            Int j = k;
            j += 10;
            out[k] = j;
        });
    });
    auto out = weft::zeros<int>(4, dev());
    weft::launch(k, 1, out);
    EXPECT_EQ(out.to_vector(), (std::vector<int>{10, 11, 12, 13}));
}

TEST(ControlErrors, ReturnWithAValueInAKernel) {
    int line = 0;
    const auto e = trace_error("kernel_returns", [&](Array<float> f, Array<int> i) {
        auto t = weft::tid();
        weft::if_(t > 0, [&] { line = __LINE__, weft::return_(i[t]); });
    });
    expect_error(e, "kernel_returns", line, {"returns nothing", "call return_() without a value"});
}

TEST(ControlErrors, ReturnWithoutAValueOrOfTheWrongTypeInAFunction) {
    int line = 0;
    weft::Module m{"err_func_return"};
    auto bad = m.func("needs_value", [&](Int x) {
        weft::if_(x > 0, [&] { line = __LINE__, weft::return_(); });
        return x;
    });
    auto k = m.kernel("calls_needs_value", {"out"}, [&](Array<int> out) { out[weft::tid()] = bad(1); });
    const auto e = error_from([&] { weft::launch(k, 1, weft::zeros<int>(1, dev())); });
    // The error is in the function, which the error names.
    expect_error(e, "needs_value", line, {"returns an int32", "pass it to return_(value)"});

    weft::Module m2{"err_func_return2"};
    auto bad2 = m2.func("wrong_type", [&](Int x) {
        weft::if_(x > 0, [&] { line = __LINE__, weft::return_(weft::cast<float>(x)); });
        return x;
    });
    auto k2 = m2.kernel("calls_wrong_type", {"out"}, [&](Array<int> out) { out[weft::tid()] = bad2(1); });
    const auto e2 = error_from([&] { weft::launch(k2, 1, weft::zeros<int>(1, dev())); });
    expect_error(e2, "wrong_type", line, {"returns an int32, not a float32"});
}

// ---------------------------------------------------------------------------------------------
// print formats.

TEST(PrintErrors, FormatMismatches) {
    int line = 0;
    const auto e1 = trace_error("print_d_float", [&](Array<float> f, Array<int> i) {
        line = __LINE__, weft::print("%d\n", f[weft::tid()]);
    });
    expect_error(e1, "print_d_float", line,
                 {"argument 0 is a float32 but the conversion is %d", "use %f or %g"});
    const auto e2 = trace_error("print_f_int", [&](Array<float> f, Array<int> i) {
        line = __LINE__, weft::print("x = %f\n", i[weft::tid()]);
    });
    expect_error(e2, "print_f_int", line,
                 {"argument 0 is an int32 but the conversion is %f", "use %d or %u"});
    const auto e3 = trace_error("print_too_few", [&](Array<float> f, Array<int> i) {
        line = __LINE__, weft::print("%d %d\n", i[weft::tid()]);
    });
    expect_error(e3, "print_too_few", line, {"more conversions than arguments"});
    const auto e4 = trace_error("print_too_many", [&](Array<float> f, Array<int> i) {
        line = __LINE__, weft::print("%d\n", i[weft::tid()], 2);
    });
    expect_error(e4, "print_too_many", line, {"more arguments than conversions"});
    const auto e5 = trace_error("print_string", [&](Array<float> f, Array<int> i) {
        line = __LINE__, weft::print("%s\n", i[weft::tid()]);
    });
    expect_error(e5, "print_string", line,
                 {"conversion %s is not supported", "use %d, %u, %x, %f, %e or %g"});
    const auto e6 = trace_error("print_lone_percent",
                                [&](Array<float> f, Array<int> i) { line = __LINE__, weft::print("100%"); });
    expect_error(e6, "print_lone_percent", line, {"lone %"});
}

// ---------------------------------------------------------------------------------------------
// Recursion between weft functions.

TEST(FunctionErrors, DirectRecursion) {
    weft::Module m{"err_recursion"};
    static std::optional<weft::Func<Int(Int)>> self;
    int line = 0;
    self.emplace(m.func("factorial", [&](Int n) {
        Int r = 1;
        weft::if_(n > 1, [&] { line = __LINE__, r = n * (*self)(n - 1); });
        return r;
    }));
    auto k = m.kernel("uses_factorial", {"out"}, [](Array<int> out) { out[weft::tid()] = (*self)(5); });
    const auto e = error_from([&] { weft::launch(k, 1, weft::zeros<int>(1, dev())); });
    expect_error(e, "factorial", line, {"calls itself", "recursion is not supported", "while_"});
    self.reset();
}

TEST(FunctionErrors, MutualRecursion) {
    weft::Module m{"err_mutual_recursion"};
    static std::optional<weft::Func<void(Array<int>, Int)>> ping, pong;
    int line = 0;
    ping.emplace(m.func("ping", [](Array<int> out, Int n) {
        out[n] = 1;
        weft::if_(n > 0, [&] { (*pong)(out, n - 1); });
    }));
    pong.emplace(m.func("pong", [&](Array<int> out, Int n) {
        out[n] = 2;
        weft::if_(n > 0, [&] { line = __LINE__, (*ping)(out, n - 1); });
    }));
    auto k = m.kernel("uses_ping", {"out"}, [](Array<int> out) { (*ping)(out, 3); });
    const auto e = error_from([&] { weft::launch(k, 1, weft::zeros<int>(4, dev())); });
    // ping is traced first; it calls pong, which calls ping while ping is still being traced.
    expect_error(e, "pong", line, {"function 'ping' calls itself, directly or through other functions"});
    ping.reset();
    pong.reset();
}

// ---------------------------------------------------------------------------------------------
// Bounds checking.

TEST(BoundsErrors, OutOfBoundsLoadNamesKernelArrayIndexAndLine) {
    weft::Module m{"err_bounds_load", {.bounds_check = true}};
    int line = 0;
    auto k = m.kernel("shift_copy", {"in", "out"}, [&](Array<float> in, Array<float> out) {
        auto t = weft::tid();
        out[t] = 1.0f;  // every thread writes before the last one faults
        line = __LINE__, out[t] = in[t + 1];
    });
    auto in = weft::full<float>(8, 3.0f, dev());
    auto out = weft::full<float>(8, -7.0f, dev());
    const auto e = error_from([&] { weft::launch(k, 8, in, out); });
    expect_error(e, "shift_copy", line,
                 {"index 8 is out of bounds for dimension 0 of array 'in' (extent 8)", "undone"});
    EXPECT_EQ(out.to_vector(), std::vector<float>(8, -7.0f)) << "a failed launch leaves user data as it was";
    EXPECT_EQ(in.to_vector(), std::vector<float>(8, 3.0f));

    // The module still works for launches that stay in bounds.
    auto in9 = weft::full<float>(9, 3.0f, dev());
    weft::launch(k, 8, in9, out);
    EXPECT_EQ(out.to_vector(), std::vector<float>(8, 3.0f));
}

TEST(BoundsErrors, OutOfBoundsStoreAndAtomicLeaveEveryWrittenArrayAsItWas) {
    weft::Module m{"err_bounds_store", {.bounds_check = true}};
    int store_line = 0, atomic_line = 0;
    auto k = m.kernel("scatter", {"index", "counts", "out"},
                      [&](Array<int> index, Array<int> counts, Array<int, 2> out) {
                          auto t = weft::tid();
                          counts[t % 2] += 1;
                          atomic_line = __LINE__, weft::atomic_add(counts, index[t], 10);
                          store_line = __LINE__, out(t, index[t]) = t;
                      });
    auto counts = weft::full<int>(3, 100, dev());
    auto out = weft::full<int>({4, 3}, -1, dev());
    // Thread 3's store goes to column 3 of a 3-column array (the atomic on counts[3] faults first).
    const auto e = error_from([&] {
        weft::launch(k, 4, weft::from_vector(std::vector<int>{0, 1, 2, 3}, dev()), counts, out);
    });
    expect_error(e, "scatter", atomic_line,
                 {"index 3 is out of bounds for dimension 0 of array 'counts' (extent 3)"});
    EXPECT_EQ(counts.to_vector(), std::vector<int>(3, 100));
    EXPECT_EQ(out.to_vector(), std::vector<int>(12, -1));

    // With the atomic in bounds, the store's second index faults.
    auto counts4 = weft::full<int>(4, 100, dev());
    const auto e2 = error_from([&] {
        weft::launch(k, 4, weft::from_vector(std::vector<int>{0, 1, 2, 3}, dev()), counts4, out);
    });
    expect_error(e2, "scatter", store_line,
                 {"index 3 is out of bounds for dimension 1 of array 'out' (extent 3)"});
    EXPECT_EQ(counts4.to_vector(), std::vector<int>(4, 100));
    EXPECT_EQ(out.to_vector(), std::vector<int>(12, -1));
}

TEST(BoundsErrors, NegativeIndexInAFunction) {
    weft::Module m{"err_bounds_func", {.bounds_check = true}};
    int line = 0;
    auto put = m.func("put", [&](Array<int> out, Int i) { line = __LINE__, out[i - 6] = i; });
    auto k = m.kernel("calls_put", {"out"}, [&](Array<int> out) { put(out, weft::tid()); });
    auto out = weft::full<int>(5, 42, dev());
    const auto e = error_from([&] { weft::launch(k, 5, out); });
    // The array is named as the function knows it: without parameter names, arg0, arg1, ...
    // -6 counts from the end of 5 elements and is still out of bounds.
    expect_error(e, "calls_put", line, {"index -6 is out of bounds", "array 'arg0'", "in function 'put'"});
    EXPECT_EQ(out.to_vector(), std::vector<int>(5, 42));

    // With parameter names, as a kernel takes them.
    weft::Module named{"err_bounds_named_func", {.bounds_check = true}};
    auto put_named = named.func("put", {"slots", "i"},
                                [&](Array<int> slots, Int i) { line = __LINE__, slots[i - 6] = i; });
    auto k2 = named.kernel("calls_put", {"out"}, [&](Array<int> out) { put_named(out, weft::tid()); });
    const auto e2 = error_from([&] { weft::launch(k2, 5, out); });
    expect_error(e2, "calls_put", line, {"index -6 is out of bounds", "array 'slots'", "in function 'put'"});
    // Names are checked as a kernel's are.
    const auto e3 = error_from([&] { named.func("bad", {"a b"}, [](Int) {}); });
    EXPECT_TRUE(has(e3.message(), "parameter name \"a b\" of function 'bad' is not an identifier"))
        << e3.message();
}

// ---------------------------------------------------------------------------------------------
// Other definitions errors.

TEST(DefinitionErrors, DuplicateKernelNames) {
    weft::Module m{"err_duplicate"};
    auto first = m.kernel("twice", {"out"}, [](Array<int> out) { out[weft::tid()] = 1; });
    const int line = __LINE__ + 1;
    [[maybe_unused]] auto second = m.kernel("twice", {"out"}, [](Array<int> out) { out[weft::tid()] = 2; });
    const auto e = error_from([&] { weft::launch(first, 1, weft::zeros<int>(1, dev())); });
    expect_error(e, "twice", line,
                 {"already has a kernel or function named 'twice'", "names must be unique"});
}

// ---------------------------------------------------------------------------------------------
// Values that outlive the body that made them, and loops that cannot end.

int g_escape_line = 0;

TEST(TraceErrors, ValueMadeInsideIfUsedAfterIt) {
    weft::Module m{"escaped_value"};
    auto k = m.kernel("escaped_value", {"a"}, [](Array<float> a) {
        auto t = weft::tid();
        std::optional<Float> inside;
        weft::if_(a[t] > 0.0f, [&] { inside.emplace(a[t] * 2.0f); });
        g_escape_line = __LINE__ + 1;
        a[t] = *inside;
    });
    const auto e = error_from([&] { m.compile(dev()); });
    expect_error(e, "escaped_value", g_escape_line,
                 {"inside an if_, for_ or while_ body", "declare a variable"});
}

TEST(TraceErrors, ForWithAConstantZeroStep) {
    weft::Module m{"zero_step"};
    int line = 0;
    auto k = m.kernel("zero_step", {"a"}, [&line](Array<float> a) {
        line = __LINE__ + 1;
        weft::for_(0, 10, 0, [&](Int i) { a[i] = 1.0f; });
    });
    const auto e = error_from([&] { m.compile(dev()); });
    expect_error(e, "zero_step", line, {"step of 0", "nonzero step"});
}

// ---------------------------------------------------------------------------------------------
// A kernel lambda runs while its module traces it, holding the module's lock: calling back into
// the module from there is an error, not a deadlock.

TEST(ReentrancyErrors, IrKernelAndLaunchOfTheModuleFromInsideItsLambda) {
    weft::Module m{"reentrant"};
    auto out = weft::zeros<int>(1, dev());
    int line = 0;
    weft::Error e("");  // read after the launch: the lambda sets `line` while it is traced
    auto calls_ir =
        m.kernel("calls_ir", {"out"}, [&](Array<int> out) { line = __LINE__, out[0] = 2, (void)m.ir(); });
    e = error_from([&] { weft::launch(calls_ir, 1, out); });
    expect_error(e, "calls_ir", line,
                 {"module 'reentrant': ir() was called from inside a kernel or function lambda",
                  "call it outside the lambda"});
    // Still an error (not a hang) the next time, and from ir() itself.
    e = error_from([&] { (void)m.ir(); });
    expect_error(e, "calls_ir", line, {"ir() was called"});
}

TEST(ReentrancyErrors, DefiningOrLaunchingFromInsideALambdaOfTheSameModule) {
    weft::Module m{"reentrant_define"};
    auto out = weft::zeros<int>(1, dev());
    int line = 0;
    weft::Error e("");
    auto defines = m.kernel("defines", {"out"}, [&](Array<int> out) {
        out[0] = 1;
        line = __LINE__, m.kernel("inner", [] {});
    });
    e = error_from([&] { weft::launch(defines, 1, out); });
    expect_error(e, "defines", line, {"kernel() was called from inside"});

    weft::Module n{"reentrant_launch"};
    auto target = n.kernel("target", {"out"}, [](Array<int> out) { out[0] = 1; });
    auto launches = n.kernel("launches", {"out"}, [&](Array<int> o) {
        o[0] = 2;
        line = __LINE__, weft::launch(target, 1, out);
    });
    e = error_from([&] { weft::launch(launches, 1, out); });
    expect_error(e, "launches", line,
                 {"a launch of one of its kernels (or compile()) was called from inside"});
    EXPECT_EQ(out.to_vector(), std::vector<int>{0});

    weft::Module f{"reentrant_func"};
    auto helper = f.func("helper", [&](Int x) {
        line = __LINE__, (void)(x + 1), f.set_options({.bounds_check = true});
        return x;
    });
    e = error_from([&] { f.compile(dev()); });
    expect_error(e, "helper", line, {"set_options() was called"});
}

// Reading the module's options while it traces is fine (nothing can change them meanwhile).
TEST(ReentrancyErrors, OptionsCanBeReadFromInsideALambda) {
    weft::Module m{"reentrant_options", {.bounds_check = true}};
    auto k = m.kernel("reads_options", {"out"},
                      [&](Array<int> out) { out[0] = m.options().bounds_check ? 7 : 3; });
    auto out = weft::zeros<int>(1, dev());
    weft::launch(k, 1, out);
    EXPECT_EQ(out.to_vector(), std::vector<int>{7});
}

}  // namespace
