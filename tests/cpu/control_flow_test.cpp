// Traced control flow: thread indices of 1-D to 4-D launches, locals, if_, for_, while_, break_, continue_,
// return_.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Int;

weft::Device dev() {
    return weft::test::test_device();
}

// One module for every kernel of this file: compiled once, then loaded from the cache.
weft::Module& module() {
    static weft::Module m{"control_flow"};
    return m;
}

// ---------------------------------------------------------------------------------------------
// Thread indices. Each thread counts its visit and takes a ticket from a counter; on the CPU
// threads run one after another, so the tickets give the order the threads ran in.

const auto k_tid1 = module().kernel("tid1", {"visits", "ticket", "counter"},
                                    [](Array<int> visits, Array<int> ticket, Array<int> counter) {
                                        auto t = weft::tid();
                                        visits[t] += 1;
                                        ticket[t] = weft::atomic_add(counter, 0, 1);
                                    });

const auto k_tid2 = module().kernel("tid2", {"visits", "ticket", "counter"},
                                    [](Array<int, 2> visits, Array<int, 2> ticket, Array<int> counter) {
                                        auto [i, j] = weft::tid<2>();
                                        visits(i, j) += 1;
                                        ticket(i, j) = weft::atomic_add(counter, 0, 1);
                                    });

const auto k_tid3 = module().kernel("tid3", {"visits", "ticket", "counter"},
                                    [](Array<int, 3> visits, Array<int, 3> ticket, Array<int> counter) {
                                        auto [i, j, k] = weft::tid<3>();
                                        visits(i, j, k) += 1;
                                        ticket(i, j, k) = weft::atomic_add(counter, 0, 1);
                                    });

const auto k_tid4 = module().kernel("tid4", {"visits", "ticket", "counter"},
                                    [](Array<int, 4> visits, Array<int, 4> ticket, Array<int> counter) {
                                        auto [i, j, k, l] = weft::tid<4>();
                                        visits(i, j, k, l) += 1;
                                        ticket(i, j, k, l) = weft::atomic_add(counter, 0, 1);
                                    });

// Every element visited once; on one CPU worker, tickets in row-major order (the last index fastest).
void expect_each_thread_once_in_row_major_order(const std::vector<int>& visits,
                                                const std::vector<int>& ticket,
                                                const std::vector<int>& counter) {
    const int total = static_cast<int>(visits.size());
    EXPECT_EQ(counter[0], total);
    EXPECT_EQ(std::count(visits.begin(), visits.end(), 1), total) << "every thread runs exactly once";
    std::vector<int> sorted = ticket;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> expected(total);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(sorted, expected) << "one ticket per thread";
    if (weft::test::in_thread_order(module()))
        EXPECT_EQ(ticket, expected) << "one CPU worker runs threads in row-major order";
}

TEST(ThreadIndex, OneDimensionalCoversEveryIndexOnce) {
    for (int64_t n : {1, 2, 7, 64, 1000}) {
        SCOPED_TRACE(n);
        auto visits = weft::zeros<int>(n, dev());
        auto ticket = weft::full<int>(n, -1, dev());
        auto counter = weft::zeros<int>(1, dev());
        weft::launch(k_tid1, n, visits, ticket, counter);
        expect_each_thread_once_in_row_major_order(visits.to_vector(), ticket.to_vector(),
                                                   counter.to_vector());
    }
}

TEST(ThreadIndex, OneDimensionalWithBracedDim) {
    auto visits = weft::zeros<int>(9, dev());
    auto ticket = weft::full<int>(9, -1, dev());
    auto counter = weft::zeros<int>(1, dev());
    weft::launch(k_tid1, weft::Dim{9}, visits, ticket, counter);
    expect_each_thread_once_in_row_major_order(visits.to_vector(), ticket.to_vector(), counter.to_vector());
}

TEST(ThreadIndex, TwoDimensionalIsRowMajor) {
    for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {1, 7}, {7, 1}, {16, 16}, {2, 33}}) {
        SCOPED_TRACE(testing::Message() << a << " x " << b);
        auto visits = weft::zeros<int>({a, b}, dev());
        auto ticket = weft::full<int>({a, b}, -1, dev());
        auto counter = weft::zeros<int>(1, dev());
        weft::launch(k_tid2, {a, b}, visits, ticket, counter);
        expect_each_thread_once_in_row_major_order(visits.to_vector(), ticket.to_vector(),
                                                   counter.to_vector());
    }
}

TEST(ThreadIndex, ThreeDimensionalIsRowMajor) {
    for (auto dims : std::vector<std::vector<int64_t>>{{3, 5, 7}, {1, 1, 9}, {4, 1, 3}, {2, 2, 2}}) {
        SCOPED_TRACE(testing::Message() << dims[0] << " x " << dims[1] << " x " << dims[2]);
        const weft::Shape shape{dims[0], dims[1], dims[2]};
        auto visits = weft::zeros<int>(shape, dev());
        auto ticket = weft::full<int>(shape, -1, dev());
        auto counter = weft::zeros<int>(1, dev());
        weft::launch(k_tid3, {dims[0], dims[1], dims[2]}, visits, ticket, counter);
        expect_each_thread_once_in_row_major_order(visits.to_vector(), ticket.to_vector(),
                                                   counter.to_vector());
    }
}

TEST(ThreadIndex, FourDimensionalIsRowMajor) {
    for (auto dims :
         std::vector<std::vector<int64_t>>{{2, 3, 4, 5}, {1, 1, 1, 1}, {5, 1, 2, 1}, {3, 3, 3, 3}}) {
        SCOPED_TRACE(testing::Message()
                     << dims[0] << " x " << dims[1] << " x " << dims[2] << " x " << dims[3]);
        const weft::Shape shape{dims[0], dims[1], dims[2], dims[3]};
        auto visits = weft::zeros<int>(shape, dev());
        auto ticket = weft::full<int>(shape, -1, dev());
        auto counter = weft::zeros<int>(1, dev());
        weft::launch(k_tid4, {dims[0], dims[1], dims[2], dims[3]}, visits, ticket, counter);
        expect_each_thread_once_in_row_major_order(visits.to_vector(), ticket.to_vector(),
                                                   counter.to_vector());
    }
}

// ---------------------------------------------------------------------------------------------
// Locals and if_.

const auto k_classify = module().kernel("classify", {"values", "category", "scale"},
                                        [](Array<int> values, Array<int> category, Array<float> scale) {
                                            auto t = weft::tid();
                                            auto v = values[t];
                                            Int c = 0;
                                            weft::Float f = 1.5f;
                                            weft::if_(
                                                v < 0,
                                                [&] {
                                                    c = -1;
                                                    weft::if_(v < -100, [&] {
                                                        c = -2;
                                                        f = -2.5f;
                                                    });
                                                },
                                                [&] {
                                                    weft::if_(
                                                        v == 0, [&] { f = 0.0f; },
                                                        [&] {
                                                            c = 1;
                                                            weft::if_(
                                                                v > 100, [&] { c = 2; },
                                                                [&] {
                                                                    c += v;
                                                                    f *= 2.0f;
                                                                });
                                                        });
                                                });
                                            category[t] = c;
                                            scale[t] = f;
                                        });

std::pair<int, float> host_classify(int v) {
    int c = 0;
    float f = 1.5f;
    if (v < 0) {
        c = -1;
        if (v < -100) {
            c = -2;
            f = -2.5f;
        }
    } else if (v == 0) {
        f = 0.0f;
    } else {
        c = 1;
        if (v > 100)
            c = 2;
        else {
            c += v;
            f *= 2.0f;
        }
    }
    return {c, f};
}

TEST(Locals, AssignedInNestedIfElse) {
    std::vector<int> values;
    for (int v = -130; v <= 130; v += 3) values.push_back(v);
    for (int v : {-101, -100, -1, 0, 1, 100, 101}) values.push_back(v);
    const int64_t n = static_cast<int64_t>(values.size());
    auto category = weft::full<int>(n, 99, dev());
    auto scale = weft::full<float>(n, 99.0f, dev());
    weft::launch(k_classify, n, weft::from_vector(values, dev()), category, scale);
    const auto c = category.to_vector();
    const auto f = scale.to_vector();
    for (size_t i = 0; i < values.size(); ++i) {
        const auto [want_c, want_f] = host_classify(values[i]);
        EXPECT_EQ(c[i], want_c) << "v = " << values[i];
        EXPECT_EQ(f[i], want_f) << "v = " << values[i];
    }
}

const auto k_snapshot =
    module().kernel("snapshot", {"values", "before", "after", "element"},
                    [](Array<int> values, Array<int> before, Array<int> after, Array<int> element) {
                        auto t = weft::tid();
                        Int a = values[t];
                        Int b = a;  // a copy is a snapshot: later assignments to `a` do not show through
                        a = a + 1;
                        a *= 3;
                        before[t] = b;
                        after[t] = a;
                        auto e = values[t];  // a named element is a local: changing it never writes the array
                        e += 1000;
                        e = e * 2;
                        element[t] = e;
                    });

TEST(Locals, CopiesAreSnapshotsAndNamedElementsAreLocals) {
    std::vector<int> values(50);
    for (int i = 0; i < 50; ++i) values[i] = i * 7 - 100;
    auto in = weft::from_vector(values, dev());
    auto before = weft::zeros<int>(50, dev());
    auto after = weft::zeros<int>(50, dev());
    auto element = weft::zeros<int>(50, dev());
    weft::launch(k_snapshot, 50, in, before, after, element);
    EXPECT_EQ(in.to_vector(), values) << "assigning a named element must not write the array";
    const auto b = before.to_vector(), a = after.to_vector(), e = element.to_vector();
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(b[i], values[i]);
        EXPECT_EQ(a[i], (values[i] + 1) * 3);
        EXPECT_EQ(e[i], (values[i] + 1000) * 2);
    }
}

// ---------------------------------------------------------------------------------------------
// for_.

const auto k_for_constant = module().kernel("for_constant", {"out"}, [](Array<int> out) {
    auto t = weft::tid();
    Int sum = 0;
    weft::for_(10, [&](Int i) { sum += i; });                // 0..9
    weft::for_(3, 7, [&](Int i) { sum += i * 100; });        // 3..6
    weft::for_(0, 20, 5, [&](Int i) { sum += i * 10000; });  // 0, 5, 10, 15
    weft::for_(5, 5, [&](Int) { sum += 1000000; });          // empty
    weft::for_(0, [&](Int) { sum += 1000000; });             // empty
    out[t] = sum + t;
});

TEST(ForLoops, ConstantBounds) {
    auto out = weft::zeros<int>(4, dev());
    weft::launch(k_for_constant, 4, out);
    const int want = 45 + (3 + 4 + 5 + 6) * 100 + (0 + 5 + 10 + 15) * 10000;
    EXPECT_EQ(out.to_vector(), (std::vector<int>{want, want + 1, want + 2, want + 3}));
}

constexpr int kMaxIterations = 40;

// Records the loop variable of each iteration: seen(t, k) for the k-th iteration.
const auto k_for_data = module().kernel(
    "for_data", {"start", "stop", "step", "seen", "count"},
    [](Array<int> start, Array<int> stop, Array<int> step, Array<int, 2> seen, Array<int> count) {
        auto t = weft::tid();
        Int k = 0;
        weft::for_(start[t], stop[t], step[t], [&](Int i) {
            seen(t, k) = i;
            k += 1;
        });
        count[t] = k;
    });

const auto k_for_negative_step =
    module().kernel("for_negative_step", {"seen", "count"}, [](Array<int, 2> seen, Array<int> count) {
        auto t = weft::tid();
        Int k = 0;
        weft::for_(10 + t, 0, -3, [&](Int i) {
            seen(t, k) = i;
            k += 1;
        });
        count[t] = k;
    });

// Python's range(start, stop, step).
std::vector<int> host_range(int start, int stop, int step) {
    std::vector<int> r;
    for (int i = start; step > 0 ? i < stop : i > stop; i += step) r.push_back(i);
    return r;
}

void expect_iterations(const std::vector<int>& seen, const std::vector<int>& count, size_t t,
                       const std::vector<int>& want) {
    ASSERT_EQ(count[t], static_cast<int>(want.size())) << "thread " << t;
    for (size_t k = 0; k < want.size(); ++k)
        EXPECT_EQ(seen[t * kMaxIterations + k], want[k]) << "thread " << t;
}

TEST(ForLoops, DataDependentBoundsAndStep) {
    std::vector<int> start, stop, step;
    const auto add = [&](int a, int b, int s) {
        start.push_back(a);
        stop.push_back(b);
        step.push_back(s);
    };
    add(0, 10, 1);
    add(0, 10, 3);
    add(-5, 5, 2);
    add(10, 0, -1);
    add(10, -10, -7);
    add(5, 5, 1);     // empty
    add(5, 0, 1);     // empty: positive step, start above stop
    add(0, 5, -1);    // empty: negative step, start below stop
    add(3, 4, 100);   // one iteration
    add(4, 3, -100);  // one iteration
    add(-20, 19, 1);  // 39 iterations
    for (int s = -9; s <= 9; ++s)
        if (s != 0) add(s * 2, -s * 2, -s);
    const int64_t n = static_cast<int64_t>(start.size());
    auto seen = weft::full<int>({n, kMaxIterations}, -999, dev());
    auto count = weft::full<int>(n, -1, dev());
    weft::launch(k_for_data, n, weft::from_vector(start, dev()), weft::from_vector(stop, dev()),
                 weft::from_vector(step, dev()), seen, count);
    const auto s = seen.to_vector();
    const auto c = count.to_vector();
    for (size_t t = 0; t < start.size(); ++t) {
        SCOPED_TRACE(testing::Message() << "range(" << start[t] << ", " << stop[t] << ", " << step[t] << ")");
        expect_iterations(s, c, t, host_range(start[t], stop[t], step[t]));
    }
}

TEST(ForLoops, NegativeConstantStep) {
    auto seen = weft::full<int>({6, kMaxIterations}, -999, dev());
    auto count = weft::full<int>(6, -1, dev());
    weft::launch(k_for_negative_step, 6, seen, count);
    const auto s = seen.to_vector();
    const auto c = count.to_vector();
    expect_iterations(s, c, 0, {10, 7, 4, 1});
    expect_iterations(s, c, 1, {11, 8, 5, 2});
    expect_iterations(s, c, 2, {12, 9, 6, 3});
    for (size_t t = 0; t < 6; ++t) expect_iterations(s, c, t, host_range(10 + static_cast<int>(t), 0, -3));
}

const auto k_for_bounds_once = module().kernel("for_bounds_once", {"n", "count", "final_stop"},
                                               [](Array<int> n, Array<int> count, Array<int> final_stop) {
                                                   auto t = weft::tid();
                                                   Int stop = n[t];
                                                   Int k = 0;
                                                   weft::for_(stop, [&](Int) {
                                                       stop += 1;  // does not move the loop's end
                                                       k += 1;
                                                   });
                                                   count[t] = k;
                                                   final_stop[t] = stop;
                                               });

TEST(ForLoops, BoundsAreEvaluatedOnce) {
    const std::vector<int> n = {0, 1, 5, 17};
    auto count = weft::zeros<int>(4, dev());
    auto final_stop = weft::zeros<int>(4, dev());
    weft::launch(k_for_bounds_once, 4, weft::from_vector(n, dev()), count, final_stop);
    EXPECT_EQ(count.to_vector(), n);
    EXPECT_EQ(final_stop.to_vector(), (std::vector<int>{0, 2, 10, 34}));
}

// ---------------------------------------------------------------------------------------------
// while_, break_, continue_.

const auto k_collatz = module().kernel("collatz", {"start", "steps"}, [](Array<int> start, Array<int> steps) {
    auto t = weft::tid();
    Int x = start[t];
    Int count = 0;
    weft::while_([&] { return x != 1; },
                 [&] {
                     weft::if_(
                         x % 2 == 0, [&] { x = x / 2; }, [&] { x = 3 * x + 1; });
                     count += 1;
                 });
    steps[t] = count;
});

int host_collatz(int x) {
    int n = 0;
    while (x != 1) {
        x = x % 2 == 0 ? x / 2 : 3 * x + 1;
        ++n;
    }
    return n;
}

TEST(WhileLoops, CollatzStepsMatchHost) {
    std::vector<int> start(200);
    std::iota(start.begin(), start.end(), 1);
    start.push_back(27);  // 111 steps
    start.push_back(97);
    const int64_t n = static_cast<int64_t>(start.size());
    auto steps = weft::full<int>(n, -1, dev());
    weft::launch(k_collatz, n, weft::from_vector(start, dev()), steps);
    const auto got = steps.to_vector();
    for (size_t i = 0; i < start.size(); ++i)
        EXPECT_EQ(got[i], host_collatz(start[i])) << "start " << start[i];
    EXPECT_EQ(got[start.size() - 2], 111);
}

const auto k_break_continue =
    module().kernel("break_continue", {"limit", "for_sum", "while_sum", "while_i"},
                    [](Array<int> limit, Array<int> for_sum, Array<int> while_sum, Array<int> while_i) {
                        auto t = weft::tid();
                        auto lim = limit[t];
                        Int sum = 0;
                        weft::for_(0, 100, [&](Int i) {
                            weft::if_(i == lim, [&] { weft::break_(); });
                            weft::if_(i % 3 == 0, [&] { weft::continue_(); });
                            sum += i;
                        });
                        for_sum[t] = sum;

                        Int i = 0;
                        Int s = 0;
                        weft::while_([&] { return i < 1000; },
                                     [&] {
                                         i += 1;
                                         weft::if_(i > lim, [&] { weft::break_(); });
                                         weft::if_(i % 2 == 0, [&] { weft::continue_(); });
                                         s += i;
                                     });
                        while_sum[t] = s;
                        while_i[t] = i;
                    });

TEST(Loops, BreakAndContinueInForAndWhile) {
    std::vector<int> limit = {-1, 0, 1, 2, 3, 4, 10, 33, 50, 99, 100, 150, 999, 1000, 2000};
    const int64_t n = static_cast<int64_t>(limit.size());
    auto for_sum = weft::zeros<int>(n, dev());
    auto while_sum = weft::zeros<int>(n, dev());
    auto while_i = weft::zeros<int>(n, dev());
    weft::launch(k_break_continue, n, weft::from_vector(limit, dev()), for_sum, while_sum, while_i);
    const auto fs = for_sum.to_vector(), ws = while_sum.to_vector(), wi = while_i.to_vector();
    for (size_t t = 0; t < limit.size(); ++t) {
        const int lim = limit[t];
        int want_for = 0;
        for (int i = 0; i < 100; ++i) {
            if (i == lim) break;
            if (i % 3 == 0) continue;
            want_for += i;
        }
        int i = 0, want_while = 0;
        while (i < 1000) {
            i += 1;
            if (i > lim) break;
            if (i % 2 == 0) continue;
            want_while += i;
        }
        EXPECT_EQ(fs[t], want_for) << "limit " << lim;
        EXPECT_EQ(ws[t], want_while) << "limit " << lim;
        EXPECT_EQ(wi[t], i) << "limit " << lim;
    }
}

// ---------------------------------------------------------------------------------------------
// return_ in a kernel.

const auto k_early_return =
    module().kernel("early_return", {"values", "out", "last", "done"},
                    [](Array<int> values, Array<int> out, Array<int> last, Array<int> done) {
                        auto t = weft::tid();
                        auto v = values[t];
                        weft::if_(v < 0, [&] { weft::return_(); });
                        out[t] = v * 2;
                        // A return inside a loop ends the thread, not just the loop.
                        weft::for_(0, 50, [&](Int i) {
                            weft::if_(i == v, [&] { weft::return_(); });
                            last[t] = i;
                        });
                        done[t] = 1;
                    });

TEST(Return, EarlyReturnEndsTheThread) {
    const std::vector<int> values = {-5, 0, 1, 7, -1, 49, 50, 100, 3};
    const int64_t n = static_cast<int64_t>(values.size());
    auto out = weft::full<int>(n, -1, dev());
    auto last = weft::full<int>(n, -1, dev());
    auto done = weft::zeros<int>(n, dev());
    weft::launch(k_early_return, n, weft::from_vector(values, dev()), out, last, done);
    const auto o = out.to_vector(), l = last.to_vector(), d = done.to_vector();
    for (size_t t = 0; t < values.size(); ++t) {
        const int v = values[t];
        SCOPED_TRACE(testing::Message() << "v = " << v);
        if (v < 0) {
            EXPECT_EQ(o[t], -1);
            EXPECT_EQ(l[t], -1);
            EXPECT_EQ(d[t], 0);
            continue;
        }
        EXPECT_EQ(o[t], v * 2);
        EXPECT_EQ(l[t], v < 50 ? v - 1 : 49);  // -1 when the loop returns at once
        EXPECT_EQ(d[t], v < 50 ? 0 : 1);
    }
}

// ---------------------------------------------------------------------------------------------
// Nested loops.

const auto k_nested =
    module().kernel("nested", {"n", "total", "pairs"}, [](Array<int> n, Array<int> total, Array<int> pairs) {
        auto t = weft::tid();
        Int sum = 0;
        Int count = 0;
        weft::for_(n[t], [&](Int i) {
            weft::for_(i, [&](Int j) {
                weft::if_(j == 5, [&] { weft::break_(); });  // inner only
                weft::if_(j == 2, [&] { weft::continue_(); });
                sum += i * j + 1;
            });
            Int k = i;
            weft::while_([&] { return k > 0; },
                         [&] {
                             k -= 2;
                             count += 1;
                         });
            weft::if_(i == 8, [&] { weft::break_(); });
        });
        total[t] = sum;
        pairs[t] = count;
    });

TEST(Loops, NestedLoopsBreakOnlyTheInnermost) {
    std::vector<int> n(16);
    std::iota(n.begin(), n.end(), 0);
    auto total = weft::zeros<int>(16, dev());
    auto pairs = weft::zeros<int>(16, dev());
    weft::launch(k_nested, 16, weft::from_vector(n, dev()), total, pairs);
    const auto tot = total.to_vector(), prs = pairs.to_vector();
    for (int t = 0; t < 16; ++t) {
        int sum = 0, count = 0;
        for (int i = 0; i < n[t]; ++i) {
            for (int j = 0; j < i; ++j) {
                if (j == 5) break;
                if (j == 2) continue;
                sum += i * j + 1;
            }
            for (int k = i; k > 0; k -= 2) ++count;
            if (i == 8) break;
        }
        EXPECT_EQ(tot[t], sum) << "n = " << n[t];
        EXPECT_EQ(prs[t], count) << "n = " << n[t];
    }
}

// The loop variable indexes arrays; loops that write every element of a row.
const auto k_row_sums = module().kernel("row_sums", {"m", "sums", "prefix"},
                                        [](Array<float, 2> m, Array<float> sums, Array<float, 2> prefix) {
                                            auto r = weft::tid();
                                            weft::Float acc = 0.0f;
                                            weft::for_(m.shape(1), [&](Int c) {
                                                acc += m(r, c);
                                                prefix(r, c) = acc;
                                            });
                                            sums[r] = acc;
                                        });

TEST(ForLoops, LoopVariableIndexesArrays) {
    const int rows = 5, cols = 9;
    std::vector<float> m(rows * cols);
    for (int i = 0; i < rows * cols; ++i) m[i] = 0.5f * static_cast<float>(i % 7) - 1.0f;
    auto sums = weft::zeros<float>(rows, dev());
    auto prefix = weft::zeros<float>({rows, cols}, dev());
    weft::launch(k_row_sums, rows, weft::from_vector(m, {rows, cols}, dev()), sums, prefix);
    const auto s = sums.to_vector(), p = prefix.to_vector();
    for (int r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c) {
            acc += m[r * cols + c];
            EXPECT_EQ(p[r * cols + c], acc);
        }
        EXPECT_EQ(s[r], acc);
    }
}

}  // namespace
