// Deterministic state and launch snapshots sized by the elements a view reaches, not by the
// addresses it spans; state that cannot be allocated is a weft::Error naming the target.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/deterministic.h"
// clang-format on

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>

#include "runtime/det/accumulation.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;

weft::Device dev() {
    return weft::test::test_device();
}

int64_t slots_for(const weft::AnyArray& target) {
    weft::plan::DetTarget t;
    t.records_per_thread = 1;
    const weft::runtime::det::LaunchSite site{"k", "f.cpp", 1, 1};
    return weft::runtime::det::plan({t}, {&target}, {"out"}, weft::Options{}, site, false).at(0).slots.count;
}

// Auto's strategy for a float32 sum: compact windows above 4,096 elements; below, exact digits,
// except in a CPU launch that runs as one chunk (`serial`), where compact windows win at every
// size. An explicit strategy, and float64, are kept whatever the launch.
TEST(DeterministicState, ASerialCpuLaunchTakesCompactWindowsAtEverySize) {
    const auto compact = [](weft::DType dtype, int64_t elements, DeterministicStrategy strategy,
                            bool serial) {
        weft::plan::DetTarget t;
        t.dtype = dtype;
        t.records_per_thread = 1;
        const auto target = dtype == weft::DType::Float64
                                ? weft::AnyArray(weft::zeros<double>(elements, dev()))
                                : weft::AnyArray(weft::zeros<float>(elements, dev()));
        weft::Options options;
        options.deterministic_strategy = strategy;
        const weft::runtime::det::LaunchSite site{"k", "f.cpp", 1, 1};
        return weft::runtime::det::plan({t}, {&target}, {"out"}, options, site, serial).at(0).compact;
    };
    using weft::DType;
    EXPECT_FALSE(compact(DType::Float32, 16, DeterministicStrategy::Auto, false));
    EXPECT_TRUE(compact(DType::Float32, 16, DeterministicStrategy::Auto, true));
    EXPECT_TRUE(compact(DType::Float32, 1, DeterministicStrategy::Auto, true));
    EXPECT_TRUE(compact(DType::Float32, 8192, DeterministicStrategy::Auto, false));
    EXPECT_FALSE(compact(DType::Float32, 16, DeterministicStrategy::Exact, true));
    EXPECT_FALSE(compact(DType::Float64, 16, DeterministicStrategy::Auto, true));
}

// The case: one 64 KB column of a 64 MB array had state for the whole array.
TEST(DeterministicState, AColumnHasOneSlotPerElement) {
    auto base = weft::empty<float>({16384, 1024}, weft::Device::cpu());
    EXPECT_EQ(slots_for(base.slice(1, 5, 6)), 16384);
    EXPECT_EQ(slots_for(base.slice(0, 0, 16384, 3).slice(1, 100, 900, 8)), 5462 * 100);
    EXPECT_EQ(slots_for(base.slice(1, 0, 1024, 4).transpose()), 16384 * 256);
    // Views that are dense (or nearly) keep one slot per address: no divisions on the hot path.
    EXPECT_EQ(slots_for(base), 16384 * 1024);
    EXPECT_EQ(slots_for(base.slice(1, 0, 1000)), 16383 * 1024 + 1000);
    // A broadcast view reaches only the elements of what it broadcasts.
    auto column = weft::empty<float>({3, 1}, weft::Device::cpu());
    EXPECT_EQ(slots_for(column.broadcast({3, 1 << 30})), 3);
}

// A sparse view's slot comes from its element's address by multiplying with rounded inverses of
// the strides: exact for every index, up to offsets of 2^47 bytes and odd strides.
TEST(DeterministicState, SlotsOfSparseViewsAreExactForLargeOffsets) {
    wf::DetTarget t{};
    t.dims = 3;
    // 196 * RN(1 / 196) is below 1: without the correction, element 1 would be read as 0.
    // (Each stride passes the reach of the dimensions after it, as the runtime's maps do.)
    const wf::i64 strides[3] = {(wf::i64{1} << 39) + 12, 196 * 200003, 196};
    const wf::i64 extents[3] = {256, 8000, 200000};
    for (int d = 0; d < 3; ++d) {
        t.stride[d] = strides[d];
        t.extent[d] = extents[d];
        t.inverse[d] = 1.0 / static_cast<double>(strides[d]);
    }
    std::mt19937_64 rng(7);
    for (int n = 0; n < 200000; ++n) {
        wf::i64 index[3];
        wf::i64 offset = 0;
        for (int d = 0; d < 3; ++d) {
            // Mostly random; often at the ends of a dimension, where rounding goes wrong first.
            const auto pick = static_cast<wf::i64>(rng() % static_cast<uint64_t>(extents[d]));
            index[d] = n % 3 == 0 ? extents[d] - 1 - (pick % 2) : pick;
            offset += index[d] * strides[d];
        }
        const wf::i64 want = (index[0] * extents[1] + index[1]) * extents[2] + index[2];
        ASSERT_EQ(wf::slot_of(&t, t.base + offset, 4), want) << "offset " << offset;
        ASSERT_EQ(wf::slot_address(t, want, 4), t.base + offset);
    }
}

// How a view's (i, j) reaches its base array's elements.
struct ViewCase {
    const char* name;
    std::function<weft::DeviceArray<float>(const weft::DeviceArray<float>&)> view;
    std::function<std::pair<int, int>(int, int)> in_base;
};

// Sums and maxima through sparse views, with every strategy, equal to the same operations on
// the host; the base's other elements keep their values.
TEST(DeterministicState, SparseViewTargetsAccumulateIntoTheirElements) {
    const int rows = 64, cols = 96, n = 4000;
    const std::vector<ViewCase> cases = {
        {"column", [](const auto& b) { return b.slice(1, 7, 8); },
         [](int i, int) {
             return std::pair{i, 7};
         }},
        {"stepped block", [](const auto& b) { return b.slice(0, 3, 60, 5).slice(1, 10, 90, 7); },
         [](int i, int j) {
             return std::pair{3 + 5 * i, 10 + 7 * j};
         }},
        {"transposed block",
         [](const auto& b) { return b.slice(0, 1, 64, 9).slice(1, 2, 96, 11).transpose(); },
         [](int i, int j) {
             return std::pair{1 + 9 * j, 2 + 11 * i};
         }},
    };
    for (const auto strategy :
         {DeterministicStrategy::Exact, DeterministicStrategy::Records, DeterministicStrategy::Compact}) {
        weft::Module m{"sparse_views",
                       {.deterministic = Deterministic::RunToRun, .deterministic_strategy = strategy}};
        auto add = m.kernel("add", {"values", "rows", "cols", "out"},
                            [](Array<float> values, Array<int> r, Array<int> c, Array<float, 2> out) {
                                auto t = weft::tid();
                                out(r[t], c[t]) += values[t];
                            });
        auto max = m.kernel("max", {"values", "rows", "cols", "out"},
                            [](Array<float> values, Array<int> r, Array<int> c, Array<float, 2> out) {
                                auto t = weft::tid();
                                weft::atomic_max(out, r[t], c[t], values[t]);
                            });
        for (const ViewCase& vc : cases) {
            for (const bool sums : {true, false}) {
                SCOPED_TRACE(std::string(vc.name) + (sums ? " sums, " : " maxima, ") +
                             weft::strategy_name(strategy));
                std::vector<float> initial(static_cast<size_t>(rows * cols));
                for (size_t k = 0; k < initial.size(); ++k) initial[k] = 0.5f + static_cast<float>(k % 13);
                auto base = weft::from_vector(initial, weft::Shape{rows, cols}, dev());
                auto view = vc.view(base);
                std::vector<float> values(n);
                std::vector<int> r(n), c(n);
                std::vector<float> want = initial;
                for (int t = 0; t < n; ++t) {
                    values[t] =
                        static_cast<float>((t * 37) % 101) - 50.0f;  // small integers: exact in any order
                    r[t] = static_cast<int>((t * 7919) % view.shape()[0]);
                    c[t] = static_cast<int>((t * 104729) % view.shape()[1]);
                    const auto [br, bc] = vc.in_base(r[t], c[t]);
                    float& w = want[static_cast<size_t>(br * cols + bc)];
                    w = sums ? w + values[t] : std::max(w, values[t]);
                }
                auto values_d = weft::from_vector(values, dev());
                auto r_d = weft::from_vector(r, dev());
                auto c_d = weft::from_vector(c, dev());
                if (sums)
                    weft::launch(add, n, values_d, r_d, c_d, view);
                else
                    weft::launch(max, n, values_d, r_d, c_d, view);
                EXPECT_EQ(base.to_vector(), want);
            }
        }
    }
}

// One thread writes through a broadcast view of one element whose shape has 2^40 elements: the
// launch's snapshot (bounds checking) copies the one element, not 4 TB.
TEST(DeterministicState, SnapshotOfABroadcastViewCopiesItsOneElement) {
    weft::Module m{"broadcast_snapshot", {.bounds_check = true}};
    auto write = m.kernel("write", {"out", "i"}, [](Array<float, 2> out, weft::Int i) { out(i, 0) = 2.5f; });
    auto one = weft::full<float>(1, 1.0f, dev());
    auto wide = one.broadcast({1 << 20, 1 << 20});
    weft::launch(write, 1, wide, 5);
    EXPECT_EQ(one.to_vector(), std::vector<float>{2.5f});
    // A fault puts the element back from the snapshot.
    EXPECT_THROW(weft::launch(write, 1, wide, 1 << 20), weft::Error);
    EXPECT_EQ(one.to_vector(), std::vector<float>{2.5f});
}

// The host's virtual memory size, in bytes.
size_t address_space_in_use() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || std::fscanf(f, "%lu", &pages) != 1) pages = 0;
    if (f) std::fclose(f);
    return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// The message of what `launch` throws with the address space limited to `headroom` bytes more
// than is in use ("not a weft::Error: ..." for any other exception; empty when nothing is thrown).
std::string error_with_address_space(size_t headroom, const std::function<void()>& launch) {
    rlimit saved{};
    if (getrlimit(RLIMIT_AS, &saved) != 0) return "getrlimit failed";
    rlimit limited = saved;
    limited.rlim_cur = address_space_in_use() + headroom;
    if (setrlimit(RLIMIT_AS, &limited) != 0) return "setrlimit failed";
    std::string message;
    try {
        launch();
    } catch (const weft::Error& e) {
        message = e.what();
    } catch (const std::exception& e) {
        message = std::string("not a weft::Error: ") + e.what();
    }
    setrlimit(RLIMIT_AS, &saved);
    return message;
}

// With the address space limited, state for 4 M float32 elements (300 MB) cannot be allocated:
// the launch reports it, naming the array, and leaves the array as it was.
TEST(DeterministicState, StateThatCannotBeAllocatedIsAnErrorNamingTheTarget) {
    WEFT_SKIP_UNLESS_CPU();  // (a GPU driver needs far more address space than the limit leaves)
    weft::Module m{"state_allocation", {.deterministic = Deterministic::RunToRun}};
    auto add = m.kernel("add_one", {"totals"}, [](Array<float> totals) { totals[weft::tid()] += 1.0f; });
    auto totals = weft::zeros<float>(1 << 22, weft::Device::cpu());
    m.compile(weft::Device::cpu());
    const std::string message =
        error_with_address_space(size_t{64} << 20, [&] { weft::launch(add, 4, totals); });
    EXPECT_NE(message.find("cannot allocate the deterministic state for array 'totals'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("add_one"), std::string::npos) << message;
    EXPECT_EQ(totals.to_vector(), std::vector<float>(1 << 22, 0.0f));
}

// A state larger than the state cache keeps whole (4 M float32 elements: 320 MB of address
// space) is kept between launches that reach few of its elements, charged the pages they reached:
// the next such launch maps nothing new. (It was mapped afresh for every launch, whose pages were
// faulted in again: ten adds into 16 M elements took 1.1 ms against 1 us into 16.)
TEST(DeterministicState, ALargeStateThatLaunchesReachSparselyIsKeptForTheNext) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{
        "kept_large_state",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Compact}};
    auto add = m.kernel("add", {"values", "bins", "totals"},
                        [](Array<float> values, Array<int> bins, Array<float> totals) {
                            auto i = weft::tid();
                            totals[bins[i]] += values[i];
                        });
    constexpr int kElements = 1 << 22;
    auto totals = weft::zeros<float>(kElements, weft::Device::cpu());
    const auto values = weft::from_vector<float>({0.5f, 0x1p-30f, 3.0f, -1.0f}, weft::Device::cpu());
    const auto first = weft::from_vector<int>({7, 1 << 21, kElements - 1, 7}, weft::Device::cpu());
    const auto second = weft::from_vector<int>({7, 1 << 21, 12345, 3 << 20}, weft::Device::cpu());
    m.compile(weft::Device::cpu());
    weft::launch(add, 4, values, first, totals);
    EXPECT_EQ(
        error_with_address_space(size_t{32} << 20, [&] { weft::launch(add, 4, values, first, totals); }), "")
        << "the state of the first launch was not kept";
    EXPECT_EQ(
        error_with_address_space(size_t{32} << 20, [&] { weft::launch(add, 4, values, second, totals); }), "")
        << "a launch reaching other elements of the kept state";
    const std::vector<float> got = totals.to_vector();
    EXPECT_EQ(got[7], 2 * (0.5f - 1.0f) + 0.5f);
    EXPECT_EQ(got[1 << 21], 0x1p-30f * 3);
    EXPECT_EQ(got[kElements - 1], 6.0f);
    EXPECT_EQ(got[12345], 3.0f);
    EXPECT_EQ(got[3 << 20], -1.0f);
    EXPECT_EQ(std::count(got.begin(), got.end(), 0.0f), kElements - 5);
}

// A carrying sum's state (a data-dependent loop: the launch may add 2^22 or more contributions)
// is clean after its resolve and kept for the next launch like any other (it was mapped afresh
// for each: a particle-to-grid scatter of 7M contributions faulted in 84 MB every launch).
TEST(DeterministicState, ACarryingSumsStateIsKeptForTheNextLaunch) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{
        "kept_carrying_state",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Compact}};
    auto add = m.kernel("add", {"values", "bins", "repeats", "totals"},
                        [](Array<float> values, Array<int> bins, Array<int> repeats, Array<float> totals) {
                            auto i = weft::tid();
                            weft::for_(repeats[i], [&](weft::Int) { totals[bins[i]] += values[i]; });
                        });
    constexpr int kElements = 1 << 20;  // 84 MB of state
    auto totals = weft::zeros<float>(kElements, weft::Device::cpu());
    const auto values = weft::from_vector<float>({0.5f, 0x1p-30f, -3.0f}, weft::Device::cpu());
    const auto bins = weft::from_vector<int>({7, 1 << 19, kElements - 1}, weft::Device::cpu());
    const auto repeats = weft::from_vector<int>({2, 3, 1}, weft::Device::cpu());
    m.compile(weft::Device::cpu());
    weft::launch(add, 3, values, bins, repeats, totals);
    EXPECT_EQ(error_with_address_space(size_t{32} << 20,
                                       [&] { weft::launch(add, 3, values, bins, repeats, totals); }),
              "")
        << "the state of the first launch was not kept";
    const std::vector<float> got = totals.to_vector();
    EXPECT_EQ(got[7], 2.0f);
    EXPECT_EQ(got[1 << 19], 0x1p-30f * 6);
    EXPECT_EQ(got[kElements - 1], -6.0f);
    EXPECT_EQ(std::count(got.begin(), got.end(), 0.0f), kElements - 3);
}

// The records strategy's grouping on the CPU needs memory per element of the target (16 M
// float64 elements: 64 MB); without it the launch reports it, naming the array.
TEST(DeterministicState, RecordGroupingThatCannotBeAllocatedIsAnErrorNamingTheTarget) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{
        "grouping_allocation",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Records}};
    auto add = m.kernel("add_one", {"totals"}, [](Array<double> totals) { totals[weft::tid()] += 1.0; });
    auto totals = weft::zeros<double>(1 << 24, weft::Device::cpu());
    m.compile(weft::Device::cpu());
    // 2^21 records (24 MB of state) grouped in 32 MB more: the grouping is what cannot be had.
    // (A few records into the same array group in memory of their own size, not the array's.)
    const std::string message =
        error_with_address_space(size_t{32} << 20, [&] { weft::launch(add, 1 << 21, totals); });
    EXPECT_NE(message.find("cannot allocate the deterministic state for array 'totals'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("host memory for grouping its records is not available"), std::string::npos)
        << message;
    EXPECT_EQ(error_with_address_space(size_t{32} << 20, [&] { weft::launch(add, 4, totals); }), "")
        << "four records into 16M elements need no memory of the array's size";
}

}  // namespace
