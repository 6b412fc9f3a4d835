// Slot allocation with several counter elements: 1 to 65,536 elements reached by data-dependent
// and constant indices, empty and zero-sized reservations, counter views, out-of-range indices
// and elements passing 2^31 - 1 slots, each against a sequential host reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/slot_bins.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::test::bin_case;
using weft::test::bin_kernel;
using weft::test::BinCase;
using weft::test::BinKernel;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

const BinKernel& bins_run_to_run() {
    static const BinKernel k = bin_kernel("slot_elements", {.deterministic = Deterministic::RunToRun});
    return k;
}

struct BinResult {
    std::vector<int> slots, counters;
};

BinResult reference(const BinCase& c) {
    BinResult r{std::vector<int>(c.bins.size(), -1), c.initial};
    const int elements = static_cast<int>(c.initial.size());
    for (size_t t = 0; t < c.bins.size(); ++t) {
        if (c.amounts[t] < 0) continue;
        int& counter = r.counters[c.bins[t] < 0 ? c.bins[t] + elements : c.bins[t]];
        r.slots[t] = counter;
        counter += c.amounts[t];
    }
    return r;
}

BinResult run(const BinKernel& k, const BinCase& c, const weft::DeviceArray<int>& counters) {
    const auto n = static_cast<int64_t>(c.bins.size());
    auto slots = weft::full<int>(n, -1, dev());
    weft::launch(k, n, weft::from_vector(c.bins, dev()), weft::from_vector(c.amounts, dev()), counters,
                 slots);
    return {slots.to_vector(), counters.to_vector()};
}

void check(const BinCase& c) {
    const BinResult want = reference(c);
    const BinResult got = run(bins_run_to_run(), c, weft::from_vector(c.initial, dev()));
    EXPECT_EQ(got.slots, want.slots) << "slots per thread, in thread order per element";
    EXPECT_EQ(got.counters, want.counters) << "each element advances by its total";
}

TEST(SlotElements, OneElementThroughADataDependentIndex) {
    check(bin_case(70000, 1, 1));
}

TEST(SlotElements, SixteenElements) {
    check(bin_case(70000, 16, 2));
}

TEST(SlotElements, TwoHundredFiftySixElements) {
    check(bin_case(70000, 256, 3));
}

TEST(SlotElements, SixtyFiveThousandElements) {
    check(bin_case(200000, 65536, 4));
}

TEST(SlotElements, AFewElementsOfALargeCounter) {
    // 4,000,000 counter elements, 12 of them reached: the work follows the reservations.
    BinCase c = bin_case(5000, 12, 5);
    for (int& b : c.bins) b = (b + 12) % 12 * 333331;
    c.initial.assign(4000000, 7);
    check(c);
}

TEST(SlotElements, NoThreadReserves) {
    BinCase c = bin_case(3000, 16, 6);
    c.amounts.assign(c.amounts.size(), -1);
    check(c);
}

TEST(SlotElements, EveryReservationIsOfZeroSlots) {
    BinCase c = bin_case(3000, 16, 7);
    c.amounts.assign(c.amounts.size(), 0);
    check(c);
}

TEST(SlotElements, RepeatedLaunchesAppend) {
    const BinCase c = bin_case(20000, 16, 8);
    auto counters = weft::from_vector(c.initial, dev());
    BinResult first = run(bins_run_to_run(), c, counters);
    BinCase second = c;
    second.initial = first.counters;
    const BinResult want = reference(second);
    const BinResult got = run(bins_run_to_run(), c, counters);
    EXPECT_EQ(got.slots, want.slots);
    EXPECT_EQ(got.counters, want.counters);
}

// A strided view of a larger array as the counter: its elements advance, the others do not.
TEST(SlotElements, AStridedViewAsTheCounter) {
    const BinCase c = bin_case(20000, 16, 9);
    std::vector<int> base_values(40, 1000);
    for (int e = 0; e < 16; ++e) base_values[3 + 2 * e] = c.initial[e];
    auto base = weft::from_vector(base_values, dev());
    const auto view = base.slice(0, 3, 35, 2);
    const auto n = static_cast<int64_t>(c.bins.size());
    auto slots = weft::full<int>(n, -1, dev());
    weft::launch(bins_run_to_run(), n, weft::from_vector(c.bins, dev()), weft::from_vector(c.amounts, dev()),
                 view, slots);
    const BinResult want = reference(c);
    std::vector<int> want_base = base_values;
    for (int e = 0; e < 16; ++e) want_base[3 + 2 * e] = want.counters[e];
    EXPECT_EQ(slots.to_vector(), want.slots);
    EXPECT_EQ(base.to_vector(), want_base);
}

// Two constant indices are two elements: the several-element path, in program order per thread.
TEST(SlotElements, TwoConstantIndices) {
    weft::Module m{"slot_two_constants", {.deterministic = Deterministic::RunToRun}};
    auto k = m.kernel("slot_two_constants", {"values", "counters", "got"},
                      [](Array<float> values, Array<int> counters, Array<int, 2> got) {
                          auto t = weft::tid();
                          weft::if_(values[t] > 0.0f, [&] { got(t, 0) = weft::atomic_add(counters, 0, 1); });
                          got(t, 1) = weft::atomic_add(counters, 3, 2);
                      });
    const int n = 5000;
    std::vector<float> values(n);
    for (int t = 0; t < n; ++t) values[t] = static_cast<float>((t * 7) % 5) - 2.0f;
    std::vector<int> counters{4, 50, 60, -9}, want(2 * n, -1);
    auto counters_array = weft::from_vector(counters, dev());
    for (int t = 0; t < n; ++t) {
        if (values[t] > 0.0f) want[2 * t] = counters[0]++;
        want[2 * t + 1] = counters[3];
        counters[3] += 2;
    }
    auto got = weft::full<int>({n, 2}, -1, dev());
    weft::launch(k, n, weft::from_vector(values, dev()), counters_array, got);
    EXPECT_EQ(got.to_vector(), want);
    EXPECT_EQ(counters_array.to_vector(), counters);
}

// With bounds_check an index outside the counter is the kernel's bounds error, and the launch
// changes nothing.
TEST(SlotElements, AnIndexOutOfRangeWithBoundsCheckIsAnErrorAndChangesNothing) {
    const BinKernel k =
        bin_kernel("slot_elements_checked", {.deterministic = Deterministic::RunToRun, .bounds_check = true});
    BinCase c = bin_case(3000, 16, 10);
    c.bins[1234] = 16;
    c.amounts[1234] = 1;
    auto counters = weft::from_vector(c.initial, dev());
    auto slots = weft::full<int>(3000, -1, dev());
    const auto error = weft::test::error_by_sync(dev(), [&] {
        weft::launch(k, 3000, weft::from_vector(c.bins, dev()), weft::from_vector(c.amounts, dev()), counters,
                     slots);
    });
    ASSERT_TRUE(error.has_value()) << "the out-of-range counter index was not reported";
    EXPECT_EQ(error->kernel(), "slot_elements_checked") << error->what();
    EXPECT_TRUE(has(error->what(), "'counters'")) << error->what();
    EXPECT_TRUE(has(error->what(), "index 16")) << error->what();
    EXPECT_EQ(counters.to_vector(), c.initial) << "the counters keep their values";
    EXPECT_EQ(slots.to_vector(), std::vector<int>(3000, -1)) << "nothing is written";
    EXPECT_NO_THROW(weft::synchronize(dev())) << "reported once";
}

// An element that would pass 2^31 - 1 slots in one launch is an error; nothing is written.
TEST(SlotElements, AnElementPassingTwoToThe31SlotsIsAnErrorAndChangesNothing) {
    const int n = 4;
    BinCase c{{0, 1, 0, 0}, {1 << 30, 5, 1 << 30, 1 << 30}, {3, 4}};
    auto counters = weft::from_vector(c.initial, dev());
    auto slots = weft::full<int>(n, -1, dev());
    const auto error = weft::test::error_by_sync(dev(), [&] {
        weft::launch(bins_run_to_run(), n, weft::from_vector(c.bins, dev()),
                     weft::from_vector(c.amounts, dev()), counters, slots);
    });
    ASSERT_TRUE(error.has_value()) << "3 x 2^30 slots on one element were not rejected";
    EXPECT_EQ(error->kernel(), "slot_elements") << error->what();
    EXPECT_TRUE(has(error->what(), "2^31 - 1 slots")) << error->what();
    EXPECT_EQ(counters.to_vector(), c.initial) << "the counters keep their values";
    EXPECT_EQ(slots.to_vector(), std::vector<int>(n, -1)) << "nothing is written";
    EXPECT_NO_THROW(weft::synchronize(dev())) << "reported once";

    const BinCase ok{{0, 1, 0, 0}, {1 << 29, 5, 1 << 29, 1 << 29}, {3, 4}};
    check(ok);
}

}  // namespace
