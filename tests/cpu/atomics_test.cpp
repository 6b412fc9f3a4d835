// Atomics on every type (returning the old value), `+=`/`-=` on elements, and 1-D to 4-D array indexing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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

// One worker: these tests replay every returned value in thread order (atomics under many
// workers: parallel_atomics_test.cpp).
weft::Module& module() {
    static weft::Module m{"atomics", {.cpu_threads = 1}};
    return m;
}

template <class T>
std::string type_name() {
    return weft::dtype_name(weft::dtype_of<T>);
}

// ---------------------------------------------------------------------------------------------
// Host references. Integer atomics wrap (computed in the unsigned type); float min/max are
// IEEE minNum/maxNum.

template <class T>
T h_add(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
    else
        return a + b;
}
template <class T>
T h_sub(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b));
    else
        return a - b;
}
template <class T>
T h_min(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        return std::fmin(a, b);
    else
        return std::min(a, b);
}
template <class T>
T h_max(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        return std::fmax(a, b);
    else
        return std::max(a, b);
}

// Threads run in thread order on one CPU worker; this replays them. Returns the final target and the
// value each thread's atomic returned.
template <class T, class Op>
std::pair<std::vector<T>, std::vector<T>> replay(std::vector<T> target, const std::vector<int>& index,
                                                 const std::vector<T>& value, Op op) {
    std::vector<T> old(index.size());
    for (size_t t = 0; t < index.size(); ++t) {
        old[t] = target[index[t]];
        target[index[t]] = op(old[t], value[t]);
    }
    return {target, old};
}

// Destinations shared by many threads, visited in an irregular order.
std::vector<int> destinations(int n, int num_targets) {
    std::vector<int> index(n);
    for (int i = 0; i < n; ++i) index[i] = (i * 7 + i / 3) % num_targets;
    return index;
}

// Values whose sums are exact in any order for floats, and that wrap around for integers.
template <class T>
std::vector<T> add_values(int n) {
    std::vector<T> v(n);
    std::mt19937_64 rng(42);
    for (int i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            v[i] = T(0.25) * static_cast<T>(static_cast<int>(rng() % 41) - 20);
        } else {
            v[i] =
                (i % 5 == 0) ? static_cast<T>(rng()) : static_cast<T>(static_cast<int>(rng() % 2001) - 1000);
        }
    }
    return v;
}

// Values anywhere in the range (no NaNs), for min and max.
template <class T>
std::vector<T> minmax_values(int n) {
    std::vector<T> v(n);
    std::mt19937_64 rng(7);
    for (int i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            v[i] =
                std::ldexp(std::uniform_real_distribution<T>(-1, 1)(rng), static_cast<int>(rng() % 80) - 40);
        } else {
            v[i] = static_cast<T>(rng());
        }
    }
    v[n / 2] = std::numeric_limits<T>::lowest();
    v[n / 3] = std::numeric_limits<T>::max();
    return v;
}

// ---------------------------------------------------------------------------------------------
// Kernels: old[t] = atomic_OP(target, index[t], value[t]).

template <class T>
using AtomicKernel = weft::Kernel<Array<T>, Array<int>, Array<T>, Array<T>>;

template <class T>
struct ArithmeticAtomics {
    using A = Array<T>;
    AtomicKernel<T> add, sub, min, max, add_shorthand;
    weft::Kernel<Array<int>, A, A, A> plus_minus_equals;

    ArithmeticAtomics()
        : add(module().kernel("add_" + type_name<T>(), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_add(target, index[t], value[t]);
                              })),
          sub(module().kernel("sub_" + type_name<T>(), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_sub(target, index[t], value[t]);
                              })),
          min(module().kernel("min_" + type_name<T>(), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_min(target, index[t], value[t]);
                              })),
          max(module().kernel("max_" + type_name<T>(), {"target", "index", "value", "old"},
                              [](A target, Array<int> index, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_max(target, index[t], value[t]);
                              })),
          // The value comes from a traced expression and a literal; the old value is ignored.
          add_shorthand(module().kernel("add_unused_" + type_name<T>(), {"target", "index", "value", "old"},
                                        [](A target, Array<int> index, A value, A old) {
                                            auto t = weft::tid();
                                            weft::atomic_add(target, index[t], value[t] * 2);
                                            weft::atomic_add(target, index[t], 1);
                                            old[t] = 0;
                                        })),
          plus_minus_equals(module().kernel("plus_minus_equals_" + type_name<T>(),
                                            {"index", "value", "plus", "minus"},
                                            [](Array<int> index, A value, A plus, A minus) {
                                                auto t = weft::tid();
                                                plus[index[t]] += value[t];
                                                minus[index[t]] -= value[t];
                                            })) {}
};

template <class T>
struct IntegerAtomics {
    using A = Array<T>;
    AtomicKernel<T> exch, bit_and, bit_or, bit_xor;
    weft::Kernel<A, Array<int>, A, A, A> cas;

    IntegerAtomics()
        : exch(module().kernel("exch_" + type_name<T>(), {"target", "index", "value", "old"},
                               [](A target, Array<int> index, A value, A old) {
                                   auto t = weft::tid();
                                   old[t] = weft::atomic_exch(target, index[t], value[t]);
                               })),
          bit_and(module().kernel("and_" + type_name<T>(), {"target", "index", "value", "old"},
                                  [](A target, Array<int> index, A value, A old) {
                                      auto t = weft::tid();
                                      old[t] = weft::atomic_and(target, index[t], value[t]);
                                  })),
          bit_or(module().kernel("or_" + type_name<T>(), {"target", "index", "value", "old"},
                                 [](A target, Array<int> index, A value, A old) {
                                     auto t = weft::tid();
                                     old[t] = weft::atomic_or(target, index[t], value[t]);
                                 })),
          bit_xor(module().kernel("xor_" + type_name<T>(), {"target", "index", "value", "old"},
                                  [](A target, Array<int> index, A value, A old) {
                                      auto t = weft::tid();
                                      old[t] = weft::atomic_xor(target, index[t], value[t]);
                                  })),
          cas(module().kernel("cas_" + type_name<T>(), {"target", "index", "compare", "value", "old"},
                              [](A target, Array<int> index, A compare, A value, A old) {
                                  auto t = weft::tid();
                                  old[t] = weft::atomic_cas(target, index[t], compare[t], value[t]);
                              })) {}
};

const ArithmeticAtomics<int32_t> kArithI32;
const ArithmeticAtomics<uint32_t> kArithU32;
const ArithmeticAtomics<int64_t> kArithI64;
const ArithmeticAtomics<uint64_t> kArithU64;
const ArithmeticAtomics<float> kArithF32;
const ArithmeticAtomics<double> kArithF64;
const IntegerAtomics<int32_t> kIntI32;
const IntegerAtomics<uint32_t> kIntU32;
const IntegerAtomics<int64_t> kIntI64;
const IntegerAtomics<uint64_t> kIntU64;

template <class T>
const ArithmeticAtomics<T>& arithmetic() {
    if constexpr (std::is_same_v<T, int32_t>)
        return kArithI32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return kArithU32;
    else if constexpr (std::is_same_v<T, int64_t>)
        return kArithI64;
    else if constexpr (std::is_same_v<T, uint64_t>)
        return kArithU64;
    else if constexpr (std::is_same_v<T, float>)
        return kArithF32;
    else
        return kArithF64;
}
template <class T>
const IntegerAtomics<T>& integer() {
    if constexpr (std::is_same_v<T, int32_t>)
        return kIntI32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return kIntU32;
    else if constexpr (std::is_same_v<T, int64_t>)
        return kIntI64;
    else
        return kIntU64;
}

// Runs `kernel` over (index, value) from `initial` and checks the final target against the
// replay; on one CPU worker, where threads run in order, also every returned old value. (For exch the
// final value depends on the order: callers skip other devices.)
template <class T, class Op>
void check_atomic(const AtomicKernel<T>& kernel, const std::vector<T>& initial, const std::vector<int>& index,
                  const std::vector<T>& value, Op op) {
    const int64_t n = static_cast<int64_t>(index.size());
    auto target = weft::from_vector(initial, dev());
    auto old = weft::zeros<T>(n, dev());
    weft::launch(kernel, n, target, weft::from_vector(index, dev()), weft::from_vector(value, dev()), old);
    const auto [want_target, want_old] = replay(initial, index, value, op);
    EXPECT_EQ(target.to_vector(), want_target);
    // Elsewhere threads run in no fixed order; the final values above do not depend on it.
    if (weft::test::in_thread_order(module()))
        EXPECT_EQ(old.to_vector(), want_old)
            << "each thread gets the value before its own update, in thread order";
}

template <class T>
class ArithmeticAtomicOps : public ::testing::Test {};
using ArithmeticTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(ArithmeticAtomicOps, ArithmeticTypes);

TYPED_TEST(ArithmeticAtomicOps, AddReturnsOldValue) {
    using T = TypeParam;
    const int n = 600;
    const std::vector<T> initial = {T(0), T(1), T(100), T(3), T(5)};
    SCOPED_TRACE("atomic_add");
    check_atomic(arithmetic<T>().add, initial, destinations(n, 5), add_values<T>(n), h_add<T>);
}

TYPED_TEST(ArithmeticAtomicOps, SubReturnsOldValue) {
    using T = TypeParam;
    const int n = 600;
    const std::vector<T> initial = {T(0), T(1000), T(7), T(3), T(5)};
    SCOPED_TRACE("atomic_sub");
    check_atomic(arithmetic<T>().sub, initial, destinations(n, 5), add_values<T>(n), h_sub<T>);
}

TYPED_TEST(ArithmeticAtomicOps, MinReturnsOldValue) {
    using T = TypeParam;
    const int n = 600;
    const std::vector<T> initial = {T(0), std::numeric_limits<T>::max(), T(7), T(3), T(5)};
    SCOPED_TRACE("atomic_min");
    check_atomic(arithmetic<T>().min, initial, destinations(n, 5), minmax_values<T>(n), h_min<T>);
}

TYPED_TEST(ArithmeticAtomicOps, MaxReturnsOldValue) {
    using T = TypeParam;
    const int n = 600;
    const std::vector<T> initial = {T(0), std::numeric_limits<T>::lowest(), T(7), T(3), T(5)};
    SCOPED_TRACE("atomic_max");
    check_atomic(arithmetic<T>().max, initial, destinations(n, 5), minmax_values<T>(n), h_max<T>);
}

TYPED_TEST(ArithmeticAtomicOps, ResultMayBeIgnoredAndTakeLiterals) {
    using T = TypeParam;
    const int n = 300;
    const auto index = destinations(n, 3);
    const auto value = add_values<T>(n);
    const std::vector<T> initial = {T(1), T(2), T(3)};
    auto target = weft::from_vector(initial, dev());
    auto old = weft::full<T>(n, T(9), dev());
    weft::launch(arithmetic<T>().add_shorthand, n, target, weft::from_vector(index, dev()),
                 weft::from_vector(value, dev()), old);
    std::vector<T> want = initial;
    for (int t = 0; t < n; ++t)
        want[index[t]] = h_add(h_add(want[index[t]], h_add(value[t], value[t])), T(1));
    EXPECT_EQ(target.to_vector(), want);
    EXPECT_EQ(old.to_vector(), std::vector<T>(n, T(0)));
}

TYPED_TEST(ArithmeticAtomicOps, PlusAndMinusEqualsOnElementsAreAtomic) {
    using T = TypeParam;
    const int n = 1000, num_targets = 6;
    const auto index = destinations(n, num_targets);
    const auto value = add_values<T>(n);
    auto plus = weft::full<T>(num_targets, T(10), dev());
    auto minus = weft::full<T>(num_targets, T(10), dev());
    weft::launch(arithmetic<T>().plus_minus_equals, n, weft::from_vector(index, dev()),
                 weft::from_vector(value, dev()), plus, minus);
    std::vector<T> want_plus(num_targets, T(10)), want_minus(num_targets, T(10));
    for (int t = 0; t < n; ++t) {
        want_plus[index[t]] = h_add(want_plus[index[t]], value[t]);
        want_minus[index[t]] = h_sub(want_minus[index[t]], value[t]);
    }
    EXPECT_EQ(plus.to_vector(), want_plus);
    EXPECT_EQ(minus.to_vector(), want_minus);
}

TEST(AtomicIr, PlusEqualsOnAnElementIsAnAtomicNode) {
    const std::string ir = module().ir();
    const size_t begin = ir.find("kernel plus_minus_equals_float32(");
    ASSERT_NE(begin, std::string::npos) << ir;
    const std::string body = ir.substr(begin, ir.find("\n}\n", begin) - begin);
    EXPECT_NE(body.find("atomic.add"), std::string::npos) << body;
    EXPECT_NE(body.find("atomic.sub"), std::string::npos) << body;
    EXPECT_EQ(body.find("store"), std::string::npos) << "`+=` must not be a load and a store\n" << body;
}

// On one CPU worker, float additions happen in thread order, so rounding is reproducible exactly.
TEST(AtomicOrder, FloatAddRoundsInThreadOrderOnCpu) {
    WEFT_SKIP_UNLESS_CPU();
    const int n = 777;
    std::vector<float> value(n);
    for (int i = 0; i < n; ++i)
        value[i] = 1.0f / static_cast<float>(i + 1) + 1e-3f * static_cast<float>(i % 13);
    const auto index = destinations(n, 3);
    check_atomic(kArithF32.add, std::vector<float>{0.1f, 1e7f, -3.0f}, index, value, h_add<float>);
    std::vector<double> dvalue(value.begin(), value.end());
    for (double& d : dvalue) d /= 3.0;
    check_atomic(kArithF64.add, std::vector<double>{0.1, 1e15, -3.0}, index, dvalue, h_add<double>);
}

// ---------------------------------------------------------------------------------------------
// Integer-only atomics.

template <class T>
class IntegerAtomicOps : public ::testing::Test {};
using IntegerTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t>;
TYPED_TEST_SUITE(IntegerAtomicOps, IntegerTypes);

template <class T>
std::vector<T> bit_patterns(int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<T> v(n);
    for (auto& x : v) {
        // Sparse and dense masks, so that and/or do not saturate at once.
        const uint64_t a = rng(), b = rng();
        x = static_cast<T>((rng() & 1) ? (a | b) : (a & b));
    }
    return v;
}

TYPED_TEST(IntegerAtomicOps, AndOrXorReturnOldValue) {
    using T = TypeParam;
    const int n = 200;
    const auto index = destinations(n, 4);
    const std::vector<T> ones(4, static_cast<T>(~T(0)));
    const std::vector<T> initial = {T(0), T(0x5555), static_cast<T>(0xf0f0f0f0f0f0f0f0ull), T(1)};
    {
        SCOPED_TRACE("atomic_and");
        check_atomic(integer<T>().bit_and, ones, index, bit_patterns<T>(n, 1),
                     [](T a, T b) { return T(a & b); });
    }
    {
        SCOPED_TRACE("atomic_or");
        // Mostly sparse values so the result is not all ones after a few threads.
        auto v = bit_patterns<T>(n, 2);
        for (auto& x : v) x = static_cast<T>(x & (x >> 7) & (x >> 13));
        check_atomic(integer<T>().bit_or, initial, index, v, [](T a, T b) { return T(a | b); });
    }
    {
        SCOPED_TRACE("atomic_xor");
        check_atomic(integer<T>().bit_xor, initial, index, bit_patterns<T>(n, 3),
                     [](T a, T b) { return T(a ^ b); });
    }
}

TYPED_TEST(IntegerAtomicOps, ExchangeReturnsThePreviousValue) {
    using T = TypeParam;
    WEFT_SKIP_UNLESS_CPU();  // the final value depends on which thread runs last
    const int n = 100;
    const auto index = destinations(n, 3);
    std::vector<T> value(n);
    for (int i = 0; i < n; ++i) value[i] = static_cast<T>(i * 3 + 1);
    check_atomic(integer<T>().exch, std::vector<T>{T(7), T(8), T(9)}, index, value, [](T, T b) { return b; });
}

TYPED_TEST(IntegerAtomicOps, ExchangeOnOwnElements) {
    using T = TypeParam;
    const int n = 50;
    std::vector<int> index(n);
    std::vector<T> initial(n), value(n);
    for (int i = 0; i < n; ++i) {
        index[i] = n - 1 - i;
        initial[i] = static_cast<T>(i * 11);
        value[i] = static_cast<T>(1000 + i);
    }
    auto target = weft::from_vector(initial, dev());
    auto old = weft::zeros<T>(n, dev());
    weft::launch(integer<T>().exch, n, target, weft::from_vector(index, dev()),
                 weft::from_vector(value, dev()), old);
    const auto got_target = target.to_vector(), got_old = old.to_vector();
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(got_old[i], initial[n - 1 - i]);
        EXPECT_EQ(got_target[n - 1 - i], value[i]);
    }
}

TYPED_TEST(IntegerAtomicOps, CompareAndSwapOnOwnElements) {
    using T = TypeParam;
    const int n = 64;
    std::vector<int> index(n);
    std::vector<T> initial(n), compare(n), value(n);
    for (int i = 0; i < n; ++i) {
        index[i] = i;
        initial[i] = static_cast<T>(i * 5);
        compare[i] = (i % 3 == 0) ? static_cast<T>(i * 5 + 1) : initial[i];  // every third one mismatches
        value[i] = static_cast<T>(std::numeric_limits<T>::max() - i);
    }
    auto target = weft::from_vector(initial, dev());
    auto old = weft::zeros<T>(n, dev());
    weft::launch(integer<T>().cas, n, target, weft::from_vector(index, dev()),
                 weft::from_vector(compare, dev()), weft::from_vector(value, dev()), old);
    const auto got_target = target.to_vector(), got_old = old.to_vector();
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(got_old[i], initial[i]) << i;
        EXPECT_EQ(got_target[i], i % 3 == 0 ? initial[i] : value[i]) << i;
    }
}

TYPED_TEST(IntegerAtomicOps, CompareAndSwapUnderContentionInThreadOrder) {
    using T = TypeParam;
    WEFT_SKIP_UNLESS_CPU();  // which thread wins depends on the order threads run in
    // Thread t expects the element to hold t's predecessor's value: a chain that succeeds for
    // every thread when they run in order, and threads that expect something else fail.
    const int n = 60;
    std::vector<int> index(n, 0);
    std::vector<T> compare(n), value(n);
    for (int i = 0; i < n; ++i) {
        compare[i] = (i % 4 == 3) ? T(12345) : static_cast<T>(i);
        value[i] = static_cast<T>(i + 1);
    }
    auto target = weft::zeros<T>(1, dev());
    auto old = weft::zeros<T>(n, dev());
    weft::launch(integer<T>().cas, n, target, weft::from_vector(index, dev()),
                 weft::from_vector(compare, dev()), weft::from_vector(value, dev()), old);
    T current = 0;
    std::vector<T> want_old(n);
    for (int i = 0; i < n; ++i) {
        want_old[i] = current;
        if (current == compare[i]) current = value[i];
    }
    EXPECT_EQ(old.to_vector(), want_old);
    EXPECT_EQ(target.to_vector()[0], current);
    EXPECT_EQ(current, T(3)) << "the chain breaks at the first thread that expects something else";
}

// ---------------------------------------------------------------------------------------------
// Multi-dimensional arrays: a(i, j, ...) indexing, row-major strides, atomics, shape(d).

const auto k_grid2 = module().kernel("grid2", {"a", "transposed", "counts", "sums", "flat"},
                                     [](Array<float, 2> a, Array<float, 2> transposed, Array<int, 2> counts,
                                        Array<float, 2> sums, Array<float> flat) {
                                         auto [i, j] = weft::tid<2>();
                                         auto v = a(i, j);
                                         transposed(j, i) = v;
                                         counts(i % 2, j % 3) += 1;
                                         weft::atomic_add(sums, j % 2, weft::cast<int64_t>(i) % 2, v);
                                         flat(i * a.shape(1) + j) =
                                             v * 2.0f;  // the 1-D call form, and a row-major linear index
                                     });

const auto k_grid3 =
    module().kernel("grid3", {"a", "out", "hist", "maxes"},
                    [](Array<int, 3> a, Array<int, 3> out, Array<int, 3> hist, Array<int, 3> maxes) {
                        auto [i, j, k] = weft::tid<3>();
                        auto v = a(i, j, k);
                        out(k, j, i) = v * 10 + 1;
                        hist(i % 2, j % 2, k % 2) += v;
                        weft::atomic_max(maxes, 0, j, weft::cast<uint32_t>(k) % 2u, v);
                    });

const auto k_grid4 = module().kernel(
    "grid4", {"a", "out", "acc", "mins"},
    [](Array<double, 4> a, Array<double, 4> out, Array<double, 4> acc, Array<int64_t, 4> mins) {
        auto [i, j, k, l] = weft::tid<4>();
        auto v = a(i, j, k, l);
        out(l, k, j, i) = v;
        weft::atomic_add(acc, i % 2, 0, k % 2, l % 3, v);
        weft::atomic_min(mins, 0, j, 0, 0, weft::cast<int64_t>(v * 4.0));
        acc(1, 0, 1, 2) -= 0.25;
    });

const auto k_cas2 = module().kernel("cas2", {"grid", "old"}, [](Array<int, 2> grid, Array<int, 2> old) {
    auto [i, j] = weft::tid<2>();
    old(i, j) = weft::atomic_cas(grid, i, j, i * 10 + j, -1);  // succeeds where grid(i, j) == 10i + j
});

const auto k_shapes = module().kernel(
    "shapes", {"a4", "a3", "a2", "a1", "out"},
    [](Array<float, 4> a4, Array<uint64_t, 3> a3, Array<int, 2> a2, Array<bool> a1, Array<int> out) {
        out[0] = a4.shape(0);
        out[1] = a4.shape(1);
        out[2] = a4.shape(2);
        out[3] = a4.shape(3);
        out[4] = a3.shape(0);
        out[5] = a3.shape(1);
        out[6] = a3.shape(2);
        out[7] = a2.shape(0);
        out[8] = a2.shape(1);
        out[9] = a1.shape(0);
    });

TEST(MultiDimensional, TwoDimensionalIndexingStridesAndAtomics) {
    const int rows = 6, cols = 9;
    std::vector<float> a(rows * cols);
    for (int i = 0; i < rows * cols; ++i) a[i] = 0.25f * static_cast<float>((i * 13) % 17) - 2.0f;
    auto transposed = weft::zeros<float>({cols, rows}, dev());
    auto counts = weft::zeros<int>({2, 3}, dev());
    auto sums = weft::zeros<float>({2, 2}, dev());
    auto flat = weft::zeros<float>(rows * cols, dev());
    weft::launch(k_grid2, {rows, cols}, weft::from_vector(a, {rows, cols}, dev()), transposed, counts, sums,
                 flat);
    std::vector<float> want_t(rows * cols), want_sums(4, 0.0f), want_flat(rows * cols);
    std::vector<int> want_counts(6, 0);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            const float v = a[i * cols + j];
            want_t[j * rows + i] = v;
            want_counts[(i % 2) * 3 + j % 3] += 1;
            want_sums[(j % 2) * 2 + i % 2] += v;
            want_flat[i * cols + j] = v * 2.0f;
        }
    EXPECT_EQ(transposed.to_vector(), want_t);
    EXPECT_EQ(counts.to_vector(), want_counts);
    EXPECT_EQ(sums.to_vector(), want_sums);
    EXPECT_EQ(flat.to_vector(), want_flat);
}

TEST(MultiDimensional, ThreeDimensionalIndexingStridesAndAtomics) {
    const int d0 = 3, d1 = 4, d2 = 5;
    std::vector<int> a(d0 * d1 * d2);
    for (int i = 0; i < d0 * d1 * d2; ++i) a[i] = (i * 37) % 101 - 50;
    auto out = weft::zeros<int>({d2, d1, d0}, dev());
    auto hist = weft::zeros<int>({2, 2, 2}, dev());
    auto maxes = weft::full<int>({1, d1, 2}, std::numeric_limits<int>::min(), dev());
    weft::launch(k_grid3, {d0, d1, d2}, weft::from_vector(a, {d0, d1, d2}, dev()), out, hist, maxes);
    std::vector<int> want_out(d0 * d1 * d2), want_hist(8, 0),
        want_max(d1 * 2, std::numeric_limits<int>::min());
    for (int i = 0; i < d0; ++i)
        for (int j = 0; j < d1; ++j)
            for (int k = 0; k < d2; ++k) {
                const int v = a[(i * d1 + j) * d2 + k];
                want_out[(k * d1 + j) * d0 + i] = v * 10 + 1;
                want_hist[((i % 2) * 2 + j % 2) * 2 + k % 2] += v;
                want_max[j * 2 + k % 2] = std::max(want_max[j * 2 + k % 2], v);
            }
    EXPECT_EQ(out.to_vector(), want_out);
    EXPECT_EQ(hist.to_vector(), want_hist);
    EXPECT_EQ(maxes.to_vector(), want_max);
}

TEST(MultiDimensional, FourDimensionalIndexingStridesAndAtomics) {
    const int d0 = 2, d1 = 3, d2 = 4, d3 = 3;
    const int total = d0 * d1 * d2 * d3;
    std::vector<double> a(total);
    for (int i = 0; i < total; ++i) a[i] = 0.25 * ((i * 29) % 61) - 7.0;
    auto out = weft::zeros<double>({d3, d2, d1, d0}, dev());
    auto acc = weft::zeros<double>({2, 1, 2, 3}, dev());
    auto mins = weft::full<int64_t>({1, d1, 1, 1}, std::numeric_limits<int64_t>::max(), dev());
    weft::launch(k_grid4, {d0, d1, d2, d3}, weft::from_vector(a, {d0, d1, d2, d3}, dev()), out, acc, mins);
    std::vector<double> want_out(total), want_acc(12, 0.0);
    std::vector<int64_t> want_min(d1, std::numeric_limits<int64_t>::max());
    for (int i = 0; i < d0; ++i)
        for (int j = 0; j < d1; ++j)
            for (int k = 0; k < d2; ++k)
                for (int l = 0; l < d3; ++l) {
                    const double v = a[((i * d1 + j) * d2 + k) * d3 + l];
                    want_out[((l * d2 + k) * d1 + j) * d0 + i] = v;
                    want_acc[((i % 2) * 2 + k % 2) * 3 + l % 3] += v;
                    want_min[j] = std::min(want_min[j], static_cast<int64_t>(v * 4.0));
                }
    want_acc[(1 * 2 + 1) * 3 + 2] -= 0.25 * total;
    EXPECT_EQ(out.to_vector(), want_out);
    EXPECT_EQ(acc.to_vector(), want_acc);
    EXPECT_EQ(mins.to_vector(), want_min);
}

TEST(MultiDimensional, TwoDimensionalCompareAndSwap) {
    const int rows = 4, cols = 5;
    std::vector<int> grid(rows * cols);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) grid[i * cols + j] = (i + j) % 2 == 0 ? i * 10 + j : 99;
    auto g = weft::from_vector(grid, {rows, cols}, dev());
    auto old = weft::zeros<int>({rows, cols}, dev());
    weft::launch(k_cas2, {rows, cols}, g, old);
    const auto got = g.to_vector();
    EXPECT_EQ(old.to_vector(), grid);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            EXPECT_EQ(got[i * cols + j], (i + j) % 2 == 0 ? -1 : 99) << i << "," << j;
}

TEST(MultiDimensional, ShapeOfEachDimension) {
    auto out = weft::full<int>(10, -1, dev());
    weft::launch(k_shapes, 1, weft::zeros<float>({2, 3, 4, 5}, dev()),
                 weft::zeros<uint64_t>({6, 1, 7}, dev()), weft::zeros<int>({8, 9}, dev()),
                 weft::zeros<bool>(11, dev()), out);
    EXPECT_EQ(out.to_vector(), (std::vector<int>{2, 3, 4, 5, 6, 1, 7, 8, 9, 11}));
}

}  // namespace
