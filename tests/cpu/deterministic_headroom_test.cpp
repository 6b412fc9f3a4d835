// Exact sums at and past a digit word's headroom (2^31 contributions): the digit functions that
// generated kernels and the resolve share, the launch's choice to carry, and a full launch.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/backend.hpp"
#include "runtime/det/accumulation.hpp"
#include "runtime/memory.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Int;

// A float32 value whose digit is large: its 2^31 + 256th addition overflows a word.
const float kHeavy = 2047.9998f;
// A float64 value with two large digits (all-ones significand, its lowest bit at bit 11 of a
// digit), so that a word also receives a carry from the one below in the resolve.
const double kHeavy64 = std::ldexp(static_cast<double>((uint64_t{1} << 53) - 1), -39);

// n * v, rounded once to nearest even (as an exact sum must be).
template <class T>
T exact_multiple(uint64_t n, T v) {
    constexpr int kDigits = std::numeric_limits<T>::digits;
    int exponent = 0;
    const T fraction = std::frexp(v, &exponent);
    const auto significand = static_cast<uint64_t>(std::ldexp(fraction, kDigits));
    const auto product = static_cast<T>(static_cast<unsigned __int128>(n) * significand);  // rounds once
    return std::ldexp(product, exponent - kDigits);
}

template <class T>
uint64_t bits(T v) {
    if constexpr (sizeof(T) == 4)
        return std::bit_cast<uint32_t>(v);
    else
        return std::bit_cast<uint64_t>(v);
}

// One slot of exact digits, as a launch's state holds it.
template <class T>
struct Slot {
    T element = 0;
    wf::i64 words[wf::Exact<T>::kWords] = {};
    wf::u32 flags = 0;
    wf::DetTarget target{};
    wf::Ctx ctx{};

    explicit Slot(bool carrying) {
        target.base = reinterpret_cast<char*>(&element);
        target.count = 1;
        target.carrying = carrying ? 1 : 0;
        target.words = words;
        target.flags = &flags;
    }
    // The words `n` additions of `v` leave (each digit added n times, not yet carried).
    void preload(uint64_t n, T v) {
        const wf::Digits d = wf::digits<T>(wf::split(v));
        for (int k = 0; k < 3; ++k) words[d.first + k] += d.d[k] * static_cast<wf::i64>(n);
    }
    void add(T v) { wf::accumulate<wf::OpAdd>(ctx, &target, &element, v); }
    T resolve() const { return wf::resolve_sum<T>(words, flags, element); }
};

// 2^31 additions of kHeavy fill its word to 2^63 - 2^40 (as uncarried launches leave it);
// 512 more pass 2^63.
const uint64_t kFull = uint64_t{1} << 31;

TEST(DigitWords, CarryingWordsStayExactPastTheirHeadroom) {
    Slot<float> slot(true);
    slot.preload(kFull, kHeavy);
    for (int i = 0; i < 512; ++i) slot.add(kHeavy);
    EXPECT_EQ(slot.flags, 0u);
    const float want = exact_multiple(kFull + 512, kHeavy);
    EXPECT_EQ(bits(slot.resolve()), bits(want)) << slot.resolve() << " instead of " << want;
}

TEST(DigitWords, CarryingSubtractionsStayExactPastTheirHeadroom) {
    Slot<float> slot(true);
    slot.preload(kFull, -kHeavy);
    for (int i = 0; i < 512; ++i) slot.add(-kHeavy);
    const float want = -exact_multiple(kFull + 512, kHeavy);
    EXPECT_EQ(bits(slot.resolve()), bits(want)) << slot.resolve() << " instead of " << want;
}

TEST(DigitWords, CarryingKeepsEveryWordBelow2To62) {
    Slot<double> slot(true);
    slot.preload(kFull - 1, kHeavy64);
    slot.add(kHeavy64);
    for (const wf::i64 w : slot.words) EXPECT_LT(w < 0 ? -w : w, wf::kCarryAt) << "a word was left uncarried";
    const double want = exact_multiple(kFull, kHeavy64);
    EXPECT_EQ(bits(slot.resolve()), bits(want)) << slot.resolve() << " instead of " << want;
}

// Without carrying (launches that cannot reach 2^31 contributions) words are added as they come;
// the resolve must be exact for words as full as 2^31 - 1 contributions make them, with the
// initial value's digits and the carry from the word below on top.
TEST(DigitWords, ResolveIsExactForFullUncarriedWords) {
    Slot<double> slot(false);
    slot.preload(kFull - 1, kHeavy64);
    slot.element = kHeavy64;
    const double want = exact_multiple(kFull, kHeavy64);
    EXPECT_EQ(bits(slot.resolve()), bits(want)) << slot.resolve() << " instead of " << want;
}

TEST(DigitWords, TheTopWordFlagsTheSlotInsteadOfWrapping) {
    Slot<float> slot(true);
    const int top = wf::Exact<float>::kWords - 1;
    wf::add_carrying(slot.words, top, wf::Exact<float>::kWords, wf::kCarryAt - 1, &slot.flags);
    EXPECT_EQ(slot.flags, 0u);
    wf::add_carrying(slot.words, top, wf::Exact<float>::kWords, 1, &slot.flags);
    EXPECT_EQ(slot.flags, wf::u32{wf::kFlagOverflow});
}

// Which launches carry: those that may reach 2^31 contributions to one target.
TEST(DigitWords, LaunchesThatMayReachTheHeadroomCarry) {
    auto carrying = [&](int64_t per_thread, bool dynamic, int64_t threads) {
        weft::plan::DetTarget t;
        t.records_per_thread = per_thread;
        t.dynamic = dynamic;
        auto array = weft::zeros<float>(16, weft::Device::cpu());
        const weft::runtime::det::LaunchSite site{"k", "f.cpp", 1, threads};
        const auto plans = weft::runtime::det::plan({t}, {&array}, {"out"}, weft::Options{}, site, false);
        return plans.at(0).carrying;
    };
    EXPECT_FALSE(carrying(1, false, 1 << 20)) << "one contribution per thread";
    EXPECT_FALSE(carrying(2, false, (int64_t{1} << 30) - 1));
    EXPECT_TRUE(carrying(2, false, int64_t{1} << 30)) << "2^31 contributions";
    EXPECT_TRUE(carrying(1, true, 1)) << "a data-dependent loop";
}

// A slot whose running sum left the words' range (its top word flagged, which takes some 2^42
// contributions of the largest float, so it is set here by hand) is reported at the resolve,
// naming the array; the target keeps its value.
TEST(DeterministicHeadroom, ASumBeyondTheWordsRangeIsReported) {
    const weft::Device dev = weft::test::test_device();
    weft::plan::DetTarget target;
    target.dynamic = true;  // carrying
    auto out = weft::full<float>(8, 1.5f, dev);
    const weft::runtime::det::LaunchSite site{"huge_sums", "huge.cpp", 7, 8};
    auto accumulation = weft::runtime::backend(dev).accumulation(
        weft::runtime::det::plan({target}, {&out}, {"out"}, weft::Options{}, site, false), site);
    wf::DetTarget state{};
    weft::detail::copy_bytes(&state, weft::Device::cpu(), accumulation->state(0), dev, sizeof state);
    ASSERT_EQ(state.carrying, 1);
    const wf::u32 flag = wf::kFlagOverflow;
    weft::detail::copy_bytes(state.flags + 3, dev, &flag, weft::Device::cpu(), sizeof flag);
    std::string message;
    try {
        accumulation->resolve();
        weft::synchronize(dev);  // a GPU reports at the next synchronization
    } catch (const weft::Error& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("huge.cpp:7"), std::string::npos) << message;
    EXPECT_NE(message.find("sum of 1 element(s) of array 'out' went beyond the exact accumulator's range"),
              std::string::npos)
        << message;
    EXPECT_EQ(out.to_vector(), std::vector<float>(8, 1.5f));
}

// The case, through a launch: more than 2^31 additions of a heavy value to one element
// (each thread adds it `trips` times in a loop the static estimate cannot bound).
TEST(DeterministicHeadroom, MoreThan2To31ContributionsToOneElement) {
    const weft::Device dev = weft::test::test_device();
    weft::Module m{"headroom", {.deterministic = weft::Deterministic::RunToRun}};
    auto add_many =
        m.kernel("add_many", {"trips", "value", "out"}, [](Int trips, weft::Float value, Array<float> out) {
            weft::for_(trips, [&](Int) { out[0] += value; });
        });
    const int threads = 1 << 16;
    const int trips = (1 << 15) + 8;  // 2^31 + 2^19 contributions
    auto out = weft::zeros<float>(1, dev);
    weft::launch(add_many, threads, trips, kHeavy, out);
    const float want = exact_multiple<float>(uint64_t{threads} * trips, kHeavy);
    const float got = out.to_vector()[0];
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << got << " instead of " << want;
}

}  // namespace
