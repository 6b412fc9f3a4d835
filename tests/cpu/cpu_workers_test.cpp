// The multi-core CPU backend: deterministic results equal for 1, 2, 7 and every hardware thread;
// the first fault in thread order; whole print lines; concurrent launches; the worker option.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <latch>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cpu/worker_pool.hpp"
#include "support/deterministic_cases.hpp"
#include "support/errors.hpp"
#include "support/half_cases.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::test::has;

const weft::Device cpu = weft::Device::cpu();

int hardware_threads() {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// 1 (serial), 2, 7 (more workers than this machine may have cores) and every hardware thread.
std::vector<int> worker_counts() {
    return {1, 2, 7, hardware_threads()};
}

// Worker counts are a CPU matter; on a GPU run these tests have nothing to check.
#define SKIP_ON_GPU()                                                                   \
    if (weft::test::test_device().is_cuda()) GTEST_SKIP() << "CPU worker threads only"; \
    static_assert(true)

template <class T>
void sums_agree_for_every_worker_count(DeterministicStrategy strategy) {
    using weft::test::Op;
    weft::Module m{"workers_sums_" + weft::test::type_name<T>(),
                   {.deterministic = Deterministic::RunToRun, .deterministic_strategy = strategy}};
    const weft::test::OpKernels<T> kernels(m);
    const std::vector<weft::test::Case<T>> cases = {
        weft::test::random_case<T>("hot", 20000, 1, -6, 6, 3),
        weft::test::random_case<T>("spread", 20000, 1000, -20, 20, 5, 0.3),
    };
    for (const auto& c : cases) {
        for (const Op op : weft::test::kOps) {
            const std::vector<T> want = weft::test::oracle(op, c.initial, c.index, c.values);
            std::vector<T> serial;
            for (const int workers : worker_counts()) {
                m.set_options({.cpu_threads = workers});
                const std::vector<T> got = weft::test::run(kernels.get(op), c, cpu);
                SCOPED_TRACE(c.name + " " + weft::test::op_name(op) + " with " + std::to_string(workers) +
                             " workers");
                EXPECT_TRUE(weft::test::matches_oracle(got, want));
                if (serial.empty())
                    serial = got;
                else
                    EXPECT_TRUE(weft::test::same_bits_all(got, serial));
            }
        }
    }
}

TEST(CpuWorkers, ExactSumsMinMaxAreTheSameBitsForEveryWorkerCount) {
    SKIP_ON_GPU();
    sums_agree_for_every_worker_count<float>(DeterministicStrategy::Exact);
    sums_agree_for_every_worker_count<double>(DeterministicStrategy::Exact);
}

TEST(CpuWorkers, RecordsSumsAreTheSameBitsForEveryWorkerCount) {
    SKIP_ON_GPU();
    sums_agree_for_every_worker_count<float>(DeterministicStrategy::Records);
    sums_agree_for_every_worker_count<double>(DeterministicStrategy::Records);
}

template <class H>
void half_results_agree_for_every_worker_count(DeterministicStrategy strategy) {
    using weft::test::Op;
    weft::Module m{"workers_half_" + weft::test::type_name<H>(),
                   {.deterministic = Deterministic::RunToRun, .deterministic_strategy = strategy}};
    const weft::test::OpKernels<H> kernels(m);
    for (const auto& c : {weft::test::half_case<H>("hot", 20000, 1, -8, 4, 3),
                          weft::test::half_case<H>("spread", 20000, 700, -8, 8, 5)}) {
        for (const Op op : weft::test::kOps) {
            const std::vector<uint16_t> want = weft::test::half_oracle(op, c);
            for (const int workers : worker_counts()) {
                m.set_options({.cpu_threads = workers});
                SCOPED_TRACE(c.name + " " + weft::test::op_name(op) + " with " + std::to_string(workers) +
                             " workers");
                EXPECT_TRUE(weft::test::agree<H>(weft::test::run_half(kernels.get(op), c, cpu), want));
            }
        }
    }
}

TEST(CpuWorkers, HalfResultsAreTheSameBitsForEveryWorkerCount) {
    SKIP_ON_GPU();
    half_results_agree_for_every_worker_count<weft::float16>(DeterministicStrategy::Exact);
    half_results_agree_for_every_worker_count<weft::bfloat16>(DeterministicStrategy::Records);
}

// Sums with at least two workers running at once (thread 0 waits for a thread of a later chunk:
// atomic_cas reads the gate, atomic_exch opens it; both are left alone in deterministic modules)
// give the exact sum, with both strategies, into one hot element and into many.
TEST(CpuWorkers, SumsAreExactWhileWorkersRunAtOnce) {
    SKIP_ON_GPU();
    for (const DeterministicStrategy strategy :
         {DeterministicStrategy::Exact, DeterministicStrategy::Records}) {
        weft::Module m{
            "workers_forced_sums",
            {.deterministic = Deterministic::RunToRun, .deterministic_strategy = strategy, .cpu_threads = 7}};
        auto add = m.kernel(
            "add", {"values", "index", "out", "gate", "half"},
            [](Array<float> values, Array<int> index, Array<float> out, Array<int> gate, weft::Int half) {
                auto t = weft::tid();
                weft::if_(t == half, [&] { weft::atomic_exch(gate, 0, 1); });
                weft::if_(t == 0,
                          [&] { weft::while_([&] { return weft::atomic_cas(gate, 0, 0, 0) == 0; }, [] {}); });
                out[index[t]] += values[t];
            });
        for (const int outputs : {1, 1000}) {
            const auto c = weft::test::random_case<float>("forced", 200000, outputs, -10, 10, 21, 0.5);
            const auto want = weft::test::oracle(weft::test::Op::PlusEquals, c.initial, c.index, c.values);
            for (int repeat = 0; repeat < 3; ++repeat) {
                auto out = weft::from_vector(c.initial, cpu);
                weft::launch(add, static_cast<int64_t>(c.index.size()), weft::from_vector(c.values, cpu),
                             weft::from_vector(c.index, cpu), out, weft::zeros<int>(1, cpu),
                             static_cast<int>(c.index.size() / 2));
                EXPECT_TRUE(weft::test::matches_oracle(out.to_vector(), want))
                    << weft::strategy_name(strategy) << ", " << outputs << " outputs";
            }
        }
    }
}

// Slots follow thread order whatever the workers: one counter element (compaction), and a
// counter per bin with several reservations per thread.
TEST(CpuWorkers, SlotsFollowThreadOrderForEveryWorkerCount) {
    SKIP_ON_GPU();
    weft::Module m{"workers_slots",
                   {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 3}};
    auto compact = m.kernel("compact", {"values", "count", "out"},
                            [](Array<float> values, Array<int> count, Array<float> out) {
                                auto t = weft::tid();
                                auto v = values[t];
                                weft::if_(v > 0.0f, [&] { out[weft::atomic_add(count, 0, 1)] = v; });
                            });
    auto by_bin = m.kernel("by_bin", {"bins", "reps", "counts", "out"},
                           [](Array<int> bins, Array<int> reps, Array<int> counts, Array<int, 2> out) {
                               auto t = weft::tid();
                               auto b = bins[t];
                               weft::for_(reps[t], [&](weft::Int k) {
                                   auto slot = weft::atomic_add(counts, b, 2);
                                   out[b][slot] = t * 4 + k;
                                   out[b][slot + 1] = -1;
                               });
                           });
    const int n = 30000, bins = 5, width = 6 * n;
    std::mt19937 rng(9);
    std::vector<float> values(n);
    std::vector<int> bin(n), reps(n);
    for (int t = 0; t < n; ++t) {
        values[t] = static_cast<float>(static_cast<int>(rng() % 200) - 100);
        bin[t] = static_cast<int>(rng() % bins);
        reps[t] = static_cast<int>(rng() % 4);
    }
    // In thread order: the positive values; per bin, each thread's reservations in turn.
    std::vector<float> kept;
    for (float v : values)
        if (v > 0) kept.push_back(v);
    std::vector<int> want_counts(bins, 7);  // counters start at 7
    std::vector<int> want_out(static_cast<size_t>(bins) * width, 0);
    for (int t = 0; t < n; ++t)
        for (int k = 0; k < reps[t]; ++k) {
            int& c = want_counts[bin[t]];
            want_out[static_cast<size_t>(bin[t]) * width + c] = t * 4 + k;
            want_out[static_cast<size_t>(bin[t]) * width + c + 1] = -1;
            c += 2;
        }
    for (const int workers : worker_counts()) {
        SCOPED_TRACE(std::to_string(workers) + " workers");
        m.set_options({.cpu_threads = workers});
        auto count = weft::zeros<int>(1, cpu);
        auto out = weft::zeros<float>(n, cpu);
        weft::launch(compact, n, weft::from_vector(values, cpu), count, out);
        std::vector<float> got = out.to_vector();
        got.resize(static_cast<size_t>(count.to_vector()[0]));
        EXPECT_EQ(got, kept);

        auto counts = weft::from_vector(std::vector<int>(bins, 7), cpu);
        auto grid = weft::zeros<int>({bins, width}, cpu);
        weft::launch(by_bin, n, weft::from_vector(bin, cpu), weft::from_vector(reps, cpu), counts, grid);
        EXPECT_EQ(counts.to_vector(), want_counts);
        EXPECT_EQ(grid.to_vector(), want_out);
    }
}

// Several threads fault; the one reported is the first in thread order, even when it sits in a
// later chunk than others that fault or in the same chunk as a later one. The launch is undone.
TEST(CpuWorkers, TheFirstFaultInThreadOrderIsReported) {
    SKIP_ON_GPU();
    weft::Module m{"workers_faults", {.bounds_check = true}};
    auto scatter = m.kernel("scatter", {"where", "out"}, [](Array<int> where, Array<int> out) {
        auto t = weft::tid();
        out[where[t]] = t + 1;
    });
    const int n = 100000;
    for (const std::vector<int>& faulting :
         std::vector<std::vector<int>>{{70000, 30001, 99999}, {30002, 30001}, {5, 99998}, {99999}}) {
        std::vector<int> where(n);
        for (int t = 0; t < n; ++t) where[t] = t;
        for (int t : faulting) where[t] = n + t;
        const int first = *std::min_element(faulting.begin(), faulting.end());
        for (const int workers : worker_counts()) {
            m.set_options({.cpu_threads = workers});
            for (int repeat = 0; repeat < 3; ++repeat) {
                auto out = weft::full<int>(n, -5, cpu);
                const weft::Error e = weft::test::error_from(
                    [&] { weft::launch(scatter, n, weft::from_vector(where, cpu), out); });
                EXPECT_TRUE(has(e.message(), "index " + std::to_string(n + first) + " is out of bounds"))
                    << workers << " workers: " << e.message();
                EXPECT_EQ(out.to_vector(), std::vector<int>(n, -5)) << "the launch was not undone";
            }
        }
    }
}

// The first fault is found first, and a later chunk that was already running finds another one
// after it: the launch still reports the first. Thread 0 waits until thread `half` (a later
// chunk, so another worker) has started, then lets it go and faults at once; that chunk faults
// at its next thread, a while later.
TEST(CpuWorkers, AFaultFoundLaterInAnEarlierChunkWins) {
    SKIP_ON_GPU();
    weft::Module m{"workers_late_fault", {.bounds_check = true, .cpu_threads = 7}};
    auto scatter = m.kernel("scatter", {"where", "out", "gate", "half"},
                            [](Array<int> where, Array<int> out, Array<int> gate, weft::Int half) {
                                auto t = weft::tid();
                                weft::if_(t == half, [&] {
                                    weft::atomic_max(gate, 0, 1);
                                    weft::while_([&] { return weft::atomic_max(gate, 1, 0) == 0; }, [] {});
                                    // (long enough for thread 0's fault to be recorded first)
                                    weft::for_(200000, [&](weft::Int) { weft::atomic_max(gate, 2, 1); });
                                });
                                weft::if_(t == 0, [&] {
                                    weft::while_([&] { return weft::atomic_max(gate, 0, 0) == 0; }, [] {});
                                    weft::atomic_max(gate, 1, 1);
                                });
                                out[where[t]] = t + 1;
                            });
    const int n = 100000, half = n / 2;
    std::vector<int> where(n);
    for (int t = 0; t < n; ++t) where[t] = t;
    where[0] = n + 7;
    where[half + 1] = n + 9;
    for (int repeat = 0; repeat < 5; ++repeat) {
        auto out = weft::zeros<int>(n, cpu);
        const weft::Error e = weft::test::error_from([&] {
            weft::launch(scatter, n, weft::from_vector(where, cpu), out, weft::zeros<int>(3, cpu), half);
        });
        EXPECT_TRUE(has(e.message(), "index " + std::to_string(n + 7) + " is out of bounds")) << e.message();
    }
}

// Each print call's output is one piece of the stream: lines from many workers never mix.
TEST(CpuWorkers, PrintLinesAreNotInterleaved) {
    SKIP_ON_GPU();
    weft::Module m{"workers_print", {.cpu_threads = 7}};
    auto talk = m.kernel("talk", {"scale"}, [](weft::Float scale) {
        auto t = weft::tid();
        weft::print("thread %06d says %d %d %d %f and goodbye from thread %d\n", t, t * 3, t * 5, t * 7,
                    weft::cast<float>(t) * scale, t);
    });
    const int n = 4000;
    testing::internal::CaptureStdout();
    weft::launch(talk, n, 0.5f);
    std::fflush(stdout);
    std::istringstream lines(testing::internal::GetCapturedStdout());
    std::set<int> seen;
    for (std::string line; std::getline(lines, line);) {
        const int t = std::atoi(line.c_str() + 7);
        char want[160];
        std::snprintf(want, sizeof want, "thread %06d says %d %d %d %f and goodbye from thread %d", t, t * 3,
                      t * 5, t * 7, static_cast<double>(static_cast<float>(t) * 0.5f), t);
        ASSERT_EQ(line, want);
        EXPECT_TRUE(seen.insert(t).second) << "thread " << t << " printed twice";
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(n));
}

// Host threads launching at once, each with many workers, each into its own arrays: every
// launch completes with its own result and none waits forever for another's.
TEST(CpuWorkers, ConcurrentLaunchesFromSeveralHostThreads) {
    SKIP_ON_GPU();
    weft::Module m{"workers_concurrent", {.cpu_threads = 7}};
    auto affine = m.kernel("affine", {"x", "y", "k"}, [](Array<float> x, Array<float> y, weft::Int k) {
        auto t = weft::tid();
        y[t] = x[t] * 2.0f + weft::cast<float>(k);
    });
    m.compile(cpu);
    const int hosts = 6, launches = 40, n = 30001;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000);
    const auto xs = weft::from_vector(x, cpu);
    std::latch start(hosts);
    std::vector<int> wrong(hosts, 0);
    std::vector<std::thread> threads;
    for (int h = 0; h < hosts; ++h)
        threads.emplace_back([&, h] {
            auto y = weft::zeros<float>(n, cpu);
            start.arrive_and_wait();
            for (int l = 0; l < launches; ++l) {
                const int k = h * 1000 + l;
                weft::launch(affine, n, xs, y, k);
                const std::vector<float> got = y.to_vector();
                for (int i = 0; i < n; ++i) wrong[h] += got[i] != x[i] * 2.0f + static_cast<float>(k);
            }
        });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(wrong, std::vector<int>(hosts, 0));
}

// Deterministic launches from several host threads, each with many workers, into one target.
TEST(CpuWorkers, ConcurrentDeterministicLaunchesLoseNothing) {
    SKIP_ON_GPU();
    weft::Module m{"workers_concurrent_sums", {.deterministic = Deterministic::RunToRun, .cpu_threads = 7}};
    auto add_one = m.kernel("add_one", {"total"}, [](Array<float> total) { total[0] += 1.0f; });
    m.compile(cpu);
    auto total = weft::zeros<float>(1, cpu);
    const int hosts = 4, launches = 50, n = 5000;
    std::vector<std::thread> threads;
    for (int h = 0; h < hosts; ++h)
        threads.emplace_back([&] {
            for (int l = 0; l < launches; ++l) weft::launch(add_one, n, total);
        });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(total.to_vector(), std::vector<float>{static_cast<float>(hosts * launches * n)});
}

TEST(CpuWorkers, TheWorkerCountIsValidated) {
    const weft::Error low = weft::test::error_from([] {
        weft::Module m{"workers_bad", {.cpu_threads = -1}};
    });
    EXPECT_TRUE(has(low.message(), "option 'cpu_threads' must be 0")) << low.message();
    const weft::Error high = weft::test::error_from([] {
        weft::Module m{"workers_bad", {.cpu_threads = weft::kMaxCpuThreads + 1}};
    });
    EXPECT_TRUE(has(high.message(), "got 1025")) << high.message();
    EXPECT_EQ(weft::runtime::cpu::parse_cpu_threads("3"), 3);
    EXPECT_EQ(weft::runtime::cpu::parse_cpu_threads("1"), 1);
    for (const char* bad : {"0", "-2", "4x", "two", " 4", "1025", "99999999999"}) {
        const weft::Error e = weft::test::error_from([&] { weft::runtime::cpu::parse_cpu_threads(bad); });
        EXPECT_TRUE(has(e.message(), "WEFT_CPU_THREADS is '" + std::string(bad) + "'")) << e.message();
    }
    // The option wins over the environment; 0 leaves the choice to it (or to the hardware).
    EXPECT_EQ(weft::runtime::cpu::cpu_workers({.cpu_threads = 5}), 5);
    EXPECT_GE(weft::runtime::cpu::cpu_workers({}), 1);
}

// WEFT_CPU_THREADS is read at each launch of a module without cpu_threads; a bad value fails the
// launch, naming the kernel and the launch's line, and writes nothing; the option wins over it.
TEST(CpuWorkers, TheEnvironmentVariableSetsTheWorkersUnlessTheOptionDoes) {
    SKIP_ON_GPU();
    const char* before = std::getenv("WEFT_CPU_THREADS");
    const std::string saved = before ? before : "";
    weft::Module m{"workers_env"};
    auto fill = m.kernel("fill", {"out"}, [](Array<int> out) { out[weft::tid()] = 3; });
    const int n = 5000;
    auto out = weft::zeros<int>(n, cpu);
    setenv("WEFT_CPU_THREADS", "3", 1);
    weft::launch(fill, n, out);
    EXPECT_EQ(out.to_vector(), std::vector<int>(n, 3));

    setenv("WEFT_CPU_THREADS", "many", 1);
    auto untouched = weft::zeros<int>(n, cpu);
    const uint32_t line = __LINE__ + 1;
    const weft::Error e = weft::test::error_from([&] { weft::launch(fill, n, untouched); });
    EXPECT_TRUE(has(e.message(), "WEFT_CPU_THREADS is 'many'; set it to the number of worker threads"))
        << e.message();
    EXPECT_EQ(e.kernel(), "fill");
    EXPECT_EQ(e.line(), line);
    EXPECT_TRUE(has(e.file(), "cpu_workers_test.cpp")) << e.file();
    EXPECT_EQ(untouched.to_vector(), std::vector<int>(n, 0));

    m.set_options({.cpu_threads = 2});
    weft::launch(fill, n, untouched);
    EXPECT_EQ(untouched.to_vector(), std::vector<int>(n, 3));
    if (saved.empty())
        unsetenv("WEFT_CPU_THREADS");
    else
        setenv("WEFT_CPU_THREADS", saved.c_str(), 1);
}

// Chunks cover the launch exactly once, in order, whatever the counts.
TEST(CpuWorkers, ChunksCoverEveryThreadOnce) {
    for (const int workers : {1, 2, 3, 7, 16, 64})
        for (const int64_t total : {int64_t{1}, int64_t{2}, int64_t{63}, int64_t{1000}, int64_t{65536},
                                    int64_t{1} << 20, int64_t{1000003}}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(total));
            std::atomic<int64_t> chunks{0};
            weft::runtime::cpu::run_chunks(total, workers, [&](int, int64_t, int64_t begin, int64_t end) {
                ++chunks;
                for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
            });
            EXPECT_EQ(chunks.load(), weft::runtime::cpu::chunk_count(total, workers));
            EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h.load() == 1; }))
                << total << " threads, " << workers << " workers";
        }
}

// Each chunk names its worker: a number below the worker count, which no two threads use at once
// within one call (chunks keep per-worker state by it), from several host threads at a time.
TEST(CpuWorkers, ChunksNameAWorkerThatNoOtherThreadUsesMeanwhile) {
    for (const int workers : {1, 2, 3, 8})
        for (int round = 0; round < 20; ++round) {
            std::vector<std::thread> callers;
            std::atomic<int> bad{0};
            for (int c = 0; c < 3; ++c)
                callers.emplace_back([&] {
                    std::vector<std::atomic<int>> inside(static_cast<size_t>(workers));
                    weft::runtime::cpu::run_chunks(4096, workers, [&](int worker, int64_t, int64_t, int64_t) {
                        if (worker < 0 || worker >= workers) {
                            ++bad;
                            return;
                        }
                        if (inside[static_cast<size_t>(worker)].fetch_add(1) != 0) ++bad;
                        std::this_thread::yield();
                        --inside[static_cast<size_t>(worker)];
                    });
                });
            for (std::thread& t : callers) t.join();
            EXPECT_EQ(bad.load(), 0) << workers << " workers";
        }
}

}  // namespace
