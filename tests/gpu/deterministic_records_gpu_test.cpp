// The records strategy on a GPU (record cursors in regions, long segments summed by many blocks)
// and the float64 exact resolve: the Exact strategy's bits, the CPU's and the oracle's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "device/abi.h"
#include "runtime/backend.hpp"
#include "runtime/det/accumulation.hpp"
#include "runtime/memory.hpp"
#include "support/deterministic_cases.hpp"
#include "support/errors.hpp"
#include "support/exact_sum.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::test::Case;
using weft::test::matches_oracle;
using weft::test::Op;
using weft::test::oracle;
using weft::test::same_bits_all;
using weft::test::type_name;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

// out[index[t]] += values[t] under `strategy` (RunToRun), on `device`.
template <class T>
std::vector<T> sum_with(DeterministicStrategy strategy, const Case<T>& c, weft::Device device = gpu,
                        int block_dim = 256) {
    weft::Module m{
        "records_" + type_name<T>() + "_" + weft::strategy_name(strategy) + "_" + std::to_string(block_dim),
        {.deterministic = Deterministic::RunToRun,
         .deterministic_strategy = strategy,
         .block_dim = block_dim}};
    auto add =
        m.kernel("add", {"values", "index", "out"}, [](Array<T> values, Array<int> index, Array<T> out) {
            auto t = weft::tid();
            weft::atomic_add(out, index[t], values[t]);
        });
    auto out = weft::from_vector(c.initial, device);
    weft::launch(add, static_cast<int64_t>(c.index.size()), weft::from_vector(c.values, device),
                 weft::from_vector(c.index, device), out);
    return out.to_vector();
}

// Records, for several block sizes, give the Exact strategy's bits and the oracle's.
template <class T>
void expect_records_match_exact(const Case<T>& c) {
    SCOPED_TRACE(c.name + " " + type_name<T>());
    const auto exact = sum_with(DeterministicStrategy::Exact, c);
    EXPECT_TRUE(matches_oracle(exact, oracle(Op::Add, c.initial, c.index, c.values)));
    for (const int block_dim : {256, 32, 1024})
        EXPECT_TRUE(same_bits_all(sum_with(DeterministicStrategy::Records, c, gpu, block_dim), exact))
            << "records, block_dim " << block_dim << " vs exact";
}

// `counts[k]` contributions to element k, in a random thread order, values of exponents in
// [min_exp, max_exp].
template <class T>
Case<T> segments_case(std::string name, const std::vector<int>& counts, int min_exp, int max_exp,
                      uint64_t seed) {
    std::mt19937_64 rng(seed);
    Case<T> c{std::move(name), {}, {}, {}};
    for (size_t k = 0; k < counts.size(); ++k) {
        c.initial.push_back(weft::test::random_value<T>(rng, min_exp, max_exp));
        c.index.insert(c.index.end(), static_cast<size_t>(counts[k]), static_cast<int>(k));
    }
    std::shuffle(c.index.begin(), c.index.end(), rng);
    for (size_t t = 0; t < c.index.size(); ++t)
        c.values.push_back(weft::test::random_value<T>(rng, min_exp, max_exp));
    return c;
}

// One hot element with two million records (64 regions of record cursors, every region's records
// in one long segment summed by 2,048 blocks), values of every exponent.
TEST(DeterministicRecordsGpu, HotElementWithMillionsOfRecordsGivesTheExactBits) {
    expect_records_match_exact(weft::test::random_case<float>("hot", 1 << 21, 1, -149, 127, 51));
    expect_records_match_exact(weft::test::random_case<double>("hot", 1 << 21, 1, -1074, 1000, 52));
    // Nearly one sign: the sum is large, and no digit word cancels.
    expect_records_match_exact(weft::test::random_case<float>("hot_narrow", (1 << 20) + 3, 1, 0, 3, 53));
}

// Many long segments among short ones, with lengths around the boundaries: exactly the long
// threshold (8,192, summed by one warp), one more (by blocks), segments crossing the blocks'
// 1,024-record chunks anywhere, and a thread count that is not a multiple of the regions' size.
TEST(DeterministicRecordsGpu, ManyLongSegmentsGiveTheExactBits) {
    std::mt19937 rng(54);
    std::vector<int> counts;
    for (int k = 0; k < 3000; ++k) {
        const int kind = static_cast<int>(rng() % 10);
        counts.push_back(kind == 0 ? 8192 + static_cast<int>(rng() % 3000) : static_cast<int>(rng() % 40));
    }
    counts[5] = 8192;
    counts[6] = 8193;
    counts[7] = 1024 * 9 + 1;
    counts[8] = 0;
    counts.back() = 20000;
    expect_records_match_exact(segments_case<float>("segments", counts, -60, 60, 55));
    expect_records_match_exact(segments_case<double>("segments", counts, -600, 600, 56));
    // Every element long: a chunk of the sum meets two long segments wherever one ends.
    expect_records_match_exact(segments_case<float>("all_long", std::vector<int>(97, 10007), -30, 30, 57));
}

// A long segment keeps every rule of the sum: NaN, infinities, signed zeros, exact cancellation
// (an element whose contributions cancel keeps its bits, a NaN its payload).
TEST(DeterministicRecordsGpu, LongSegmentsKeepTheSpecialValueRules) {
    const float inf = std::numeric_limits<float>::infinity();
    const float payload_nan = [] {
        uint32_t bits = 0x7fc01234u;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }();
    const int n = 20000;  // per element, beyond the long threshold
    Case<float> c{"special", {1.0f, 2.0f, -0.0f, payload_nan, -0.0f, 3.0f}, {}, {}};
    std::mt19937 rng(58);
    auto add = [&](int element, float v) {
        c.index.push_back(element);
        c.values.push_back(v);
    };
    float previous = 0.0f;
    for (int i = 0; i < n; ++i) {
        // Nonzero: a +0.0 contribution would count.
        const float v = std::ldexp(static_cast<float>(rng() % 1000 + 1) * (rng() % 2 ? 1.0f : -1.0f),
                                   static_cast<int>(rng() % 40) - 20);
        add(0, i == n / 2 ? inf : v);                                   // +inf among finite values
        add(1, i == 7 ? inf : i == n - 3 ? -inf : v);                   // +inf and -inf: NaN
        add(2, -0.0f);                                                  // only -0.0: stays -0.0
        add(3, i % 2 == 0 ? v : -previous);                             // cancels exactly: the payload stays
        add(4, i == n / 3 ? 0.0f : -0.0f);                              // one +0.0: +0.0
        add(5, i == 11 ? std::numeric_limits<float>::quiet_NaN() : v);  // a NaN
        previous = v;
    }
    expect_records_match_exact(c);
    for (int element = 0; element < 6; ++element) {  // each alone: a one-element target
        Case<float> one{"special_alone", {c.initial[element]}, {}, {}};
        for (size_t i = 0; i < c.index.size(); ++i)
            if (c.index[i] == element) {
                one.index.push_back(0);
                one.values.push_back(c.values[i]);
            }
        expect_records_match_exact(one);
    }
    const auto got = sum_with(DeterministicStrategy::Records, c);
    EXPECT_TRUE(std::isinf(got[0]) && got[0] > 0);
    EXPECT_TRUE(std::isnan(got[1]));
    EXPECT_TRUE(got[2] == 0.0f && std::signbit(got[2]));
    uint32_t bits3 = 0;
    std::memcpy(&bits3, &got[3], 4);
    EXPECT_EQ(bits3, 0x7fc01234u) << "contributions that cancel leave the element's bits";
    EXPECT_TRUE(got[4] == 0.0f && !std::signbit(got[4]));
    EXPECT_TRUE(std::isnan(got[5]));
}

// Each thread appending several records (a constant loop, and the larger branch of an if) to its
// region: the static bound sizes each region, and the sums are the Exact strategy's.
TEST(DeterministicRecordsGpu, ThreadsAppendingSeveralRecordsGiveTheExactBits) {
    const int n = 1000003;
    std::mt19937_64 rng(59);
    std::vector<float> values(n);
    for (float& v : values) v = weft::test::random_value<float>(rng, -40, 40);
    auto run = [&](DeterministicStrategy strategy, int block_dim) {
        weft::Module m{
            std::string("records_loops_") + weft::strategy_name(strategy) + std::to_string(block_dim),
            {.deterministic = Deterministic::RunToRun,
             .deterministic_strategy = strategy,
             .block_dim = block_dim}};
        auto k = m.kernel("loops", {"values", "out"}, [](Array<float> values, Array<float> out) {
            auto t = weft::tid();
            weft::for_(3, [&](weft::Int j) { out[(t + j) % 5] += values[t]; });
            weft::if_(
                t % 2 == 0, [&] { out[0] += values[t]; },
                [&] {
                    out[1] += values[t];
                    out[2] -= values[t];
                });
        });
        auto out = weft::full<float>(5, 0.25f, gpu);
        weft::launch(k, n, weft::from_vector(values, gpu), out);
        return out.to_vector();
    };
    const auto exact = run(DeterministicStrategy::Exact, 256);
    for (const int block_dim : {256, 64})
        EXPECT_TRUE(same_bits_all(run(DeterministicStrategy::Records, block_dim), exact))
            << "block_dim " << block_dim;
}

// A data-dependent loop (one cursor for the whole capacity): a few threads may emit far more than
// their share, and the sum is exact while the total fits; past the capacity the overflow is
// reported and the target keeps its value.
TEST(DeterministicRecordsGpu, OverflowIsReportedAndTheTargetKeepsItsValue) {
    weft::Module m{
        "records_overflow",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Records}};
    auto k = m.kernel("uneven", {"values", "trips", "sums"},
                      [](Array<float> values, Array<int> trips, Array<float> sums) {
                          auto t = weft::tid();
                          weft::for_(trips[t], [&](weft::Int j) { sums[j % 4] += values[t]; });
                      });
    const int n = 100000;  // capacity: 100,000 records
    std::vector<float> values(n);
    for (int t = 0; t < n; ++t) values[t] = static_cast<float>(t % 17) - 8.0f;
    std::vector<int> trips(n, 0);
    trips[3] = 60000;
    trips[n - 1] = 39000;  // 99,000 records from two threads
    auto sums = weft::full<float>(4, 1.0f, gpu);
    auto v = weft::from_vector(values, gpu);
    const auto fits =
        weft::test::error_by_sync(gpu, [&] { weft::launch(k, n, v, weft::from_vector(trips, gpu), sums); });
    EXPECT_FALSE(fits.has_value()) << fits->message();
    // Thread 3 adds -5 to each element 15,000 times; thread n - 1 adds 7 to each 9,750 times.
    const float want = 1.0f + 15000.0f * (static_cast<float>(3 % 17) - 8.0f) +
                       9750.0f * (static_cast<float>((n - 1) % 17) - 8.0f);
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, want));

    trips[5] = 2000;  // 101,000 records
    auto before = weft::full<float>(4, 1.0f, gpu);
    const auto overflow =
        weft::test::error_by_sync(gpu, [&] { weft::launch(k, n, v, weft::from_vector(trips, gpu), before); });
    ASSERT_TRUE(overflow.has_value());
    EXPECT_TRUE(weft::test::has(overflow->message(), "deterministic records for array 'sums' overflowed"))
        << overflow->message();
    EXPECT_TRUE(weft::test::has(overflow->message(), "101000")) << overflow->message();
    EXPECT_EQ(before.to_vector(), std::vector<float>(4, 1.0f));

    // A one-element target (its records summed as emitted, without counting): the same rules.
    auto one = m.kernel("uneven_one", {"values", "trips", "sums"},
                        [](Array<float> values, Array<int> trips, Array<float> sums) {
                            auto t = weft::tid();
                            weft::for_(trips[t], [&](weft::Int) { sums[0] += values[t]; });
                        });
    auto total = weft::full<float>(1, 1.0f, gpu);
    const auto one_overflow = weft::test::error_by_sync(
        gpu, [&] { weft::launch(one, n, v, weft::from_vector(trips, gpu), total); });
    ASSERT_TRUE(one_overflow.has_value());
    EXPECT_TRUE(weft::test::has(one_overflow->message(), "deterministic records for array 'sums' overflowed"))
        << one_overflow->message();
    EXPECT_EQ(total.to_vector(), std::vector<float>{1.0f});
    trips[5] = 0;  // 99,000 records again
    const auto one_fits = weft::test::error_by_sync(
        gpu, [&] { weft::launch(one, n, v, weft::from_vector(trips, gpu), total); });
    EXPECT_FALSE(one_fits.has_value()) << one_fits->message();
    EXPECT_EQ(total.to_vector(), std::vector<float>{1.0f + 60000.0f * -5.0f + 39000.0f * -3.0f});
}

// The resolve's view of regions, with records written by hand: records emitted in a few regions
// (the others empty) are all summed; a region past its room (which a kernel cannot do, since each
// region holds its threads' bound) is reported as an overflow and the target keeps its value. For
// two elements (counted and grouped) and one (summed as emitted).
TEST(DeterministicRecordsGpu, RegionsAreReadWhereTheyEndAndAnOverflowingOneIsReported) {
    namespace det = weft::runtime::det;
    weft::plan::DetTarget target;
    target.dtype = weft::DType::Float32;
    target.records_per_thread = 1;
    const int64_t threads = 1 << 20;
    weft::Options options;
    options.deterministic = Deterministic::RunToRun;
    options.deterministic_strategy = DeterministicStrategy::Records;
    // Record i of a region goes to element i % elements.
    auto run = [&](int elements, const std::vector<std::pair<int, std::vector<float>>>& regions,
                   std::vector<float>& result) {
        auto out = weft::full<float>(elements, 0.5f, gpu);
        const det::LaunchSite site{"by_hand", "records.cpp", 3, threads};
        auto plans = det::plan({target}, {&out}, {"out"}, options, site, false);
        EXPECT_EQ(plans.at(0).regions, 64);
        auto accumulation = weft::runtime::backend(gpu).accumulation(plans, site);
        wf::DetTarget state{};
        weft::detail::copy_bytes(&state, cpu, accumulation->state(0), gpu, sizeof state);
        for (const auto& [region, values] : regions) {
            const int64_t first = region * state.region_records;
            std::vector<wf::u64> records;
            std::vector<wf::u32> slots;
            for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < state.region_records; ++i) {
                uint32_t bits;
                std::memcpy(&bits, &values[i], 4);
                records.push_back(bits);
                slots.push_back(static_cast<wf::u32>(i % static_cast<size_t>(elements)));
            }
            weft::detail::copy_bytes(state.records + first, gpu, records.data(), cpu, records.size() * 8);
            weft::detail::copy_bytes(state.record_slots + first, gpu, slots.data(), cpu, slots.size() * 4);
            const wf::u64 cursor = values.size();
            weft::detail::copy_bytes(state.cursor + region * wf::kCursorStride, gpu, &cursor, cpu,
                                     sizeof cursor);
        }
        const auto error = weft::test::error_by_sync(gpu, [&] { accumulation->resolve(); });
        result = out.to_vector();
        return error;
    };
    const std::vector<std::pair<int, std::vector<float>>> spread = {
        {0, {1.0f, 2.0f, 4.0f}}, {17, {8.0f}}, {63, {16.0f, 32.0f, 64.0f, 128.0f}}};
    const std::vector<std::pair<int, std::vector<float>>> past_room = {{2, {1.0f}},
                                                                       {40, std::vector<float>(16385, 1.0f)}};
    std::vector<float> got;
    const auto fine = run(2, spread, got);
    EXPECT_FALSE(fine.has_value()) << fine->message();
    EXPECT_EQ(got, (std::vector<float>{0.5f + 1 + 4 + 8 + 16 + 64, 0.5f + 2 + 32 + 128}));
    const auto fine_one = run(1, spread, got);
    EXPECT_FALSE(fine_one.has_value()) << fine_one->message();
    EXPECT_EQ(got, (std::vector<float>{0.5f + 255}));
    for (const int elements : {2, 1}) {
        SCOPED_TRACE(std::to_string(elements) + " element(s)");
        const auto over = run(elements, past_room, got);
        ASSERT_TRUE(over.has_value());
        EXPECT_TRUE(weft::test::has(over->message(), "deterministic records for array 'out' overflowed"))
            << over->message();
        EXPECT_TRUE(weft::test::has(over->message(), "emitted 16386 records")) << over->message();
        EXPECT_EQ(got, std::vector<float>(static_cast<size_t>(elements), 0.5f));
    }
}

// Captured into a graph, a hot records launch replays to the direct launch's bits each time (the
// regions' cursors and the long sums' state start clean in every replay).
TEST(DeterministicRecordsGpu, ReplayedHotLaunchesGiveTheDirectBits) {
    const auto c = weft::test::random_case<float>("replayed", 1 << 20, 3, -100, 100, 60, 0.9);
    weft::Module m{
        "records_replay",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Records}};
    auto add = m.kernel("add", {"values", "index", "out"},
                        [](Array<float> values, Array<int> index, Array<float> out) {
                            auto t = weft::tid();
                            weft::atomic_add(out, index[t], values[t]);
                        });
    auto values = weft::from_vector(c.values, gpu);
    auto index = weft::from_vector(c.index, gpu);
    const auto n = static_cast<int64_t>(c.index.size());
    auto direct = weft::from_vector(c.initial, gpu);
    weft::launch(add, n, values, index, direct);
    const auto want = direct.to_vector();
    EXPECT_TRUE(matches_oracle(want, oracle(Op::Add, c.initial, c.index, c.values)));
    auto initial = weft::from_vector(c.initial, gpu);
    auto replayed = weft::zeros<float>(3, gpu);
    const weft::Graph graph = weft::capture(gpu, [&] {
        weft::copy(replayed, initial);
        weft::launch(add, n, values, index, replayed);
    });
    for (int replay = 0; replay < 3; ++replay) {
        graph.launch();
        weft::synchronize(gpu);
        EXPECT_TRUE(same_bits_all(replayed.to_vector(), want)) << "replay " << replay;
    }
}

// float64 sums (the exact strategy's resolve: a warp per 32 slots of 66 words) give the same bits
// in every strategy and on the CPU, with untouched elements (which keep their bits, a NaN its
// payload), a slot count that is not a multiple of 32, and repeated direct launches into one
// target (each resolve zeroes the words it read, for the next launch's reuse of the state).
TEST(DeterministicRecordsGpu, Float64SumsAreTheSameBitsInEveryStrategy) {
    auto c = weft::test::random_case<double>("f64", 300000, 100003, -1070, 900, 61);
    const double payload_nan = [] {
        uint64_t bits = 0x7ff8000000001234ull;
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
    }();
    for (size_t i = 0; i < c.initial.size(); i += 97) c.initial[i] = i % 2 ? payload_nan : -0.0;
    const auto exact = sum_with(DeterministicStrategy::Exact, c);
    EXPECT_TRUE(matches_oracle(exact, oracle(Op::Add, c.initial, c.index, c.values)));
    EXPECT_TRUE(same_bits_all(sum_with(DeterministicStrategy::Exact, c, cpu), exact)) << "CPU vs GPU";
    for (const auto strategy :
         {DeterministicStrategy::Records, DeterministicStrategy::Compact, DeterministicStrategy::Auto})
        EXPECT_TRUE(same_bits_all(sum_with(strategy, c), exact)) << weft::strategy_name(strategy);

    weft::Module m{
        "records_f64_repeated",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Exact}};
    auto add = m.kernel("add", {"values", "index", "out"},
                        [](Array<double> values, Array<int> index, Array<double> out) {
                            auto t = weft::tid();
                            weft::atomic_add(out, index[t], values[t]);
                        });
    const auto n = static_cast<int64_t>(c.index.size());
    auto on_gpu = weft::from_vector(c.initial, gpu);
    auto on_cpu = weft::from_vector(c.initial, cpu);
    const auto values_gpu = weft::from_vector(c.values, gpu);
    const auto index_gpu = weft::from_vector(c.index, gpu);
    const auto values_cpu = weft::from_vector(c.values, cpu);
    const auto index_cpu = weft::from_vector(c.index, cpu);
    for (int launch = 0; launch < 3; ++launch) {
        weft::launch(add, n, values_gpu, index_gpu, on_gpu);
        weft::launch(add, n, values_cpu, index_cpu, on_cpu);
        EXPECT_TRUE(same_bits_all(on_gpu.to_vector(), on_cpu.to_vector())) << "launch " << launch;
    }
}

}  // namespace
