// weft functions (Module::func): real call boundaries with scalar and array parameters, results and early
// returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Float;
using weft::Int;

weft::Device dev() {
    return weft::test::test_device();
}

weft::Module& module() {
    static weft::Module m{"functions"};
    return m;
}

// ---------------------------------------------------------------------------------------------
// Functions.

const auto f_square = module().func("square", [](Float x) { return x * x; });

// A function that calls another function.
const auto f_sum_squares =
    module().func("sum_squares", [](Float a, Float b) { return f_square(a) + f_square(b); });

// Early return_(value) from nested if_s.
const auto f_sign = module().func("sign", [](Int x) {
    weft::if_(x < 0, [&] { weft::return_(Int(-1)); });
    weft::if_(x == 0, [&] { weft::return_(Int(0)); });
    return Int(1);
});

// Scalars are passed by value: changing the parameter does not change the caller's variable.
const auto f_increment = module().func("increment", [](Int x) {
    x += 1;
    return x;
});

// Mixed parameter types.
const auto f_scale =
    module().func("scale", [](weft::Double d, weft::Int64 k) { return d * weft::cast<double>(k); });

// A void function with an array parameter that stores (arrays are passed by reference).
const auto f_store_pair = module().func("store_pair", [](Array<int> out, Int i, Int v) {
    out[i] = v;
    out[i + 1] = v * 2;
});

// A void function with an early return_().
const auto f_store_if_positive = module().func("store_if_positive", [](Array<float> out, Int i, Float v) {
    weft::if_(v <= 0.0f, [&] { weft::return_(); });
    out[i] = v;
});

// Atomics inside functions: one returning the old value, one through `+=`.
const auto f_take_slot =
    module().func("take_slot", [](Array<int> counter) { return weft::atomic_add(counter, 0, 1); });
const auto f_add_to = module().func("add_to", [](Array<float> bins, Int bin, Float v) { bins[bin] += v; });

// return_(value) from inside a loop.
const auto f_find = module().func("find", [](Array<int> haystack, Int needle) {
    weft::for_(haystack.shape(0),
               [&](Int j) { weft::if_(haystack[j] == needle, [&] { weft::return_(j); }); });
    return Int(-1);
});

// A function that calls a void function and a function with a result, with literal arguments.
const auto f_store_sign_pair = module().func("store_sign_pair", [](Array<int> out, Int i, Int v) {
    f_store_pair(out, i, f_sign(v) + 10);
    f_store_pair(out, 0, 0);  // overwritten by thread 0 only, see the test
});

// A function may read the thread index itself.
const auto f_thread_id = module().func("thread_id", [] { return weft::tid(); });

// Compiled with the module although no kernel calls it.
const auto f_unused = module().func("unused", [](Int x) { return x * 3; });

// ---------------------------------------------------------------------------------------------
// Kernels.

constexpr int kComputeRows = 6;

const auto k_compute =
    module().kernel("compute", {"values", "out"}, [](Array<float> values, Array<float, 2> out) {
        auto t = weft::tid();
        auto v = values[t];
        out(0, t) = f_square(v);
        out(1, t) = f_sum_squares(v, 2.0f);
        out(2, t) = weft::cast<float>(f_sign(weft::cast<int>(v)));
        Int a = weft::cast<int>(v);
        Int b = f_increment(a);
        out(3, t) = weft::cast<float>(a);
        out(4, t) = weft::cast<float>(b);
        out(5, t) = weft::cast<float>(f_scale(weft::cast<double>(v), weft::Int64(3)));
    });

const auto k_pairs = module().kernel("pairs", {"values", "pairs"}, [](Array<int> values, Array<int> pairs) {
    auto t = weft::tid();
    f_store_pair(pairs, t * 2, values[t]);
});

const auto k_compact =
    module().kernel("compact", {"values", "count", "compacted", "kept"},
                    [](Array<float> values, Array<int> count, Array<float> compacted, Array<float> kept) {
                        auto t = weft::tid();
                        auto v = values[t];
                        weft::if_(v > 0.0f, [&] {
                            auto slot = f_take_slot(count);
                            compacted[slot] = v;
                        });
                        f_store_if_positive(kept, t, v);
                    });

const auto k_histogram = module().kernel("histogram", {"values", "bins", "sums"},
                                         [](Array<float> values, Array<int> bins, Array<float> sums) {
                                             auto t = weft::tid();
                                             f_add_to(sums, bins[t], values[t]);
                                         });

const auto k_find = module().kernel("find_all", {"haystack", "needles", "where"},
                                    [](Array<int> haystack, Array<int> needles, Array<int> where) {
                                        auto t = weft::tid();
                                        where[t] = f_find(haystack, needles[t]);
                                    });

const auto k_sign_pairs =
    module().kernel("sign_pairs", {"values", "out"}, [](Array<int> values, Array<int> out) {
        auto t = weft::tid();
        weft::if_(t == 0, [&] { f_store_sign_pair(out, 2, values[t]); });
    });

// The kernel itself never calls tid(): only the function does.
const auto k_ids_from_function = module().kernel("ids_from_function", {"out"}, [](Array<int> out) {
    auto id = f_thread_id();
    out[id] = id * 3 + 1;
});

// ---------------------------------------------------------------------------------------------
// Tests.

TEST(Functions, ResultsOfFunctionsAndNestedCalls) {
    std::vector<float> values;
    for (int i = -20; i <= 20; ++i) values.push_back(0.75f * static_cast<float>(i));
    values.push_back(0.0f);
    values.push_back(-0.5f);
    const int64_t n = static_cast<int64_t>(values.size());
    auto out = weft::zeros<float>({kComputeRows, n}, dev());
    weft::launch(k_compute, n, weft::from_vector(values, dev()), out);
    const auto got = out.to_vector();
    for (int64_t i = 0; i < n; ++i) {
        const float v = values[i];
        const int iv = static_cast<int>(v);
        SCOPED_TRACE(testing::Message() << "v = " << v);
        EXPECT_EQ(got[0 * n + i], v * v);
        EXPECT_EQ(got[1 * n + i], v * v + 4.0f);
        EXPECT_EQ(got[2 * n + i], static_cast<float>(iv < 0 ? -1 : iv == 0 ? 0 : 1));
        EXPECT_EQ(got[3 * n + i], static_cast<float>(iv)) << "the caller's variable is unchanged";
        EXPECT_EQ(got[4 * n + i], static_cast<float>(iv + 1));
        EXPECT_EQ(got[5 * n + i], static_cast<float>(static_cast<double>(v) * 3.0));
    }
}

TEST(Functions, StoresThroughArrayParameters) {
    std::vector<int> values(40);
    for (int i = 0; i < 40; ++i) values[i] = i * i - 300;
    auto pairs = weft::full<int>(80, -1, dev());
    weft::launch(k_pairs, 40, weft::from_vector(values, dev()), pairs);
    const auto got = pairs.to_vector();
    for (int i = 0; i < 40; ++i) {
        EXPECT_EQ(got[2 * i], values[i]);
        EXPECT_EQ(got[2 * i + 1], values[i] * 2);
    }
}

TEST(Functions, AtomicsAndEarlyReturnInVoidFunctions) {
    std::vector<float> values;
    for (int i = 0; i < 300; ++i) values.push_back(static_cast<float>((i * 37) % 23) - 11.0f);
    const int64_t n = static_cast<int64_t>(values.size());
    auto count = weft::zeros<int>(1, dev());
    auto compacted = weft::full<float>(n, -100.0f, dev());
    auto kept = weft::full<float>(n, -100.0f, dev());
    weft::launch(k_compact, n, weft::from_vector(values, dev()), count, compacted, kept);

    std::vector<float> positive;
    for (float v : values)
        if (v > 0.0f) positive.push_back(v);
    ASSERT_FALSE(positive.empty());
    const int k = count.to_vector()[0];
    ASSERT_EQ(k, static_cast<int>(positive.size()));
    auto got = compacted.to_vector();
    std::vector<float> got_kept(got.begin(), got.begin() + k);
    EXPECT_TRUE(std::all_of(got.begin() + k, got.end(), [](float x) { return x == -100.0f; }));
    if (weft::test::in_thread_order(module())) {
        EXPECT_EQ(got_kept, positive) << "one CPU worker's threads take slots in thread order";
    } else {
        std::sort(got_kept.begin(), got_kept.end());
        std::sort(positive.begin(), positive.end());
        EXPECT_EQ(got_kept, positive);
    }
    const auto kv = kept.to_vector();
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(kv[i], values[i] > 0.0f ? values[i] : -100.0f) << i;
}

TEST(Functions, AtomicAddThroughPlusEqualsInAFunction) {
    const int n = 1000, num_bins = 7;
    std::vector<float> values(n);
    std::vector<int> bins(n);
    std::vector<float> want(num_bins, 0.0f);
    for (int i = 0; i < n; ++i) {
        values[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;  // sums are exact in any order
        bins[i] = (i * 5) % num_bins;
        want[bins[i]] += values[i];
    }
    auto sums = weft::zeros<float>(num_bins, dev());
    weft::launch(k_histogram, n, weft::from_vector(values, dev()), weft::from_vector(bins, dev()), sums);
    EXPECT_EQ(sums.to_vector(), want);
}

TEST(Functions, ReturnWithValueFromInsideALoop) {
    const std::vector<int> haystack = {5, 3, 9, 3, -1, 12, 5, 0};
    const std::vector<int> needles = {5, 3, 9, -1, 12, 0, 7, 100, -5};
    auto where = weft::full<int>(9, -99, dev());
    weft::launch(k_find, 9, weft::from_vector(haystack, dev()), weft::from_vector(needles, dev()), where);
    EXPECT_EQ(where.to_vector(), (std::vector<int>{0, 1, 2, 4, 5, 7, -1, -1, -1}));
}

TEST(Functions, FunctionCallingFunctionsWithLiteralArguments) {
    for (int v : {-7, 0, 42}) {
        SCOPED_TRACE(v);
        auto out = weft::full<int>(4, -1, dev());
        weft::launch(k_sign_pairs, 3, weft::from_vector(std::vector<int>{v, 1, 1}, dev()), out);
        const int s = v < 0 ? -1 : v == 0 ? 0 : 1;
        // store_pair(out, 2, sign + 10), then store_pair(out, 0, 0).
        EXPECT_EQ(out.to_vector(), (std::vector<int>{0, 0, s + 10, 2 * (s + 10)}));
    }
}

TEST(Functions, ThreadIndexReadInsideAFunction) {
    auto out = weft::full<int>(37, -1, dev());
    weft::launch(k_ids_from_function, 37, out);
    std::vector<int> want(37);
    for (int i = 0; i < 37; ++i) want[i] = i * 3 + 1;
    EXPECT_EQ(out.to_vector(), want);
}

// The printed IR keeps functions as functions: `func` definitions and `call` nodes.
TEST(Functions, IrHasRealCallBoundaries) {
    const std::string ir = module().ir();
    for (const char* name : {"square", "sum_squares", "sign", "increment", "scale", "store_pair",
                             "store_if_positive", "take_slot", "add_to", "find", "store_sign_pair", "unused"})
        EXPECT_NE(ir.find(std::string("func ") + name + "("), std::string::npos) << name << "\n" << ir;
    // Kernels call functions, and functions call functions.
    const auto body_of = [&](const std::string& header) {
        const size_t begin = ir.find(header);
        EXPECT_NE(begin, std::string::npos) << header;
        if (begin == std::string::npos) return std::string();
        return ir.substr(begin, ir.find("\n}\n", begin) - begin);
    };
    const std::string compute = body_of("kernel compute(");
    EXPECT_NE(compute.find("call square("), std::string::npos) << compute;
    EXPECT_NE(compute.find("call sum_squares("), std::string::npos) << compute;
    EXPECT_NE(compute.find("call sign("), std::string::npos) << compute;
    const std::string sum_squares = body_of("func sum_squares(");
    EXPECT_NE(sum_squares.find("call square("), std::string::npos) << sum_squares;
    EXPECT_EQ(sum_squares.find("mul"), std::string::npos) << "square's body is not inlined\n" << sum_squares;
    const std::string take_slot = body_of("func take_slot(");
    EXPECT_NE(take_slot.find("atomic.add"), std::string::npos) << take_slot;
    const std::string nested = body_of("func store_sign_pair(");
    EXPECT_NE(nested.find("call store_pair("), std::string::npos) << nested;
    EXPECT_NE(nested.find("call sign("), std::string::npos) << nested;
}

TEST(Functions, FuncHandlesKeepTheirNames) {
    EXPECT_EQ(f_square.name(), "square");
    EXPECT_EQ(f_store_pair.name(), "store_pair");
    EXPECT_EQ(k_compute.name(), "compute");
}

}  // namespace
