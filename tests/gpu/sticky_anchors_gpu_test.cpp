// Sticky anchors on a GPU (docs/design/0025): the lanes of a warp racing on cells whose anchor
// was kept from the launch before, some adding to the window through the read-only array, others
// (outside the window, or special values) through the meta word and the spill: the CPU's bits.
// Direct launches small enough to resolve in their kernel leave the anchors to the resolve kernel
// on a fresh state and once in 16 launches.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cuda/context.hpp"
#include "support/deterministic_cases.hpp"

namespace {

using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::test::matches_oracle;
using weft::test::Op;
using weft::test::OpKernels;
using weft::test::oracle;
using weft::test::random_case;
using weft::test::run;
using weft::test::same_bits_all;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

// Launches into one target (its state cached, so each launch finds the anchors the one before
// kept), 64 consecutive threads per slot (two warps), the magnitudes moving from launch to
// launch: within the kept windows, half a window away (some spill), every exponent, special
// values, then back. Large enough (2^19 threads) to be resolved by the resolve kernel, which
// keeps anchors.
TEST(StickyAnchorsGpu, LanesRacingOnKeptAnchorsGiveTheCpusBits) {
    weft::Module m{
        "sticky_anchors_race",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Compact}};
    const OpKernels<float> kernels(m);
    constexpr int kSlots = 8192, kWrites = 1 << 19;
    const int ranges[][2] = {{-2, 2}, {-2, 2}, {6, 10}, {-30, 40}, {-2, 2}, {-2, 2}, {-12, -8}, {-2, 2}};
    auto out = weft::zeros<float>(kSlots, gpu);
    for (int launch = 0; launch < 8; ++launch) {
        SCOPED_TRACE("launch " + std::to_string(launch));
        auto c = random_case<float>("kept", kWrites, kSlots, ranges[launch][0], ranges[launch][1],
                                    500 + static_cast<uint64_t>(launch));
        for (size_t t = 0; t < c.index.size(); ++t) c.index[t] = static_cast<int>(t / 64 % kSlots);
        if (launch == 4)
            for (size_t t = 0; t < c.values.size(); t += 1001)
                c.values[t] = t % 3 == 0   ? std::numeric_limits<float>::quiet_NaN()
                              : t % 3 == 1 ? std::numeric_limits<float>::infinity()
                                           : 0.0f;
        weft::copy(out, weft::from_vector(c.initial, gpu));
        weft::launch(kernels.get(Op::Add), kWrites, weft::from_vector(c.values, gpu),
                     weft::from_vector(c.index, gpu), out);
        const std::vector<float> got = out.to_vector();
        EXPECT_TRUE(matches_oracle(got, oracle(Op::Add, c.initial, c.index, c.values)));
        EXPECT_TRUE(same_bits_all(got, run(kernels.get(Op::Add), c, cpu))) << "CPU vs GPU";
    }
}

// Whether the launches since the stream's last synchronization queued the compact resolve kernel.
bool queued_the_resolve_kernel() {
    const auto stream = weft::runtime::cuda::current_stream(0);
    std::lock_guard lock(stream->mutex);
    for (const std::string& k : stream->unsynchronized.names())
        if (k.find("(deterministic det_resolve_compact") != std::string::npos) return true;
    return false;
}

// One-wave direct launches into one compact target: the first (a fresh state) and every 16th
// after it are resolved by the resolve kernel, which keeps or forgets anchors; the others by the
// kernel itself, which keeps them as they are. The magnitudes move every few launches, so that
// anchors kept by the resolve kernel stop fitting; every launch gives the CPU's bits.
TEST(StickyAnchorsGpu, OneWaveLaunchesLeaveTheAnchorsToTheResolveKernelOnceIn16) {
    weft::Module m{
        "sticky_anchors_one_wave",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Compact}};
    const OpKernels<float> kernels(m);
    constexpr int kSlots = 16384, kWrites = 32768;  // one resident wave: resolved in the kernel
    auto out = weft::zeros<float>(kSlots, gpu);
    for (int launch = 0; launch < 36; ++launch) {
        SCOPED_TRACE("launch " + std::to_string(launch));
        const int centre = launch / 5 % 3 * 12 - 12;
        auto c = random_case<float>("one wave", kWrites, kSlots, centre - 3, centre + 3,
                                    900 + static_cast<uint64_t>(launch));
        weft::copy(out, weft::from_vector(c.initial, gpu));
        weft::synchronize(gpu);
        weft::launch(kernels.get(Op::Add), kWrites, weft::from_vector(c.values, gpu),
                     weft::from_vector(c.index, gpu), out);
        EXPECT_EQ(queued_the_resolve_kernel(), launch % 16 == 0);
        EXPECT_TRUE(same_bits_all(out.to_vector(), run(kernels.get(Op::Add), c, cpu))) << "CPU vs GPU";
    }
}

}  // namespace
