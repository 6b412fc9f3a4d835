// Kernels of many deterministic atomic sites (issue 37): they compile in seconds (ctest gives this
// program a time-out, tests/CMakeLists.txt: a kernel of 108 sites took 39 s per module on the
// CPU and minutes in NVRTC when every site inlined the whole accumulation path), and the
// out-of-line path their sites call gives the bits of the inlined one.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>
#include <weft/weft.hpp>

#include "support/cache_fixture.hpp"
#include "support/exact_sum.hpp"
#include "support/stencil_scatter.hpp"
#include "support/test_device.hpp"

namespace weft::test {
namespace {

constexpr int kCells = kStencilGrid * kStencilGrid * kStencilGrid;

// The four grids of issue 37's scatter, as the exact sums of each cell's contributions (the
// kernel's float arithmetic replayed on the host, then test::exact_sum).
std::vector<std::vector<float>> expected_grids(const StencilParticles& p, int atomics) {
    const int w = stencil_width(atomics);
    std::vector<std::vector<std::vector<float>>> parts(4, std::vector<std::vector<float>>(kCells));
    for (size_t t = 0; t < p.x.size(); ++t) {
        const int ci = static_cast<int>(p.x[t] * float(kStencilGrid)),
                  cj = static_cast<int>(p.y[t] * float(kStencilGrid)),
                  ck = static_cast<int>(p.z[t] * float(kStencilGrid));
        for (int s = 0; s < atomics; ++s) {
            const int cell = s / 4, di = cell % w - w / 2, dj = cell / w % w - w / 2,
                      dk = cell / (w * w) - w / 2;
            float value = p.mass[t] * (1.0f / float(1 + di * di + dj * dj + dk * dk));
            if (s % 4 == 1) value = value * p.x[t];
            if (s % 4 == 2) value = value * p.y[t];
            if (s % 4 == 3) value = value * p.z[t];
            const int i = (ci + di + kStencilGrid) % kStencilGrid,
                      j = (cj + dj + kStencilGrid) % kStencilGrid,
                      k = (ck + dk + kStencilGrid) % kStencilGrid;
            parts[s % 4][(i * kStencilGrid + j) * kStencilGrid + k].push_back(value);
        }
    }
    std::vector<std::vector<float>> grids(4, std::vector<float>(kCells));
    for (int g = 0; g < 4; ++g)
        for (int c = 0; c < kCells; ++c) grids[g][c] = exact_sum(0.0f, parts[g][c]);
    return grids;
}

// The scatter of `atomics` sites over `particles` in mode `mode`: the four grids.
std::vector<std::vector<float>> scatter(Deterministic mode, int atomics, const StencilParticles& p) {
    const Device dev = test_device();
    Module m{"atomic_sites", {.deterministic = mode}};
    const StencilKernel p2g = add_stencil_scatter(m, atomics);
    std::vector<DeviceArray<float>> grids;
    for (int g = 0; g < 4; ++g)
        grids.push_back(zeros<float>({kStencilGrid, kStencilGrid, kStencilGrid}, dev));
    launch(p2g, static_cast<int64_t>(p.x.size()), from_vector(p.x, dev), from_vector(p.y, dev),
           from_vector(p.z, dev), from_vector(p.mass, dev), grids[0], grids[1], grids[2], grids[3]);
    std::vector<std::vector<float>> out;
    for (const auto& g : grids) out.push_back(g.to_vector());
    return out;
}

class AtomicSites : public FreshCacheTest {};

// Issue 37's kernel (108 sites), compiled from an empty cache in both deterministic modes and
// launched: every cell is the exact sum of its contributions, in both modes.
TEST_F(AtomicSites, HundredEightDeterministicSitesCompileAndGiveExactSums) {
    const StencilParticles p = stencil_particles(3000);
    const auto want = expected_grids(p, 108);
    for (const Deterministic mode : {Deterministic::RunToRun, Deterministic::GpuToGpu}) {
        const auto got = scatter(mode, 108, p);
        for (int g = 0; g < 4; ++g)
            EXPECT_EQ(mismatches(got[g], want[g], false), "")
                << "grid " << g << ", mode " << deterministic_name(mode);
    }
}

// Four deterministic sums per thread: float32 and float64, added and subtracted.
void four_sums(const Int& t, const Array<float>& v, const Array<double>& d, const Array<float>& sums,
               const Array<double>& wide) {
    auto bin = t % 7;
    atomic_add(sums, bin, v[t]);
    atomic_sub(sums, bin + 7, v[t] * 3.0f);
    atomic_add(wide, bin, d[t]);
    atomic_sub(wide, 7 - bin, d[t] * 0.5);
}

// A kernel of several sites of every deterministic family and of both float types calls the
// out-of-line path at each site; kernels of few sites inline it. Both give the same bits.
TEST_F(AtomicSites, CalledSitesGiveTheBitsOfInlinedSites) {
    const Device dev = test_device();
    Module m{"atomic_sites_families", {.deterministic = Deterministic::RunToRun}};
    const auto many = m.kernel("many", {"v", "d", "sums", "wide", "lows", "highs"},
                               [](Array<float> v, Array<double> d, Array<float> sums, Array<double> wide,
                                  Array<float> lows, Array<float> highs) {
                                   auto t = tid();
                                   four_sums(t, v, d, sums, wide);
                                   atomic_min(lows, t % 7, v[t]);
                                   atomic_max(highs, t % 7, v[t]);
                               });
    // The same sites in two kernels of few sites (sums; extremes), which inline them.
    const auto sums_only = m.kernel("sums_only", {"v", "d", "sums", "wide"},
                                    [](Array<float> v, Array<double> d, Array<float> sums,
                                       Array<double> wide) { four_sums(tid(), v, d, sums, wide); });
    const auto extremes_only = m.kernel("extremes_only", {"v", "lows", "highs"},
                                        [](Array<float> v, Array<float> lows, Array<float> highs) {
                                            auto t = tid();
                                            atomic_min(lows, t % 7, v[t]);
                                            atomic_max(highs, t % 7, v[t]);
                                        });

    const int n = 20000;
    std::vector<float> hv(n);
    std::vector<double> hd(n);
    for (int i = 0; i < n; ++i) {
        hv[i] = static_cast<float>((i * 7919) % 2003 - 1001) * 0.37f;
        hd[i] = static_cast<double>((i * 104729) % 4099 - 2049) * 1e-3;
    }
    const auto v = from_vector(hv, dev);
    const auto d = from_vector(hd, dev);
    auto sums = zeros<float>(14, dev), sums1 = zeros<float>(14, dev);
    auto wide = zeros<double>(8, dev), wide1 = zeros<double>(8, dev);
    auto lows = zeros<float>(7, dev), lows1 = zeros<float>(7, dev);
    auto highs = zeros<float>(7, dev), highs1 = zeros<float>(7, dev);
    launch(many, n, v, d, sums, wide, lows, highs);
    launch(sums_only, n, v, d, sums1, wide1);
    launch(extremes_only, n, v, lows1, highs1);
    EXPECT_EQ(mismatches(sums.to_vector(), sums1.to_vector(), false), "");
    EXPECT_EQ(mismatches(wide.to_vector(), wide1.to_vector(), false), "");
    EXPECT_EQ(mismatches(lows.to_vector(), lows1.to_vector(), false), "");
    EXPECT_EQ(mismatches(highs.to_vector(), highs1.to_vector(), false), "");
    // And both are the exact sums (and the extremes) of the contributions.
    std::vector<std::vector<float>> parts(14);
    std::vector<std::vector<double>> wide_parts(8);
    std::vector<float> low(7, 0.0f), high(7, 0.0f);
    for (int i = 0; i < n; ++i) {
        parts[i % 7].push_back(hv[i]);
        parts[i % 7 + 7].push_back(-(hv[i] * 3.0f));
        wide_parts[i % 7].push_back(hd[i]);
        wide_parts[7 - i % 7].push_back(-(hd[i] * 0.5));
        low[i % 7] = std::min(low[i % 7], hv[i]);
        high[i % 7] = std::max(high[i % 7], hv[i]);
    }
    std::vector<float> want(14);
    std::vector<double> want_wide(8);
    for (int k = 0; k < 14; ++k) want[k] = exact_sum(0.0f, parts[k]);
    for (int k = 0; k < 8; ++k) want_wide[k] = exact_sum(0.0, wide_parts[k]);
    EXPECT_EQ(mismatches(sums.to_vector(), want, false), "");
    EXPECT_EQ(mismatches(wide.to_vector(), want_wide, false), "");
    EXPECT_EQ(mismatches(lows.to_vector(), low, false), "");
    EXPECT_EQ(mismatches(highs.to_vector(), high, false), "");
}

}  // namespace
}  // namespace weft::test
