// Sticky anchors of the compact strategy (docs/design/0025): the resolve's state transition per
// slot, run on the host as the kernels run it, and launches into one cached target (direct and
// replayed) whose contributions' magnitudes move between launches, against the oracle.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "support/deterministic_cases.hpp"
#include "support/exact_sum.hpp"

namespace {

using weft::Array;
using weft::DeterministicStrategy;
using weft::test::exact_sum;
using weft::test::matches_oracle;
using weft::test::random_value;
using weft::test::same_bits_all;
using weft::test::same_value;

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kPayload = std::bit_cast<float>(0x7fc01234u);  // a NaN the element must keep

// The anchor a slot's first contribution `v` sets (kCompactBelow bits below its lowest bit).
int anchor_for(float v) {
    const wf::Split<float> s = wf::split(v);
    return s.position - wf::kCompactBelow;
}

wf::u32 anchored_meta(int anchor) {
    return wf::kAnchored | (static_cast<wf::u32>(anchor) << wf::kAnchorShift);
}

// A dense compact target of `n` slots over `out`, with its cells, spill blocks (garbage, as device
// memory is) and kept anchors (none, as the publishing kernel leaves them).
struct Target {
    explicit Target(int n)
        : out(n, 0.0f), cells(n), spill(static_cast<size_t>(n) * wf::kSpillWords), anchors(n, wf::kNoAnchor) {
        std::mt19937_64 garbage(41);
        for (auto& w : spill) w = static_cast<wf::i64>(garbage());
        t.base = reinterpret_cast<char*>(out.data());
        t.count = n;
        t.cells = cells.data();
        t.spill = spill.data();
        t.anchors = anchors.data();
    }
    // One launch: `values[s]` added to slot s (by `threads` threads at once), then every slot
    // resolved by the resolve kernel (`write_anchors`) or by the kernel itself.
    void launch(const std::vector<std::vector<float>>& values, bool write_anchors, int threads = 1) {
        std::vector<std::thread> pool;
        for (int k = 0; k < threads; ++k)
            pool.emplace_back([&, k] {
                wf::Ctx ctx{};
                for (size_t s = 0; s < values.size(); ++s)
                    for (size_t i = static_cast<size_t>(k); i < values[s].size();
                         i += static_cast<size_t>(threads))
                        wf::det_add(ctx, &t, out.data() + s, values[s][i]);
            });
        for (auto& th : pool) th.join();
        for (wf::i64 s = 0; s < t.count; ++s) wf::resolve_compact_slot<float>(t, s, write_anchors);
    }
    // What every launch must find: no kept anchor and the cell all zero, or kept anchor a, the
    // window 0 and the meta word kAnchored | a.
    ::testing::AssertionResult ready() const {
        for (size_t s = 0; s < cells.size(); ++s) {
            const wf::u32 want = anchors[s] == wf::kNoAnchor ? 0u : anchored_meta(anchors[s]);
            if (cells[s].window != 0 || cells[s].meta != want)
                return ::testing::AssertionFailure()
                       << "slot " << s << ": window " << cells[s].window << ", meta " << cells[s].meta
                       << ", kept anchor " << int(anchors[s]);
        }
        return ::testing::AssertionSuccess();
    }

    std::vector<float> out;
    std::vector<wf::CompactCell> cells;
    std::vector<wf::i64> spill;
    std::vector<wf::u8> anchors;
    wf::DetTarget t{};
};

// Per case, what a slot's cell and kept anchor are after the resolve: a slot whose contributions
// all went to its window keeps (or newly gets) its anchor, one that spilled forgets it (and
// anchors afresh next launch), a flagged one keeps it; the kernel resolving itself never changes
// the array and leaves each cell as the array says.
TEST(DeterministicAnchors, TheResolveKeepsAnAnchorOnlyWhereTheWindowTookEverything) {
    for (const bool write_anchors : {true, false}) {
        SCOPED_TRACE(write_anchors ? "the resolve kernel" : "the kernel resolving itself");
        Target a(8);
        // Launch 1: slots 1-6 anchored by 1.0, slot 7 reached only by a NaN, slot 0 by nothing.
        std::vector<std::vector<float>> first(8, std::vector<float>{1.0f});
        first[0] = {};
        first[7] = {kNan};
        a.launch(first, true);
        const int one = anchor_for(1.0f);
        for (int s = 1; s <= 6; ++s) {
            EXPECT_EQ(a.anchors[s], one) << "slot " << s;
            EXPECT_EQ(a.out[s], 1.0f) << "slot " << s;
        }
        EXPECT_EQ(a.anchors[0], wf::kNoAnchor);
        EXPECT_EQ(a.anchors[7], wf::kNoAnchor) << "a special value sets no anchor";
        EXPECT_TRUE(a.ready());

        // Launch 2.
        a.out[1] = kPayload;
        const float huge = std::ldexp(1.0f, 40), tiny = 1e-30f;
        const std::vector<std::vector<float>> second = {
            {},             // 0: untouched, no anchor
            {},             // 1: untouched, anchor kept: the element keeps its bits
            {3.0f, 0.75f},  // 2: in the kept anchor's window
            {huge},         // 3: above the window: spills
            {kNan, 2.0f},   // 4: flagged, the rest in the window
            {tiny, 1.0f},   // 5: below the window: spills
            {0.5f, -0.5f},  // 6: in the window, cancelling: the element keeps its bits
            {4.0f},         // 7: first anchored now
        };
        const std::vector<float> before = a.out;
        a.launch(second, write_anchors);
        for (int s = 0; s < 8; ++s) {
            if (s == 1) continue;
            EXPECT_TRUE(same_value(a.out[s], exact_sum(before[s], second[s]))) << "slot " << s;
        }
        EXPECT_EQ(std::bit_cast<uint32_t>(a.out[1]), 0x7fc01234u);
        const int none = wf::kNoAnchor;
        const std::vector<int> want =
            write_anchors ? std::vector<int>{none, one, one, none, one, none, one, anchor_for(4.0f)}
                          : std::vector<int>{none, one, one, one, one, one, one, none};
        for (int s = 0; s < 8; ++s) EXPECT_EQ(a.anchors[s], want[s]) << "slot " << s;
        EXPECT_TRUE(a.ready());

        // Launch 3: a forgotten slot anchors afresh, at its new magnitude; the sums stay exact.
        const std::vector<float> third_before = a.out;
        const std::vector<std::vector<float>> third(8, std::vector<float>{huge, 1.5f * huge});
        a.launch(third, true);
        for (int s = 0; s < 8; ++s)
            EXPECT_TRUE(same_value(a.out[s], exact_sum(third_before[s], third[s]))) << "slot " << s;
        if (write_anchors) {
            EXPECT_EQ(a.anchors[3], anchor_for(huge)) << "the spilled slot anchored afresh";
        }
        EXPECT_TRUE(a.ready());
    }
}

// Many launches into one state, the contributions' magnitudes moving between them (small moves,
// jumps, every exponent at once, special values), resolved by either resolve, by several threads
// at once: every sum is the oracle's, and the state is ready for the next launch after each.
TEST(DeterministicAnchors, LaunchesIntoOneStateStayExactAsMagnitudesMove) {
    constexpr int kSlots = 96;
    std::mt19937_64 rng(25);
    Target a(kSlots);
    for (float& v : a.out) v = random_value<float>(rng, -10, 10);
    int kept_slots = 0;
    for (int launch = 0; launch < 60; ++launch) {
        const int centre = launch % 10 == 9 ? 0 : (launch / 4) * 7 % 50 - 25;  // drifts, then jumps
        const int spread = launch % 7 == 3 ? 100 : 3;
        std::vector<std::vector<float>> values(kSlots);
        for (int s = 0; s < kSlots; ++s) {
            values[s].resize(rng() % 24);
            for (float& v : values[s]) v = random_value<float>(rng, centre - spread, centre + spread);
            if (launch % 11 == 5 && s % 13 == 0 && !values[s].empty()) values[s][0] = s % 2 ? kInf : 0.0f;
        }
        for (wf::u8 k : a.anchors) kept_slots += k != wf::kNoAnchor;
        const std::vector<float> before = a.out;
        a.launch(values, launch % 3 != 0, 3);
        for (int s = 0; s < kSlots; ++s)
            ASSERT_TRUE(same_value(a.out[s], exact_sum(before[s], values[s])))
                << "launch " << launch << ", slot " << s;
        ASSERT_TRUE(a.ready()) << "after launch " << launch;
        for (int s = 0; s < kSlots; ++s)  // an infinity stays: the next launches add to finite values
            if (!std::isfinite(a.out[s])) a.out[s] = 1.0f;
    }
    EXPECT_GT(kept_slots, 60 * kSlots / 4) << "launches found anchors kept";
}

// The same transition as a property over many random launches, each slot modelled on its own:
// its anchor is the kept one or else its first finite contribution's; a slot any of whose
// contributions lay outside that anchor's window spilled and keeps no anchor, one whose
// contributions all fit keeps it. (One thread, so "first" is the order of `values`.)
TEST(DeterministicAnchors, EverySpilledSlotForgetsItsAnchorAndNoOtherDoes) {
    constexpr int kSlots = 128;
    std::mt19937_64 rng(77);
    Target a(kSlots);
    int spilled = 0, kept = 0;
    for (int launch = 0; launch < 80; ++launch) {
        const int centre = static_cast<int>(rng() % 61) - 30;
        std::vector<std::vector<float>> values(kSlots);
        std::vector<int> want(kSlots);
        for (int s = 0; s < kSlots; ++s) {
            const int spread = static_cast<int>(rng() % 4) == 0 ? 40 : static_cast<int>(rng() % 6);
            values[s].resize(rng() % 6);
            for (float& v : values[s]) v = random_value<float>(rng, centre - spread, centre + spread);
            if (!values[s].empty() && rng() % 17 == 0) values[s][rng() % values[s].size()] = kNan;
            int anchor = a.anchors[s] == wf::kNoAnchor ? -1 : a.anchors[s];
            bool outside = false;
            for (const float v : values[s]) {
                const wf::Split<float> p = wf::split(v);
                if (!std::isfinite(v) || p.significand == 0) continue;
                if (anchor < 0) anchor = std::max(p.position - wf::kCompactBelow, 0);
                const int shift = p.position - anchor;
                outside = outside || shift < 0 || shift > wf::kCompactSpan;
            }
            want[s] = anchor < 0 || outside ? wf::kNoAnchor : anchor;
            spilled += outside;
            kept += !outside && anchor >= 0 && !values[s].empty();
        }
        const std::vector<float> before = a.out;
        a.launch(values, true);
        for (int s = 0; s < kSlots; ++s) {
            ASSERT_EQ(a.anchors[s], want[s]) << "launch " << launch << ", slot " << s;
            ASSERT_TRUE(same_value(a.out[s], exact_sum(before[s], values[s])))
                << "launch " << launch << ", slot " << s;
            if (!std::isfinite(a.out[s])) a.out[s] = 0.0f;
        }
        ASSERT_TRUE(a.ready()) << "after launch " << launch;
    }
    EXPECT_GT(spilled, 80 * kSlots / 10) << "launches where a slot spilled";
    EXPECT_GT(kept, 80 * kSlots / 10) << "launches where a slot's window took everything";
}

// out[index[t]] += values[t] under the compact strategy.
struct CompactAdd {
    weft::Module module{"anchors_add",
                        {.deterministic = weft::Deterministic::RunToRun,
                         .deterministic_strategy = DeterministicStrategy::Compact}};
    weft::Kernel<Array<float>, Array<int>, Array<float>> kernel =
        module.kernel("anchors_add", {"values", "index", "out"},
                      [](Array<float> values, Array<int> index, Array<float> out) {
                          auto t = weft::tid();
                          weft::atomic_add(out, index[t], values[t]);
                      });
};

// Data set k of launches into one target: magnitudes that move from one set to the next.
std::vector<float> values_of(int k, int n, uint64_t seed) {
    const int ranges[][2] = {{-2, 2}, {-2, 2}, {30, 34}, {-40, -36}, {-2, 2}, {-60, 60}, {-2, 2}};
    const int* r = ranges[k % 7];
    std::mt19937_64 rng(seed + static_cast<uint64_t>(k));
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = random_value<float>(rng, r[0], r[1]);
    if (k % 7 == 4)  // special values among ordinary ones
        for (int i = 0; i < n; i += 997)
            v[static_cast<size_t>(i)] = i % 3 == 0 ? kNan : i % 3 == 1 ? -kInf : 0.0f;
    return v;
}

std::vector<int> indices_of(int n, int outputs, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int> index(static_cast<size_t>(n));
    for (int& i : index) i = static_cast<int>(rng() % static_cast<uint64_t>(outputs));
    return index;
}

// Direct launches into one target, large ones (on a GPU resolved by the resolve kernel, which
// keeps anchors) and small ones (resolved in the kernel, which keeps them as they are) in turn,
// the data's magnitudes moving: each launch gives the oracle's sums and the CPU's bits.
TEST(DeterministicAnchors, DirectLaunchesIntoOneTargetMatchTheOracle) {
    const weft::Device d = weft::test::test_device();
    const CompactAdd c;
    const int outputs = 60000;
    const int sizes[] = {1 << 19, 1 << 19, 1 << 14, 1 << 19, 1 << 14, 1 << 14, 1 << 19};
    auto out = weft::zeros<float>(outputs, d);
    std::mt19937_64 rng(31);
    for (int k = 0; k < 7; ++k) {
        SCOPED_TRACE("launch " + std::to_string(k));
        const int n = sizes[k];
        const std::vector<float> values = values_of(k, n, 100);
        const std::vector<int> index = indices_of(n, outputs, 200 + static_cast<uint64_t>(k % 2));
        std::vector<float> initial(static_cast<size_t>(outputs));
        for (float& v : initial) v = random_value<float>(rng, -4, 4);
        weft::copy(out, weft::from_vector(initial, d));
        weft::launch(c.kernel, n, weft::from_vector(values, d), weft::from_vector(index, d), out);
        const std::vector<float> got = out.to_vector();
        EXPECT_TRUE(matches_oracle(got, weft::test::oracle(weft::test::Op::Add, initial, index, values)));
        auto on_cpu = weft::from_vector(initial, weft::Device::cpu());
        weft::launch(c.kernel, n, weft::from_vector(values, weft::Device::cpu()),
                     weft::from_vector(index, weft::Device::cpu()), on_cpu);
        EXPECT_TRUE(same_bits_all(got, on_cpu.to_vector()));
    }
}

// A graph (zero the target, launch) replayed with new data between replays: each replay's sums
// are the oracle's, the graph's state (initialised once, at capture) keeping anchors from one
// replay to the next.
TEST(DeterministicAnchors, ReplaysWithChangingDataMatchTheOracle) {
    const weft::Device d = weft::test::test_device();
    const CompactAdd c;
    const int outputs = 60000, n = 1 << 19;
    const std::vector<int> index = indices_of(n, outputs, 300);
    auto values = weft::from_vector(values_of(0, n, 400), d);
    auto out = weft::zeros<float>(outputs, d);
    const auto index_d = weft::from_vector(index, d);
    const weft::Graph graph = weft::capture(d, [&] {
        out.zero_();
        weft::launch(c.kernel, n, values, index_d, out);
    });
    const std::vector<float> zeros(static_cast<size_t>(outputs), 0.0f);
    for (int replay = 0; replay < 14; ++replay) {
        SCOPED_TRACE("replay " + std::to_string(replay));
        const std::vector<float> v = values_of(replay / 2, n, 400);  // each data set twice
        weft::copy(values, weft::from_vector(v, d));
        graph.launch();
        EXPECT_TRUE(
            matches_oracle(out.to_vector(), weft::test::oracle(weft::test::Op::Add, zeros, index, v)));
    }
}

}  // namespace
