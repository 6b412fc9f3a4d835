// The C++ twins of the deterministic-execution spec's examples, and array_scan, checked on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

// The device under test (the CPU for the "cpu" label); all kernels run in the default mode.
weft::Device dev() {
    return weft::test::test_device();
}

// Values whose float sums are exact in any order: multiples of 0.25 in [-3, 3].
std::vector<float> quarter_values(int n) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>((i * 37) % 25) - 3.0f;
    return v;
}

std::vector<int> spread_bins(int n, int num_bins) {
    std::vector<int> b(n);
    for (int i = 0; i < n; ++i) b[i] = (i * 7 + i / 3) % num_bins;
    return b;
}

std::vector<float> host_bin_sums(const std::vector<float>& values, const std::vector<int>& bins,
                                 int num_bins) {
    std::vector<float> sums(num_bins, 0.0f);
    for (size_t i = 0; i < values.size(); ++i) sums[bins[i]] += values[i];
    return sums;
}

std::vector<float> host_positive(const std::vector<float>& values) {
    std::vector<float> kept;
    for (float v : values)
        if (v > 0.0f) kept.push_back(v);
    return kept;
}

// Pattern 1, written with weft::atomic_add and with the `+=` shorthand.
TEST(SpecExamples, AccumulateMatchesHostSum) {
    weft::Module sim{"spec_accumulate"};
    auto with_call = sim.kernel("accumulate", {"values", "bins", "out"},
                                [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
                                    auto tid = weft::tid();
                                    weft::atomic_add(out, bins[tid], values[tid]);
                                });
    auto with_shorthand =
        sim.kernel("accumulate_shorthand", {"values", "bins", "out"},
                   [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
                       auto tid = weft::tid();
                       out[bins[tid]] += values[tid];
                   });

    const int n = 4096, num_bins = 7;
    const auto host_values = quarter_values(n);
    const auto host_bins = spread_bins(n, num_bins);
    const auto expected = host_bin_sums(host_values, host_bins, num_bins);
    auto values = weft::from_vector(host_values, dev());
    auto bins = weft::from_vector(host_bins, dev());

    auto out_call = weft::zeros<float>(num_bins, dev());
    weft::launch(with_call, n, values, bins, out_call);
    EXPECT_EQ(out_call.to_vector(), expected);

    auto out_shorthand = weft::zeros<float>(num_bins, dev());
    weft::launch(with_shorthand, n, values, bins, out_shorthand);
    EXPECT_EQ(out_shorthand.to_vector(), expected);

    // Accumulation adds to what is there: a second launch doubles every bin.
    weft::launch(with_call, n, values, bins, out_call);
    std::vector<float> doubled = expected;
    for (float& x : doubled) x *= 2.0f;
    EXPECT_EQ(out_call.to_vector(), doubled);
}

// The spec's quick-start launch: 4096 ones into one bin.
TEST(SpecExamples, QuickStartOnesSumToN) {
    weft::Module sim{"spec_quick_start"};
    auto accumulate = sim.kernel(
        "accumulate", [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
            auto tid = weft::tid();
            weft::atomic_add(out, bins[tid], values[tid]);
        });
    const int n = 4096;
    auto values = weft::ones<float>(n, dev());
    auto bins = weft::zeros<int>(n, dev());
    auto out = weft::zeros<float>(1, dev());
    weft::launch(accumulate, n, values, bins, out);
    EXPECT_EQ(out.to_vector(), std::vector<float>{4096.0f});
}

// Pattern 2: slot allocation. On the CPU threads run in order, so slots follow thread order;
// elsewhere (default mode) only the count and the multiset of kept values are fixed.
TEST(SpecExamples, CompactPositiveKeepsPositiveValuesInOrder) {
    weft::Module sim{"spec_compact"};
    auto compact_positive =
        sim.kernel("compact_positive", {"values", "count", "compacted"},
                   [](weft::Array<float> values, weft::Array<int> count, weft::Array<float> compacted) {
                       auto tid = weft::tid();
                       auto v = values[tid];
                       weft::if_(v > 0.0f, [&] {
                           auto slot = weft::atomic_add(count, 0, 1);
                           compacted[slot] = v;
                       });
                   });

    const int n = 1000;
    const auto host_values = quarter_values(n);
    const auto expected = host_positive(host_values);
    ASSERT_GT(expected.size(), 0u);
    ASSERT_LT(expected.size(), static_cast<size_t>(n));

    auto values = weft::from_vector(host_values, dev());
    auto count = weft::zeros<int>(1, dev());
    auto compacted = weft::full<float>(n, -100.0f, dev());
    weft::launch(compact_positive, n, values, count, compacted);

    const int kept = count.to_vector()[0];
    ASSERT_EQ(kept, static_cast<int>(expected.size()));
    const auto all = compacted.to_vector();
    std::vector<float> got(all.begin(), all.begin() + kept);
    // Slots beyond the count are untouched.
    for (int i = kept; i < n; ++i) ASSERT_EQ(all[i], -100.0f) << "slot " << i;

    std::vector<float> got_sorted = got, expected_sorted = expected;
    std::sort(got_sorted.begin(), got_sorted.end());
    std::sort(expected_sorted.begin(), expected_sorted.end());
    EXPECT_EQ(got_sorted, expected_sorted) << "the multiset of kept values differs";
    if (weft::test::in_thread_order(sim))
        EXPECT_EQ(got, expected) << "one CPU worker runs threads in order, so slots follow thread order";

    // A counter that starts non-zero appends after the existing slots.
    ASSERT_LE(2 * kept, n) << "the second launch needs room for its slots";
    weft::launch(compact_positive, n, values, count, compacted);
    EXPECT_EQ(count.to_vector()[0], 2 * kept);
    const auto appended = compacted.to_vector();
    std::vector<float> second(appended.begin() + kept, appended.begin() + 2 * kept);
    if (weft::test::in_thread_order(sim)) EXPECT_EQ(second, expected);
    std::sort(second.begin(), second.end());
    EXPECT_EQ(second, expected_sorted);
}

// Manual deterministic accumulation: one thread per bin visits the inputs in order.
TEST(SpecExamples, ReduceByBinMatchesHostSumInInputOrder) {
    weft::Module sim{"spec_reduce_by_bin"};
    auto reduce_by_bin = sim.kernel(
        "reduce_by_bin", {"values", "bins", "out", "n"},
        [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out, weft::Int n) {
            auto bin_id = weft::tid();
            weft::Float total = 0.0f;
            weft::for_(n, [&](weft::Int i) { weft::if_(bins[i] == bin_id, [&] { total += values[i]; }); });
            out[bin_id] = total;
        });

    // Arbitrary floats: the kernel adds in input-index order, exactly as the host loop does.
    const int n = 500, num_bins = 9;
    std::vector<float> host_values(n);
    for (int i = 0; i < n; ++i) host_values[i] = 1.0f / static_cast<float>(i + 3) - 0.1f;
    const auto host_bins = spread_bins(n, num_bins);
    const auto expected = host_bin_sums(host_values, host_bins, num_bins);

    auto values = weft::from_vector(host_values, dev());
    auto bins = weft::from_vector(host_bins, dev());
    auto out = weft::full<float>(num_bins, 42.0f, dev());
    weft::launch(reduce_by_bin, num_bins, values, bins, out, n);
    EXPECT_EQ(out.to_vector(), expected);

    // The scalar bound is honoured: with n = 0 every bin is 0.
    weft::launch(reduce_by_bin, num_bins, values, bins, out, 0);
    EXPECT_EQ(out.to_vector(), std::vector<float>(num_bins, 0.0f));
}

// Manual slot allocation: count, array_scan, write.
class CountScanWrite : public ::testing::TestWithParam<bool> {};

TEST_P(CountScanWrite, MatchesSequentialFilter) {
    const bool inclusive = GetParam();
    weft::Module sim{"spec_count_scan_write"};
    auto count_positive = sim.kernel("count_positive", {"values", "counts"},
                                     [](weft::Array<float> values, weft::Array<int> counts) {
                                         auto tid = weft::tid();
                                         counts[tid] = weft::cast<int32_t>(values[tid] > 0.0f);
                                     });
    auto write_positive =
        sim.kernel("write_positive", {"values", "offsets", "out"},
                   [](weft::Array<float> values, weft::Array<int> offsets, weft::Array<float> out) {
                       auto tid = weft::tid();
                       weft::if_(values[tid] > 0.0f, [&] { out[offsets[tid]] = values[tid]; });
                   });
    // With an inclusive scan the slot is offsets[tid] - 1.
    auto write_positive_inclusive =
        sim.kernel("write_positive_inclusive", {"values", "offsets", "out"},
                   [](weft::Array<float> values, weft::Array<int> offsets, weft::Array<float> out) {
                       auto tid = weft::tid();
                       weft::if_(values[tid] > 0.0f, [&] { out[offsets[tid] - 1] = values[tid]; });
                   });

    const int n = 777;
    const auto host_values = quarter_values(n);
    const auto expected = host_positive(host_values);
    auto values = weft::from_vector(host_values, dev());
    auto counts = weft::empty<int>(n, dev());
    auto offsets = weft::empty<int>(n, dev());
    auto compacted = weft::full<float>(n, -100.0f, dev());

    weft::launch(count_positive, n, values, counts);
    const auto host_counts = counts.to_vector();
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(host_counts[i], host_values[i] > 0.0f ? 1 : 0) << "counts[" << i << "]";

    weft::array_scan(counts, offsets, inclusive);
    const auto host_offsets = offsets.to_vector();
    int final_count = 0;
    if (inclusive) {
        weft::launch(write_positive_inclusive, n, values, offsets, compacted);
        final_count = host_offsets[n - 1];
    } else {
        weft::launch(write_positive, n, values, offsets, compacted);
        final_count = host_offsets[n - 1] + host_counts[n - 1];  // the spec's final count
    }
    ASSERT_EQ(final_count, static_cast<int>(expected.size()));
    const auto all = compacted.to_vector();
    EXPECT_EQ(std::vector<float>(all.begin(), all.begin() + final_count), expected);
    for (int i = final_count; i < n; ++i) ASSERT_EQ(all[i], -100.0f) << "slot " << i;
}

INSTANTIATE_TEST_SUITE_P(SpecExamples, CountScanWrite, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Inclusive" : "Exclusive"; });

// A data-dependent loop bound with an atomic inside.
TEST(SpecExamples, LoopAccumulateAddsEachValueLoopCountTimes) {
    weft::Module sim{"spec_loop_accumulate"};
    auto loop_accumulate = sim.kernel(
        "loop_accumulate", {"values", "loop_counts", "out"},
        [](weft::Array<float> values, weft::Array<int> loop_counts, weft::Array<float> out) {
            auto tid = weft::tid();
            weft::for_(loop_counts[tid], [&](weft::Int) { weft::atomic_add(out, 0, values[tid]); });
        });

    const int n = 300;
    std::vector<float> host_values(n);
    std::vector<int> host_counts(n);
    float expected = 0.0f;
    for (int i = 0; i < n; ++i) {
        host_values[i] = 0.5f * static_cast<float>(i % 9) - 1.0f;
        host_counts[i] = i % 5;  // includes zero-trip loops
        expected += host_values[i] * static_cast<float>(host_counts[i]);
    }
    auto values = weft::from_vector(host_values, dev());
    auto loop_counts = weft::from_vector(host_counts, dev());
    auto out = weft::zeros<float>(1, dev());
    weft::launch(loop_accumulate, n, values, loop_counts, out);
    EXPECT_EQ(out.to_vector()[0], expected);
}

// array_scan on its own.
TEST(ArrayScan, Int32InclusiveAndExclusive) {
    const std::vector<int> in_host = {3, -1, 4, 1, -5, 9, 2, 6, 0, 5};
    auto in = weft::from_vector(in_host, dev());
    auto out = weft::full<int>(static_cast<int64_t>(in_host.size()), 99, dev());

    std::vector<int> inclusive(in_host.size()), exclusive(in_host.size());
    std::inclusive_scan(in_host.begin(), in_host.end(), inclusive.begin());
    std::exclusive_scan(in_host.begin(), in_host.end(), exclusive.begin(), 0);

    weft::array_scan(in, out, /*inclusive=*/true);
    EXPECT_EQ(out.to_vector(), inclusive);
    weft::array_scan(in, out, /*inclusive=*/false);
    EXPECT_EQ(out.to_vector(), exclusive);
    EXPECT_EQ(out.to_vector()[0], 0);
    // The default is inclusive.
    weft::array_scan(in, out);
    EXPECT_EQ(out.to_vector(), inclusive);
    EXPECT_EQ(in.to_vector(), in_host) << "the input is left alone";
}

TEST(ArrayScan, Float32InclusiveAndExclusiveLeftToRight) {
    WEFT_SKIP_UNLESS_CPU();  // a GPU scan has a fixed order of its own; see ExactFloat32
    std::vector<float> in_host(1000);
    for (size_t i = 0; i < in_host.size(); ++i) in_host[i] = 1.0f / static_cast<float>(i + 1);
    // Left-to-right accumulation in float, as documented.
    std::vector<float> inclusive(in_host.size()), exclusive(in_host.size());
    float running = 0.0f;
    for (size_t i = 0; i < in_host.size(); ++i) {
        exclusive[i] = running;
        running += in_host[i];
        inclusive[i] = running;
    }
    auto in = weft::from_vector(in_host, dev());
    auto out = weft::empty<float>(static_cast<int64_t>(in_host.size()), dev());
    weft::array_scan(in, out, true);
    EXPECT_EQ(out.to_vector(), inclusive);
    weft::array_scan(in, out, false);
    EXPECT_EQ(out.to_vector(), exclusive);
}

// Values whose prefix sums are exact in any order, so every device agrees bit for bit.
TEST(ArrayScan, ExactFloat32OnEveryDevice) {
    const int n = 5000;
    const auto in_host = quarter_values(n);
    std::vector<float> inclusive(n), exclusive(n);
    float running = 0.0f;
    for (int i = 0; i < n; ++i) {
        exclusive[i] = running;
        running += in_host[i];
        inclusive[i] = running;
    }
    auto in = weft::from_vector(in_host, dev());
    auto out = weft::empty<float>(n, dev());
    weft::array_scan(in, out, true);
    EXPECT_EQ(out.to_vector(), inclusive);
    weft::array_scan(in, out, false);
    EXPECT_EQ(out.to_vector(), exclusive);
    weft::array_scan(in, in, true);
    EXPECT_EQ(in.to_vector(), inclusive);
}

TEST(ArrayScan, InPlace) {
    const std::vector<int> host = {1, 2, 3, 4, 5};
    auto a = weft::from_vector(host, dev());
    weft::array_scan(a, a, true);
    EXPECT_EQ(a.to_vector(), (std::vector<int>{1, 3, 6, 10, 15}));
    auto b = weft::from_vector(host, dev());
    weft::array_scan(b, b, false);
    EXPECT_EQ(b.to_vector(), (std::vector<int>{0, 1, 3, 6, 10}));
    auto f = weft::from_vector(std::vector<float>{0.5f, 0.25f, -1.0f, 2.0f}, dev());
    weft::array_scan(f, f, false);
    EXPECT_EQ(f.to_vector(), (std::vector<float>{0.0f, 0.5f, 0.75f, -0.25f}));
}

TEST(ArrayScan, SingleElementAndEmpty) {
    auto one = weft::from_vector(std::vector<int>{7}, dev());
    auto out = weft::full<int>(1, 5, dev());
    weft::array_scan(one, out, false);
    EXPECT_EQ(out.to_vector(), std::vector<int>{0});
    weft::array_scan(one, out, true);
    EXPECT_EQ(out.to_vector(), std::vector<int>{7});
    auto empty_in = weft::empty<int>(0, dev());
    auto empty_out = weft::empty<int>(0, dev());
    EXPECT_NO_THROW(weft::array_scan(empty_in, empty_out, true));
}

TEST(ArrayScan, RejectsDtypeMismatch) {
    auto in = weft::zeros<int>(8, dev());
    auto out = weft::zeros<float>(8, dev());
    EXPECT_THROW(weft::array_scan(in, out), weft::Error);
    EXPECT_THROW(weft::array_scan(out, in), weft::Error);
}

TEST(ArrayScan, RejectsSizeMismatch) {
    auto in = weft::zeros<int>(8, dev());
    auto out = weft::zeros<int>(7, dev());
    EXPECT_THROW(weft::array_scan(in, out), weft::Error);
    auto in2d = weft::zeros<int>({2, 4}, dev());
    auto out1d = weft::zeros<int>(8, dev());
    EXPECT_THROW(weft::array_scan(in2d, out1d), weft::Error) << "a 2-D array is not scanned";
}

TEST(ArrayScan, RejectsUnsupportedDtypes) {
    auto d_in = weft::zeros<double>(4, dev());
    auto d_out = weft::zeros<double>(4, dev());
    EXPECT_THROW(weft::array_scan(d_in, d_out), weft::Error);
    auto l_in = weft::zeros<int64_t>(4, dev());
    auto l_out = weft::zeros<int64_t>(4, dev());
    EXPECT_THROW(weft::array_scan(l_in, l_out), weft::Error);
    try {
        weft::array_scan(d_in, d_out);
        FAIL() << "expected weft::Error";
    } catch (const weft::Error& e) {
        EXPECT_NE(std::string(e.what()).find("float64"), std::string::npos) << e.what();
    }
}

TEST(ArrayScan, RejectsDefaultConstructedArrays) {
    weft::AnyArray none;
    auto out = weft::zeros<int>(4, dev());
    EXPECT_THROW(weft::array_scan(none, out), weft::Error);
    EXPECT_THROW(weft::array_scan(out, none), weft::Error);
}

}  // namespace
