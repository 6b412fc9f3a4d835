// Deterministic launches from several host threads into the same arrays lose no update and hand
// out no slot twice; nor do plain atomics of serial CPU launches (plain loads and stores).
#include <gtest/gtest.h>

#include <algorithm>
#include <latch>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;

weft::Device dev() {
    return weft::test::test_device();
}

constexpr int kHostThreads = 8;

// Runs `work(h)` on kHostThreads threads, started together.
template <class Work>
void on_host_threads(Work work) {
    std::latch start(kHostThreads);
    std::vector<std::thread> threads;
    for (int h = 0; h < kHostThreads; ++h)
        threads.emplace_back([&work, &start, h] {
            start.arrive_and_wait();
            work(h);
        });
    for (std::thread& t : threads) t.join();
}

// The case: 8 threads x 500 launches of 256 x `total[0] += 1`.
TEST(ConcurrentLaunches, AccumulationIntoOneTargetLosesNothing) {
    weft::Module m{"concurrent_sums", {.deterministic = Deterministic::RunToRun}};
    auto add_one = m.kernel("add_one", {"total"}, [](Array<float> total) { total[0] += 1.0f; });
    m.compile(dev());
    auto total = weft::zeros<float>(1, dev());
    const int launches = 500, threads = 256;
    on_host_threads([&](int) {
        for (int i = 0; i < launches; ++i) weft::launch(add_one, threads, total);
        weft::synchronize(dev());
    });
    EXPECT_EQ(total.to_vector(), std::vector<float>{static_cast<float>(kHostThreads * launches * threads)});
}

// Plain atomics: a CPU launch of one chunk updates its targets with plain loads and stores only
// while no other launch updates them (det::LaunchLocks); small launches (one chunk each)
// beside large ones (several chunks, atomic instructions) into the same view of one array, and a
// counter whose atomics return the value they replaced.
TEST(ConcurrentLaunches, PlainAtomicsOfSerialLaunchesLoseNothing) {
    weft::Module m{"concurrent_plain_atomics"};
    auto add = m.kernel("add_one", {"total", "taken"}, [](Array<int> total, Array<int> taken) {
        total[weft::tid() % 2] += 1;
        weft::atomic_add(taken, 0, 1);
    });
    auto count = m.kernel("count", {"counter", "seen"}, [](Array<int> counter, Array<int> seen) {
        seen[weft::atomic_add(counter, 0, 1)] += 1;
    });
    m.compile(dev());
    auto total = weft::zeros<int>(4, dev());
    auto taken = weft::zeros<int>(1, dev());
    const int launches = 300, small = 64, large = 1 << 16;
    on_host_threads([&](int h) {
        for (int i = 0; i < launches / (h == 0 ? 10 : 1); ++i)
            weft::launch(add, h == 0 ? large : small, total.slice(0, 1, 3), taken);
        weft::synchronize(dev());
    });
    const int64_t adds = int64_t{launches / 10} * large + int64_t{kHostThreads - 1} * launches * small;
    EXPECT_EQ(total.to_vector(),
              (std::vector<int>{0, static_cast<int>(adds / 2), static_cast<int>(adds / 2), 0}));
    EXPECT_EQ(taken.to_vector(), std::vector<int>{static_cast<int>(adds)});

    // Every value the counter hands out is handed out once.
    const int per_thread = 40;
    auto counter = weft::zeros<int>(1, dev());
    auto seen = weft::zeros<int>(kHostThreads * per_thread * small, dev());
    on_host_threads([&](int) {
        for (int i = 0; i < per_thread; ++i) weft::launch(count, small, counter, seen);
        weft::synchronize(dev());
    });
    const std::vector<int> each = seen.to_vector();
    EXPECT_TRUE(std::all_of(each.begin(), each.end(), [](int n) { return n == 1; }));
}

// Many elements: each launch's resolve of the whole target overlaps the others'.
TEST(ConcurrentLaunches, AccumulationIntoManyElementsLosesNothing) {
    weft::Module m{"concurrent_wide_sums", {.deterministic = Deterministic::RunToRun}};
    auto add = m.kernel("add_each", {"target"}, [](Array<float> target) { target[weft::tid()] += 1.0f; });
    m.compile(dev());
    const int launches = 200, elements = 4096;
    auto target = weft::zeros<float>(elements, dev());
    on_host_threads([&](int) {
        for (int i = 0; i < launches; ++i) weft::launch(add, elements, target);
        weft::synchronize(dev());
    });
    EXPECT_EQ(target.to_vector(), std::vector<float>(elements, static_cast<float>(kHostThreads * launches)));
}

// Overlapping views of one array are one target: even host threads add through elements 0..1,
// odd ones through 1..2.
TEST(ConcurrentLaunches, AccumulationThroughOverlappingViews) {
    weft::Module m{"concurrent_view_sums", {.deterministic = Deterministic::RunToRun}};
    auto add = m.kernel("add_halves", {"target"}, [](Array<float> target) {
        auto t = weft::tid();
        target[t % 2] += 1.0f;
    });
    m.compile(dev());
    auto whole = weft::zeros<float>(3, dev());
    const weft::AnyArray low = whole.slice(0, 0, 2);
    const weft::AnyArray high = whole.slice(0, 1, 3);
    const int launches = 200, threads = 64;
    on_host_threads([&](int h) {
        for (int i = 0; i < launches; ++i) weft::launch(add, threads, h % 2 == 0 ? low : high);
        weft::synchronize(dev());
    });
    const float side = kHostThreads / 2 * launches * (threads / 2);
    EXPECT_EQ(whole.to_vector(), (std::vector<float>{side, 2 * side, side}));
}

// Two targets passed in opposite orders by different threads: no deadlock, nothing lost.
TEST(ConcurrentLaunches, TwoTargetsInEitherOrder) {
    weft::Module m{"concurrent_pairs", {.deterministic = Deterministic::RunToRun}};
    auto both = m.kernel("add_both", {"first", "second"}, [](Array<float> first, Array<float> second) {
        first[0] += 1.0f;
        second[0] += 2.0f;
    });
    m.compile(dev());
    auto x = weft::zeros<float>(1, dev());
    auto y = weft::zeros<float>(1, dev());
    const int launches = 200, threads = 32;
    on_host_threads([&](int h) {
        for (int i = 0; i < launches; ++i) {
            if (h % 2 == 0)
                weft::launch(both, threads, x, y);
            else
                weft::launch(both, threads, y, x);
        }
        weft::synchronize(dev());
    });
    const float each = kHostThreads / 2 * launches * threads * 3.0f;
    EXPECT_EQ(x.to_vector(), std::vector<float>{each});
    EXPECT_EQ(y.to_vector(), std::vector<float>{each});
}

// A shared slot counter: every launch gets its own block of slots, in (thread, reservation) order.
TEST(ConcurrentLaunches, SharedSlotCounterHandsOutEachSlotOnce) {
    constexpr int kPerThread = 8;
    weft::Module m{"concurrent_slots", {.deterministic = Deterministic::RunToRun}};
    auto append = m.kernel("append_ids", {"first_id", "count", "ids"},
                           [](Array<int> first_id, Array<int> count, Array<int> ids) {
                               auto id = (first_id[0] + weft::tid()) * kPerThread;
                               weft::for_(0, kPerThread, 1,
                                          [&](weft::Int k) { ids[weft::atomic_add(count, 0, 1)] = id + k; });
                           });
    m.compile(dev());
    const int launches = 50, threads = 2048, total = kHostThreads * launches * threads * kPerThread;
    auto count = weft::zeros<int>(1, dev());
    auto ids = weft::full<int>(total, -1, dev());
    on_host_threads([&](int h) {
        for (int i = 0; i < launches; ++i)
            weft::launch(append, threads, weft::full<int>(1, (h * launches + i) * threads, dev()), count,
                         ids);
        weft::synchronize(dev());
    });
    EXPECT_EQ(count.to_vector(), std::vector<int>{total});
    const std::vector<int> got = ids.to_vector();
    int out_of_order = 0;
    for (int p = 0; p < total; ++p)
        if (got[p] % (threads * kPerThread) != 0 && (p == 0 || got[p - 1] != got[p] - 1)) ++out_of_order;
    EXPECT_EQ(out_of_order, 0) << "each launch's slots are one block in order";
    std::vector<int> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    int missing = 0;
    for (int i = 0; i < total; ++i) missing += sorted[i] != i;
    EXPECT_EQ(missing, 0) << "each slot holds one id, and every id has a slot";
}

// Launches of `add` (threads of it adding 1 to element t % 2) from every host thread into
// elements 1..2 of a 4-element array: even threads through a view of it, odd ones through a
// weft::wrap of the same memory. The array afterwards.
template <class T, class K>
std::vector<T> added_through_view_and_wrap(const K& add, int launches, int threads) {
    auto whole = weft::zeros<T>(4, dev());
    const auto again = weft::wrap<T>(static_cast<T*>(whole.data()) + 1, {2}, dev());
    on_host_threads([&](int h) {
        for (int i = 0; i < launches; ++i)
            weft::launch(add, threads, h % 2 == 0 ? whole.slice(0, 1, 3) : again);
        weft::synchronize(dev());
    });
    return whole.to_vector();
}

// The same memory reached through another array (weft::wrap of its address, one element in) is
// the same target: launches lock memory, not the array they came through (issue 32, item 6).
// Plain atomics of serial launches (plain loads and stores), then deterministic sums.
TEST(ConcurrentLaunches, WrappedMemoryIsTheSameTarget) {
    weft::Module m{"concurrent_wrapped"};
    auto add = m.kernel("add_halves", {"total"}, [](Array<int> total) { total[weft::tid() % 2] += 1; });
    weft::Module d{"concurrent_wrapped_det", {.deterministic = Deterministic::RunToRun}};
    auto add_det =
        d.kernel("add_halves", {"total"}, [](Array<float> total) { total[weft::tid() % 2] += 1.0f; });
    const int launches = 300, threads = 64;
    const int each = kHostThreads * launches * threads / 2;
    EXPECT_EQ(added_through_view_and_wrap<int>(add, launches, threads), (std::vector<int>{0, each, each, 0}));
    const float sum = static_cast<float>(each);
    EXPECT_EQ(added_through_view_and_wrap<float>(add_det, launches, threads),
              (std::vector<float>{0.0f, sum, sum, 0.0f}));
}

// A deterministic launch resolves its sums into the target after its kernel; plain atomic adds
// into the same array from other host threads meanwhile are not lost (issue 32, item 7).
TEST(ConcurrentLaunches, ADeterministicResolveKeepsConcurrentPlainAdds) {
    weft::Module m{"concurrent_mixed_plain"};
    auto plain = m.kernel("add_each", {"target"}, [](Array<float> target) { target[weft::tid()] += 1.0f; });
    weft::Module d{"concurrent_mixed_det", {.deterministic = Deterministic::RunToRun}};
    auto det = d.kernel("add_each", {"target"}, [](Array<float> target) { target[weft::tid()] += 2.0f; });
    m.compile(dev());
    d.compile(dev());
    const int launches = 150, elements = 4096;
    auto target = weft::zeros<float>(elements, dev());
    on_host_threads([&](int h) {
        for (int i = 0; i < launches; ++i) weft::launch(h % 2 == 0 ? plain : det, elements, target);
        weft::synchronize(dev());
    });
    EXPECT_EQ(target.to_vector(),
              std::vector<float>(elements, static_cast<float>(kHostThreads / 2 * launches * 3)));
}

}  // namespace
