// The compact strategy's arithmetic (src/device/deterministic.h), run on the host exactly as the
// kernels run it: against the exact strategy's words bit for bit and against the oracle, with
// spill blocks full of garbage (as device memory is), and from several threads at once.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "support/exact_sum.hpp"

namespace {

using weft::test::exact_sum;
using weft::test::same_value;

// One slot under the compact strategy and one under the exact strategy, fed the same values.
struct TwoSlots {
    explicit TwoSlots(bool carrying) : spill(wf::kSpillWords), words(wf::Exact<float>::kWords, 0) {
        std::mt19937_64 garbage(99);
        for (auto& w : spill) w = static_cast<wf::i64>(garbage());
        compact.cells = &cell;
        compact.spill = spill.data();
        compact.carrying = carrying ? 1 : 0;
        exact.words = words.data();
        exact.flags = &flags;
        exact.carrying = 1;  // so that any number of contributions stays exact
    }
    void add(float v) {
        wf::Ctx ctx{};
        wf::det_add_to_slot<float>(ctx, &compact, 0, v);
        wf::det_add_to_slot<float>(ctx, &exact, 0, v);
    }
    // Both resolved into a target holding `initial` (as the runtimes do: an untouched slot keeps it).
    template <class T>
    std::pair<T, T> resolve(T initial) const {
        bool touched = flags != 0;
        for (wf::i64 w : words) touched = touched || w != 0;
        const T by_exact = touched ? wf::resolve_sum<T>(words.data(), flags, initial) : initial;
        const T by_compact = cell.meta != 0 ? wf::resolve_compact<T>(cell, spill.data(), initial) : initial;
        return {by_compact, by_exact};
    }

    wf::CompactCell cell{};
    std::vector<wf::i64> spill;
    std::vector<wf::i64> words;
    wf::u32 flags = 0;
    wf::DetTarget compact{};
    wf::DetTarget exact{};
};

template <class T>
uint64_t bits_of(T v) {
    if constexpr (sizeof(T) == 2)
        return v.bits;
    else
        return std::bit_cast<uint32_t>(v);
}

// A float with a random sign whose exponent field is uniform over [lo, hi] (0: subnormal or zero;
// 255: inf or NaN excluded) and a random mantissa.
float random_float(std::mt19937_64& rng, int lo, int hi) {
    const auto e = static_cast<uint32_t>(lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)));
    const uint32_t bits =
        (static_cast<uint32_t>(rng() & 1) << 31) | (e << 23) | static_cast<uint32_t>(rng() & 0x7fffff);
    return std::bit_cast<float>(bits);
}

// The generators of one slot's contributions.
using Generator = std::function<std::vector<float>(std::mt19937_64&)>;

std::vector<std::pair<const char*, Generator>> generators() {
    auto uniform = [](std::mt19937_64& rng) {
        std::vector<float> v(1 + rng() % 40);
        for (float& x : v) x = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        return v;
    };
    auto anywhere = [](std::mt19937_64& rng) {  // every exponent, subnormals included
        std::vector<float> v(1 + rng() % 40);
        for (float& x : v) x = random_float(rng, 0, 254);
        return v;
    };
    auto near = [](std::mt19937_64& rng) {  // exponents within a few of one another: the window
        const int centre = 20 + static_cast<int>(rng() % 200);
        std::vector<float> v(1 + rng() % 60);
        for (float& x : v) x = random_float(rng, centre - 12, centre + 12);
        return v;
    };
    auto cancelling = [](std::mt19937_64& rng) {  // x and -x, in any order, with a tiny remainder
        std::vector<float> v;
        for (int i = 0; i < 10; ++i) {
            const float x = random_float(rng, 1, 254);
            v.push_back(x);
            v.push_back(-x);
        }
        if (rng() % 2) v.push_back(random_float(rng, 0, 3));
        std::shuffle(v.begin(), v.end(), rng);
        return v;
    };
    auto tiny_first = [](std::mt19937_64& rng) {  // the anchor set low, then large values: spills
        std::vector<float> v{random_float(rng, 0, 10)};
        for (int i = 0; i < 20; ++i) v.push_back(random_float(rng, 100, 254));
        return v;
    };
    auto huge_first = [](std::mt19937_64& rng) {  // the anchor set high, then small values: spills
        std::vector<float> v{random_float(rng, 240, 254)};
        for (int i = 0; i < 20; ++i) v.push_back(random_float(rng, 0, 160));
        return v;
    };
    auto overflowing = [](std::mt19937_64& rng) {  // sums past the largest float, or back from it
        const float m = std::numeric_limits<float>::max();
        std::vector<float> v{m, m, m};
        if (rng() % 2) v.insert(v.end(), {-m, -m, -m, std::nextafter(m, 0.0f)});
        std::shuffle(v.begin(), v.end(), rng);
        return v;
    };
    auto specials = [](std::mt19937_64& rng) {  // NaN, infinities and zeros among ordinary values
        const float pool[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              0.0f,
                              -0.0f,
                              1.5f,
                              -2.25f,
                              std::numeric_limits<float>::denorm_min()};
        std::vector<float> v(1 + rng() % 6);
        for (float& x : v) x = pool[rng() % 8];
        return v;
    };
    auto zeros = [](std::mt19937_64& rng) {  // only signed zeros
        std::vector<float> v(1 + rng() % 4);
        for (float& x : v) x = rng() % 2 ? 0.0f : -0.0f;
        return v;
    };
    return {{"uniform", uniform},         {"anywhere", anywhere},     {"near", near},
            {"cancelling", cancelling},   {"tiny first", tiny_first}, {"huge first", huge_first},
            {"overflowing", overflowing}, {"specials", specials},     {"zeros", zeros}};
}

std::vector<float> initial_values(std::mt19937_64& rng) {
    return {0.0f,
            -0.0f,
            1.0f,
            random_float(rng, 0, 254),
            random_float(rng, 0, 2),
            std::numeric_limits<float>::infinity(),
            std::bit_cast<float>(0x7fc01234u),  // a NaN with a payload
            -std::numeric_limits<float>::max()};
}

TEST(DeterministicCompact, EveryGeneratorMatchesExactWordsAndTheOracle) {
    std::mt19937_64 rng(2023);
    for (const auto& [name, generate] : generators()) {
        SCOPED_TRACE(name);
        for (int round = 0; round < 400; ++round) {
            const std::vector<float> values = generate(rng);
            for (bool carrying : {false, true}) {
                TwoSlots s(carrying);
                for (float v : values) s.add(v);
                for (float initial : initial_values(rng)) {
                    const auto [compact, exact] = s.resolve(initial);
                    ASSERT_EQ(bits_of(compact), bits_of(exact))
                        << "initial " << initial << ", round " << round;
                    if (!std::isnan(initial)) ASSERT_TRUE(same_value(compact, exact_sum(initial, values)));
                    // Half-precision targets keep float32's state and round once, to their type.
                    const auto [h_compact, h_exact] = s.resolve(wf::f16(initial));
                    ASSERT_EQ(bits_of(h_compact), bits_of(h_exact)) << "float16, round " << round;
                    const auto [b_compact, b_exact] = s.resolve(wf::bf16(initial));
                    ASSERT_EQ(bits_of(b_compact), bits_of(b_exact)) << "bfloat16, round " << round;
                }
            }
        }
    }
}

// Contributions that cancel to exactly zero leave the element's bits (a NaN keeps its payload),
// whichever way the state holds the zero: every strategy decides from the value.
TEST(DeterministicCompact, ContributionsThatCancelLeaveTheElementAlone) {
    const float payload = std::bit_cast<float>(0x7fc01234u);
    TwoSlots s(false);
    for (float v : {3.0f, 1e30f, -3.0f, -1e30f}) s.add(v);
    const auto [compact, exact] = s.resolve(payload);
    EXPECT_EQ(std::bit_cast<uint32_t>(compact), 0x7fc01234u);
    EXPECT_EQ(std::bit_cast<uint32_t>(exact), 0x7fc01234u);
    // The exact words can hold a zero sum as nonzero words: 2^31 + 2^31 units in word 0 and
    // -2^32 units as -1 in word 1. Before, such a slot resolved to the canonical NaN.
    std::vector<wf::i64> words(wf::Exact<float>::kWords, 0);
    words[0] = wf::i64{1} << 32;
    words[1] = -1;
    EXPECT_EQ(std::bit_cast<uint32_t>(wf::resolve_sum<float>(words.data(), 0, payload)), 0x7fc01234u);
}

// 2^23 contributions at the top of the window: without carrying the window would pass 2^63.
TEST(DeterministicCompact, AWindowCarriesIntoItsSpill) {
    TwoSlots s(true);
    s.add(1.0f);  // the anchor: 8 bits below 1.0's lowest bit
    const float top = std::bit_cast<float>(std::bit_cast<uint32_t>(256.0f) | 0x7fffffu);  // 16 bits up
    const int n = 1 << 23;
    for (int i = 0; i < n; ++i) s.add(top);
    EXPECT_NE(s.cell.meta & wf::kSpillReady, 0u) << "the window never carried";
    const auto [compact, exact] = s.resolve(0.0f);
    EXPECT_EQ(std::bit_cast<uint32_t>(compact), std::bit_cast<uint32_t>(exact));
    const double want = 1.0 + static_cast<double>(top) * n;  // exact in a double: 24 + 23 bits
    EXPECT_EQ(compact, static_cast<float>(want));
}

// The top spill word flags the slot where the exact strategy's top word would: a running sum of
// 2^318 units.
TEST(DeterministicCompact, TheTopSpillWordFlagsASumOutOfRange) {
    wf::CompactCell cell{};
    std::vector<wf::i64> block(wf::kSpillWords, 0);
    cell.meta = wf::kSpillClaimed | wf::kSpillReady;
    wf::spill_add(&cell, block.data(), 1, 317);  // 2^317: still in range
    EXPECT_EQ(cell.meta & wf::kFlagOverflow, 0u);
    wf::spill_add(&cell, block.data(), 1, 317);  // 2^318
    EXPECT_NE(cell.meta & wf::kFlagOverflow, 0u);
}

// Threads racing to anchor a slot, to claim and zero its spill block, and to carry its window.
TEST(DeterministicCompact, ConcurrentContributionsAreExact) {
    constexpr int kThreads = 8;
    constexpr int kSlots = 3;
    std::mt19937_64 rng(5);
    for (int round = 0; round < 20; ++round) {
        std::vector<std::vector<float>> per_thread(kThreads);
        std::vector<std::vector<float>> per_slot(kSlots);
        for (int t = 0; t < kThreads; ++t)
            for (int i = 0; i < 3000; ++i)
                per_thread[t].push_back(random_float(rng, round % 2 ? 0 : 120, 140));
        std::vector<wf::CompactCell> cells(kSlots);
        std::vector<wf::i64> spill(kSlots * wf::kSpillWords);
        for (auto& w : spill) w = static_cast<wf::i64>(rng());
        wf::DetTarget target{};
        target.cells = cells.data();
        target.spill = spill.data();
        target.carrying = 1;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                wf::Ctx ctx{};
                for (size_t i = 0; i < per_thread[t].size(); ++i)
                    wf::det_add_to_slot<float>(ctx, &target, static_cast<wf::i64>(i % kSlots),
                                               per_thread[t][i]);
            });
        for (auto& th : threads) th.join();
        for (int t = 0; t < kThreads; ++t)
            for (size_t i = 0; i < per_thread[t].size(); ++i)
                per_slot[i % kSlots].push_back(per_thread[t][i]);
        for (int slot = 0; slot < kSlots; ++slot) {
            const float got =
                wf::resolve_compact<float>(cells[slot], spill.data() + slot * wf::kSpillWords, 0.0f);
            EXPECT_TRUE(same_value(got, exact_sum(0.0f, per_slot[slot])))
                << "round " << round << " slot " << slot;
        }
    }
}

// Threads released together onto fresh slots, without carrying: each slot's anchor is set by
// whichever contribution comes first (first_contribution), the others land in its window or
// spill. Wide exponents make the anchor matter: most contributions spill, from either side of
// it. Resolved slot by slot as the GPU's resolve does (resolve_compact_slot): exact, cells left
// zero, and a slot nothing reached keeps its bits.
TEST(DeterministicCompact, ContributionsRacingToAnchorFreshSlotsAreExact) {
    constexpr int kThreads = 4;
    constexpr int kSlots = 64;   // the last one gets no contribution
    constexpr int kPerSlot = 4;  // per thread
    std::mt19937_64 rng(14);
    for (int round = 0; round < 40; ++round) {
        const int lo = round % 3 == 0 ? 126 : 96;
        const int hi = round % 3 == 0 ? 129 : 160;
        std::vector<std::vector<float>> per_thread(kThreads);
        for (auto& values : per_thread)
            for (int i = 0; i < (kSlots - 1) * kPerSlot; ++i) values.push_back(random_float(rng, lo, hi));
        std::vector<wf::CompactCell> cells(kSlots);
        std::vector<wf::i64> spill(kSlots * wf::kSpillWords);
        for (auto& w : spill) w = static_cast<wf::i64>(rng());
        std::vector<float> out(kSlots);
        for (float& v : out) v = random_float(rng, 100, 130);
        out[kSlots - 1] = std::bit_cast<float>(0x7fc01234u);  // untouched: keeps its payload
        const std::vector<float> initial = out;
        wf::DetTarget target{};
        target.base = reinterpret_cast<char*>(out.data());
        target.count = kSlots;
        target.cells = cells.data();
        target.spill = spill.data();
        std::atomic<int> ready{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                ready.fetch_add(1);
                while (ready.load() < kThreads) std::this_thread::yield();
                wf::Ctx ctx{};
                // Every thread starts at slot 0, so that first contributions collide.
                for (size_t i = 0; i < per_thread[t].size(); ++i)
                    wf::det_add(ctx, &target, out.data() + i % (kSlots - 1), per_thread[t][i]);
            });
        for (auto& th : threads) th.join();
        for (int slot = 0; slot < kSlots; ++slot) wf::resolve_compact_slot<float>(target, slot, true);
        for (int slot = 0; slot < kSlots - 1; ++slot) {
            std::vector<float> values;
            for (const auto& mine : per_thread)
                for (size_t i = slot; i < mine.size(); i += kSlots - 1) values.push_back(mine[i]);
            EXPECT_TRUE(same_value(out[slot], exact_sum(initial[slot], values)))
                << "round " << round << " slot " << slot;
            EXPECT_EQ(cells[slot].window, 0);
            EXPECT_EQ(cells[slot].meta, 0u);
        }
        EXPECT_EQ(std::bit_cast<uint32_t>(out[kSlots - 1]), 0x7fc01234u);
    }
}

// A strided target (every other float of an array): resolve_compact_slot finds each slot's
// element from the target's strides, and leaves the floats between them alone.
TEST(DeterministicCompact, AStridedTargetResolvesIntoItsOwnElements) {
    constexpr int kSlots = 50;
    std::vector<float> array(2 * kSlots, 7.0f);
    std::vector<wf::CompactCell> cells(kSlots);
    std::vector<wf::i64> spill(kSlots * wf::kSpillWords, -1);
    wf::DetTarget target{};
    target.base = reinterpret_cast<char*>(array.data());
    target.count = kSlots;
    target.dims = 1;
    target.stride[0] = 2 * sizeof(float);
    target.extent[0] = kSlots;
    target.inverse[0] = 1.0 / static_cast<double>(target.stride[0]);
    target.cells = cells.data();
    target.spill = spill.data();
    std::mt19937_64 rng(3);
    std::vector<std::vector<float>> per_slot(kSlots);
    wf::Ctx ctx{};
    for (int i = 0; i < 2000; ++i) {
        const int slot = static_cast<int>(rng() % (kSlots - 1));  // the last slot stays untouched
        const float v = random_float(rng, 110, 140);
        per_slot[slot].push_back(v);
        wf::det_add(ctx, &target, array.data() + 2 * slot, v);
    }
    for (int slot = 0; slot < kSlots; ++slot) wf::resolve_compact_slot<float>(target, slot, true);
    for (int slot = 0; slot < kSlots; ++slot) {
        EXPECT_TRUE(same_value(array[2 * slot], exact_sum(7.0f, per_slot[slot]))) << "slot " << slot;
        EXPECT_EQ(array[2 * slot + 1], 7.0f) << "between slots " << slot << " and " << slot + 1;
    }
}

// The exact strategy's per-slot resolve (resolve_exact_slot): the words read once, the sum
// exact, words and flags cleaned when asked, and an untouched slot left alone.
TEST(DeterministicCompact, ExactSlotsResolveOnceAndClean) {
    constexpr int kSlots = 40;
    std::mt19937_64 rng(8);
    for (bool clean : {false, true}) {
        std::vector<wf::i64> words(kSlots * wf::Exact<float>::kWords, 0);
        std::vector<wf::u32> flags(kSlots, 0);
        std::vector<float> out(kSlots, -0.0f);
        out[kSlots - 1] = std::bit_cast<float>(0x7fc01234u);
        wf::DetTarget target{};
        target.base = reinterpret_cast<char*>(out.data());
        target.count = kSlots;
        target.words = words.data();
        target.flags = flags.data();
        std::vector<std::vector<float>> per_slot(kSlots);
        wf::Ctx ctx{};
        for (int i = 0; i < 3000; ++i) {
            const int slot = static_cast<int>(rng() % (kSlots - 1));
            const float v = i % 500 == 0 ? 0.0f : random_float(rng, 0, 254);
            per_slot[slot].push_back(v);
            wf::det_add(ctx, &target, out.data() + slot, v);
        }
        for (int slot = 0; slot < kSlots; ++slot) wf::resolve_exact_slot<float>(target, slot, clean);
        for (int slot = 0; slot < kSlots - 1; ++slot) {
            EXPECT_TRUE(same_value(out[slot], exact_sum(-0.0f, per_slot[slot]))) << "slot " << slot;
        }
        EXPECT_EQ(std::bit_cast<uint32_t>(out[kSlots - 1]), 0x7fc01234u);
        bool zero = true;
        for (wf::i64 w : words) zero = zero && w == 0;
        for (wf::u32 f : flags) zero = zero && f == 0;
        EXPECT_EQ(zero, clean);
    }
}

}  // namespace
