// Slot allocation into up to 65,536 counter elements on a GPU (the bucket path of
// docs/design/0021): adversarial key distributions, several and aliased counters, loops with
// counts above 1, out-of-range indices and elements passing 2^31 - 1 slots, each against the CPU
// backend bit for bit (or a sequential reference where the backends differ on purpose).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/errors.hpp"
#include "support/slot_bins.hpp"
#include "support/xorshift.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Int;
using weft::test::bin_case;
using weft::test::BinCase;
using weft::test::BinKernel;
using weft::test::BinOutputs;
using weft::test::has;
using weft::test::launch_bins;
using weft::test::xorshift;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

const BinKernel& bin_kernel() {
    static const BinKernel k =
        weft::test::bin_kernel("slot_bins_gpu", {.deterministic = Deterministic::RunToRun});
    return k;
}

BinOutputs launch_on(weft::Device device, const BinCase& in) {
    return launch_bins(bin_kernel(), device, in, in.initial);
}

void expect_same_as_cpu(const BinCase& in, const std::string& what) {
    SCOPED_TRACE(what);
    const BinOutputs want = launch_on(cpu, in);
    const BinOutputs got = launch_on(gpu, in);
    EXPECT_EQ(got.slots, want.slots);
    EXPECT_EQ(got.counters, want.counters);
}

// Thread t's counter element under each distribution of n threads over `elements`.
using Distribution = std::function<int(int t, int n, int elements)>;

struct Named {
    const char* name;
    Distribution bin;
};

const std::vector<Named>& distributions() {
    static const std::vector<Named> all = {
        {"all into one element", [](int, int, int e) { return e * 5 / 8; }},
        {"half into one element", [](int t, int, int e) { return t % 2 ? e / 3 : (t * 7919) % e; }},
        {"uniform", [](int t, int, int e) { return static_cast<int>((t * 2654435761u) >> 7) % e; }},
        {"sorted", [](int t, int n, int e) { return static_cast<int>(int64_t{t} * e / n); }},
        {"reverse", [](int t, int n, int e) { return e - 1 - static_cast<int>(int64_t{t} * e / n); }},
        // Consecutive threads in different buckets (high bytes), one low byte per bucket.
        {"cycling through the buckets", [](int t, int, int e) { return (t * 256 + t / 4096) % e; }},
        // A bucket of one element every so often among long runs.
        {"short runs", [](int t, int, int e) { return t % 997 == 0 ? (t / 997) % e : (t / 5000) % e; }},
    };
    return all;
}

// Every distribution, with every thread reserving one slot (the kernels' popcount path) and with
// bin_case's mix of no reservation, zero slots and 1 to 3 slots (their general path).
void check_distributions(int n, int elements) {
    for (const Named& d : distributions()) {
        BinCase in = bin_case(n, elements, static_cast<uint32_t>(elements));
        for (int t = 0; t < n; ++t) in.bins[t] = d.bin(t, n, elements);
        expect_same_as_cpu(in, std::to_string(n) + " threads, " + std::to_string(elements) + " elements, " +
                                   d.name + ", mixed counts");
        in.amounts.assign(in.amounts.size(), 1);
        expect_same_as_cpu(in, std::to_string(n) + " threads, " + std::to_string(elements) + " elements, " +
                                   d.name + ", one slot each");
    }
}

TEST(SlotBinsGpu, AdversarialDistributionsIntoSixtyFiveThousandElements) {
    check_distributions(1 << 20, 65536);
}

// Partitioned with few buckets (257: two), and in position order (256 and fewer: one bucket).
TEST(SlotBinsGpu, AdversarialDistributionsIntoFewerElements) {
    for (int elements : {40000, 4096, 257, 256, 17, 1}) check_distributions(300000, elements);
}

// Around the 2,048 positions of a partition tile and the 2,304 of an offsets chunk in position
// order: a part of one, one, one and a bit, several.
TEST(SlotBinsGpu, ThreadCountsAroundTheTile) {
    for (int n : {1, 31, 2047, 2048, 2049, 2303, 2304, 2305, 4095, 4096, 4097, 4608, 4609, 12289})
        for (int elements : {65536, 300, 200})
            expect_same_as_cpu(bin_case(n, elements, static_cast<uint32_t>(n + elements)),
                               std::to_string(n) + " threads, " + std::to_string(elements) + " elements");
}

// Buckets (a key's high byte) whose sizes sit at the edges of the offsets kernel's chunks of
// 2,304 reservations, among empty buckets: each bucket's reservations in one run of positions,
// and scattered over the partition's tiles.
TEST(SlotBinsGpu, BucketsAtTheChunkEdgesAmongEmptyBuckets) {
    const std::vector<std::pair<int, int>> buckets = {{0, 2303}, {1, 2304}, {2, 2305},   {7, 1},
                                                      {8, 4608}, {9, 4609}, {200, 6911}, {255, 2304}};
    std::vector<int> bins;
    for (const auto& [bucket, size] : buckets)
        for (int i = 0; i < size; ++i) bins.push_back(bucket * 256 + (i * 37 + i / 256) % 256);
    const auto n = static_cast<int>(bins.size());
    for (bool scattered : {false, true}) {
        if (scattered) {
            uint32_t x = 77;
            for (int i = n - 1; i > 0; --i)
                std::swap(bins[i], bins[xorshift(x) % static_cast<uint32_t>(i + 1)]);
        }
        BinCase in = bin_case(n, 65536, 43);
        in.bins = bins;
        const std::string what = scattered ? "scattered" : "in runs";
        expect_same_as_cpu(in, what + ", mixed counts");
        in.amounts.assign(in.amounts.size(), 1);
        expect_same_as_cpu(in, what + ", one slot each");
    }
}

// More than 2^19 tile counts (over 4,194,304 positions): the partition's scan is the three-phase
// one rather than the chained kernel.
TEST(SlotBinsGpu, OverFourMillionReservationsEqualTheCpuBackend) {
    const int n = (1 << 22) + 4097;
    BinCase in = bin_case(n, 65536, 71);
    for (int t = 0; t < n; ++t) in.bins[t] = static_cast<int>((t * 2654435761u) >> 9) % 65536;
    expect_same_as_cpu(in, "uniform, mixed counts");
}

// Counts around the largest an item word holds (65,533; above it the count is read again from the
// counting pass's record), and above 3 (no population-count ranking), in both paths.
TEST(SlotBinsGpu, CountsAroundTheItemWordsLimitEqualTheCpuBackend) {
    for (int elements : {65536, 100}) {
        BinCase in = bin_case(30000, elements, 17);
        const int big[] = {4, 65533, 65534, 65535, 65536, 100000};
        for (int t = 0; t < 30000; t += 7) in.amounts[t] = big[(t / 7) % 6];
        for (int t = 0; t < 30000; t += 3) in.bins[t] = elements / 3;  // one element takes many of them
        expect_same_as_cpu(in, std::to_string(elements) + " elements");
    }
}

// Direct launches of one shape keep their state from launch to launch (a changed counter is
// published again): each equals the CPU backend, on two counters in turn.
TEST(SlotBinsGpu, DirectLaunchesOfOneShapeOnTwoCountersEqualTheCpuBackend) {
    for (int elements : {65536, 200}) {
        SCOPED_TRACE(std::to_string(elements) + " elements");
        const int n = 50000;
        const BinCase in = bin_case(n, elements, 61);
        auto bins = weft::from_vector(in.bins, gpu);
        auto amounts = weft::from_vector(in.amounts, gpu);
        std::vector<weft::DeviceArray<int>> counters = {weft::from_vector(in.initial, gpu),
                                                        weft::from_vector(in.initial, gpu)};
        std::vector<std::vector<int>> want = {in.initial, in.initial};
        for (int c : {0, 1, 0, 0, 1}) {
            BinCase step = in;
            step.initial = want[c];
            const BinOutputs cpu_out = launch_on(cpu, step);
            auto slots = weft::full<int>(n, -1, gpu);
            weft::launch(bin_kernel(), n, bins, amounts, counters[c], slots);
            EXPECT_EQ(slots.to_vector(), cpu_out.slots) << "counter " << c;
            EXPECT_EQ(counters[c].to_vector(), cpu_out.counters) << "counter " << c;
            want[c] = cpu_out.counters;
        }
    }
}

TEST(SlotBinsGpu, NoThreadReserves) {
    for (int elements : {65536, 100}) {
        BinCase in = bin_case(20000, elements, 3);
        in.amounts.assign(in.amounts.size(), -1);
        expect_same_as_cpu(in, std::to_string(elements) + " elements");
    }
}

// Two counters reached in a loop of data-dependent length, counts above 1: program order per
// thread across both, each counter in thread order.
using TwoCounters = weft::Kernel<Array<int>, Array<int, 2>, Array<int, 2>, Array<int, 2>, Array<int>,
                                 Array<int>, Array<int, 2>, Array<int, 2>>;
constexpr int kTrips = 4;

TwoCounters two_counters(const std::string& name, const weft::OptionsPatch& options) {
    weft::Module m(name, options);
    return m.kernel(name, {"trips", "a_at", "b_at", "amounts", "a", "b", "got_a", "got_b"},
                    [](Array<int> trips, Array<int, 2> a_at, Array<int, 2> b_at, Array<int, 2> amounts,
                       Array<int> a, Array<int> b, Array<int, 2> got_a, Array<int, 2> got_b) {
                        auto t = weft::tid();
                        weft::for_(trips[t], [&](Int k) {
                            got_a(t, k) = weft::atomic_add(a, a_at(t, k), amounts(t, k));
                            got_b(t, k) = weft::atomic_add(b, b_at(t, k), 1);
                        });
                    });
}

struct LoopCase {
    std::vector<int> trips, a_at, b_at, amounts;
};

LoopCase loop_case(int n, int a_elements, int b_elements, uint32_t seed) {
    LoopCase c;
    uint32_t x = seed * 2654435761u + 7;
    const auto next = [&x] { return xorshift(x); };
    for (int t = 0; t < n; ++t) {
        c.trips.push_back(static_cast<int>(next() % (kTrips + 1)));
        for (int k = 0; k < kTrips; ++k) {
            // One element in eight takes most reservations: long runs next to short ones.
            c.a_at.push_back(next() % 3 == 0 ? a_elements / 8 : static_cast<int>(next() % a_elements));
            c.b_at.push_back(static_cast<int>(next() % b_elements));
            c.amounts.push_back(static_cast<int>(next() % 4));
        }
    }
    return c;
}

struct LoopOutputs {
    std::vector<int> base, got_a, got_b;
};

// Runs the kernel with a and b as views of one base array (`a_view`, `b_view` make them).
LoopOutputs run_loop(const TwoCounters& k, weft::Device device, const LoopCase& c,
                     const std::vector<int>& base,
                     const std::function<weft::DeviceArray<int>(const weft::DeviceArray<int>&)>& a_view,
                     const std::function<weft::DeviceArray<int>(const weft::DeviceArray<int>&)>& b_view) {
    const auto n = static_cast<int64_t>(c.trips.size());
    auto base_array = weft::from_vector(base, device);
    auto got_a = weft::full<int>({n, kTrips}, -1, device);
    auto got_b = weft::full<int>({n, kTrips}, -1, device);
    const auto grid = [&](const std::vector<int>& v) { return weft::from_vector(v, {n, kTrips}, device); };
    weft::launch(k, n, weft::from_vector(c.trips, device), grid(c.a_at), grid(c.b_at), grid(c.amounts),
                 a_view(base_array), b_view(base_array), got_a, got_b);
    return {base_array.to_vector(), got_a.to_vector(), got_b.to_vector()};
}

TEST(SlotBinsGpu, SeveralAndAliasedCountersInLoopsEqualTheCpuBackend) {
    const TwoCounters k = two_counters(
        "slot_bins_two", {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 2 * kTrips});
    const int n = 100000;
    struct Layout {
        const char* name;
        int a_elements, b_elements, base;
        std::function<weft::DeviceArray<int>(const weft::DeviceArray<int>&)> a, b;
    };
    const std::vector<Layout> layouts = {
        {"separate counters, 65,536 elements in all", 40000, 25536, 65536,
         [](const auto& base) { return base.slice(0, 0, 40000); },
         [](const auto& base) { return base.slice(0, 40000, 65536); }},
        {"separate counters, 200 elements in all", 150, 50, 200,
         [](const auto& base) { return base.slice(0, 0, 150); },
         [](const auto& base) { return base.slice(0, 150, 200); }},
        {"one array passed twice", 30000, 30000, 30000, [](const auto& base) { return base; },
         [](const auto& base) { return base; }},
        {"overlapping slices", 50000, 50000, 60000, [](const auto& base) { return base.slice(0, 0, 50000); },
         [](const auto& base) { return base.slice(0, 10000, 60000); }},
        {"interleaved elements", 20000, 20000, 40000,
         [](const auto& base) { return base.slice(0, 0, 40000, 2); },
         [](const auto& base) { return base.slice(0, 1, 40000, 2); }},
    };
    for (const Layout& l : layouts) {
        SCOPED_TRACE(l.name);
        const LoopCase c = loop_case(n, l.a_elements, l.b_elements, 5);
        std::vector<int> base(static_cast<size_t>(l.base));
        for (int e = 0; e < l.base; ++e) base[e] = (e * 37) % 101 - 50;
        const LoopOutputs want = run_loop(k, cpu, c, base, l.a, l.b);
        const LoopOutputs got = run_loop(k, gpu, c, base, l.a, l.b);
        EXPECT_EQ(got.got_a, want.got_a);
        EXPECT_EQ(got.got_b, want.got_b);
        EXPECT_EQ(got.base, want.base);
    }
}

// More reservations than the record bound: reported at the next synchronization, nothing written.
TEST(SlotBinsGpu, AReservationOverflowWritesNothing) {
    const TwoCounters k = two_counters(
        "slot_bins_overflow", {.deterministic = Deterministic::RunToRun, .deterministic_max_records = 3});
    LoopCase c = loop_case(50000, 60000, 5536, 9);
    c.trips.assign(c.trips.size(), 1);
    c.trips[31337] = 2;  // four reservations against a bound of three
    const std::vector<int> base(65536, 4);
    auto base_array = weft::from_vector(base, gpu);
    auto got_a = weft::full<int>({50000, kTrips}, -1, gpu);
    auto got_b = weft::full<int>({50000, kTrips}, -1, gpu);
    const auto grid = [&](const std::vector<int>& v) { return weft::from_vector(v, {50000, kTrips}, gpu); };
    const auto error = weft::test::error_by_sync(gpu, [&] {
        weft::launch(k, 50000, weft::from_vector(c.trips, gpu), grid(c.a_at), grid(c.b_at), grid(c.amounts),
                     base_array.slice(0, 0, 60000), base_array.slice(0, 60000, 65536), got_a, got_b);
    });
    ASSERT_TRUE(error.has_value()) << "the overflow was not reported";
    EXPECT_TRUE(has(error->what(), "deterministic_max_records")) << error->what();
    EXPECT_EQ(base_array.to_vector(), base) << "the counters keep their values";
    EXPECT_EQ(got_a.to_vector(), std::vector<int>(50000 * kTrips, -1)) << "nothing is written";
}

// Without bounds_check, a reservation outside the counter writes no counter element and changes
// no other reservation's slot (the CPU backend differs here: it writes outside the counter).
TEST(SlotBinsGpu, AnIndexOutOfRangeWithoutBoundsCheckWritesNoCounterElement) {
    for (int elements : {65536, 100}) {
        SCOPED_TRACE(std::to_string(elements) + " elements");
        BinCase in = bin_case(50000, elements, 21);
        for (int t = 0; t < 50000; t += 1001) {
            in.bins[t] = elements;  // one past the end: inside the base array, outside the counter
            in.amounts[t] = 5;
        }
        std::vector<int> base = in.initial;
        base.resize(static_cast<size_t>(elements) + 8, 123);
        auto base_array = weft::from_vector(base, gpu);
        auto slots = weft::full<int>(50000, -1, gpu);
        weft::launch(bin_kernel(), 50000, weft::from_vector(in.bins, gpu), weft::from_vector(in.amounts, gpu),
                     base_array.slice(0, 0, elements), slots);
        std::vector<int> want_base = base;
        std::vector<int> want_slots(50000, -1);
        for (int t = 0; t < 50000; ++t) {
            if (in.amounts[t] < 0 || in.bins[t] == elements) continue;
            int& counter = want_base[in.bins[t] < 0 ? in.bins[t] + elements : in.bins[t]];
            want_slots[t] = counter;
            counter += in.amounts[t];
        }
        const std::vector<int> got_slots = slots.to_vector();
        for (int t = 0; t < 50000; ++t)
            if (in.bins[t] != elements) ASSERT_EQ(got_slots[t], want_slots[t]) << "thread " << t;
        EXPECT_EQ(base_array.to_vector(), want_base);
    }
}

TEST(SlotBinsGpu, AnIndexOutOfRangeWithBoundsCheckIsAnErrorAndChangesNothing) {
    const BinKernel k = weft::test::bin_kernel(
        "slot_bins_checked", {.deterministic = Deterministic::RunToRun, .bounds_check = true});
    for (int elements : {65536, 100}) {
        BinCase in = bin_case(30000, elements, 10);
        in.bins[23456] = elements;
        in.amounts[23456] = 1;
        auto counters = weft::from_vector(in.initial, gpu);
        auto slots = weft::full<int>(30000, -1, gpu);
        const auto error = weft::test::error_by_sync(gpu, [&] {
            weft::launch(k, 30000, weft::from_vector(in.bins, gpu), weft::from_vector(in.amounts, gpu),
                         counters, slots);
        });
        ASSERT_TRUE(error.has_value()) << "the out-of-range counter index was not reported";
        EXPECT_TRUE(has(error->what(), "index " + std::to_string(elements))) << error->what();
        EXPECT_EQ(counters.to_vector(), in.initial) << "the counters keep their values";
        EXPECT_EQ(slots.to_vector(), std::vector<int>(30000, -1)) << "nothing is written";
    }
}

// An element passing 2^31 - 1 slots is an error and nothing is written; just below is fine.
TEST(SlotBinsGpu, AnElementPassingTwoToThe31SlotsIsAnErrorAndChangesNothing) {
    for (int elements : {65536, 100}) {
        SCOPED_TRACE(std::to_string(elements) + " elements");
        BinCase in = bin_case(20000, elements, 12);
        for (int& a : in.amounts) a = a < 0 ? a : 1;
        for (int t : {3, 9000, 19999}) {
            in.bins[t] = elements / 2;
            in.amounts[t] = 1 << 30;
        }
        auto counters = weft::from_vector(in.initial, gpu);
        auto slots = weft::full<int>(20000, -1, gpu);
        const auto error = weft::test::error_by_sync(gpu, [&] {
            weft::launch(bin_kernel(), 20000, weft::from_vector(in.bins, gpu),
                         weft::from_vector(in.amounts, gpu), counters, slots);
        });
        ASSERT_TRUE(error.has_value()) << "3 x 2^30 slots on one element were not rejected";
        EXPECT_TRUE(has(error->what(), "2^31 - 1 slots")) << error->what();
        EXPECT_EQ(counters.to_vector(), in.initial) << "the counters keep their values";
        EXPECT_EQ(slots.to_vector(), std::vector<int>(20000, -1)) << "nothing is written";

        for (int t : {3, 9000, 19999}) in.amounts[t] = 1 << 28;
        expect_same_as_cpu(in, "3 x 2^28 slots");
    }
}

// A captured launch replays like the CPU backend, twice, for each distribution's worst case.
TEST(SlotBinsGpu, ACapturedLaunchReplaysLikeTheCpuBackend) {
    const int n = 300000;
    for (int elements : {65536, 300, 200}) {
        for (const Named& d : {distributions()[0], distributions()[5]}) {
            SCOPED_TRACE(std::to_string(elements) + " elements, " + d.name);
            BinCase in = bin_case(n, elements, 31);
            for (int t = 0; t < n; ++t) in.bins[t] = d.bin(t, n, elements);
            auto bins = weft::from_vector(in.bins, gpu);
            auto amounts = weft::from_vector(in.amounts, gpu);
            auto counters = weft::from_vector(in.initial, gpu);
            auto slots = weft::full<int>(n, -1, gpu);
            weft::launch(bin_kernel(), n, bins, amounts, counters, slots);  // compiled before the capture
            weft::synchronize(gpu);
            BinCase next = in;
            next.initial = launch_on(cpu, in).counters;
            ASSERT_EQ(counters.to_vector(), next.initial);
            const weft::Graph graph =
                weft::capture(gpu, [&] { weft::launch(bin_kernel(), n, bins, amounts, counters, slots); });
            for (int replay = 0; replay < 2; ++replay) {
                const BinOutputs want = launch_on(cpu, next);
                graph.launch();
                weft::synchronize(gpu);
                EXPECT_EQ(slots.to_vector(), want.slots) << "replay " << replay;
                EXPECT_EQ(counters.to_vector(), want.counters) << "replay " << replay;
                next.initial = want.counters;
            }
        }
    }
}

// A graph's launch leaves its state clean for the next replay even when the replay fails (an
// element passing 2^31 - 1 slots): the replays before and after it equal the CPU backend.
TEST(SlotBinsGpu, AReplayAfterAFailedReplayIsLikeTheCpuBackend) {
    const int n = 100000;
    for (int elements : {65536, 200}) {
        SCOPED_TRACE(std::to_string(elements) + " elements");
        BinCase in = bin_case(n, elements, 51);
        BinCase failing = in;
        for (int t : {5, 50000, 99999}) {
            failing.bins[t] = elements / 2;
            failing.amounts[t] = 1 << 30;
        }
        auto bins = weft::from_vector(in.bins, gpu);
        auto amounts = weft::from_vector(in.amounts, gpu);
        auto counters = weft::from_vector(in.initial, gpu);
        auto slots = weft::full<int>(n, -1, gpu);
        weft::launch(bin_kernel(), n, bins, amounts, counters, slots);  // compiled before the capture
        weft::synchronize(gpu);
        BinCase next = in;
        next.initial = launch_on(cpu, in).counters;
        ASSERT_EQ(counters.to_vector(), next.initial);
        const weft::Graph graph =
            weft::capture(gpu, [&] { weft::launch(bin_kernel(), n, bins, amounts, counters, slots); });
        for (int replay = 0; replay < 4; ++replay) {
            const bool fails = replay == 1 || replay == 2;
            weft::copy(amounts, weft::from_vector(fails ? failing.amounts : in.amounts, gpu));
            weft::copy(bins, weft::from_vector(fails ? failing.bins : in.bins, gpu));
            if (fails) {
                const std::vector<int> before = slots.to_vector();
                const auto error = weft::test::error_by_sync(gpu, [&] { graph.launch(); });
                ASSERT_TRUE(error.has_value()) << "replay " << replay << " did not fail";
                EXPECT_TRUE(has(error->what(), "2^31 - 1 slots")) << error->what();
                EXPECT_EQ(counters.to_vector(), next.initial) << "replay " << replay;
                EXPECT_EQ(slots.to_vector(), before) << "replay " << replay;
                continue;
            }
            const BinOutputs want = launch_on(cpu, next);
            graph.launch();
            weft::synchronize(gpu);
            EXPECT_EQ(slots.to_vector(), want.slots) << "replay " << replay;
            EXPECT_EQ(counters.to_vector(), want.counters) << "replay " << replay;
            next.initial = want.counters;
        }
    }
}

}  // namespace
