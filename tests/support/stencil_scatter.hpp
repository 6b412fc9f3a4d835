// A particle-to-grid scatter with many atomic sites in one kernel (issue 37's workload), shared by
// the compile-time tests and benchmarks: each thread adds into the cells of a cube around its
// particle in four grids, one weft::atomic_add per (cell, grid), unrolled by C++ loops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

namespace weft::test {

// The scatter's grids are kStencilGrid^3 float32 cells each (compact targets, as in issue 37).
constexpr int kStencilGrid = 64;

// The cube's width: the smallest odd w with 4 w^3 >= `atomics`.
inline int stencil_width(int atomics) {
    int w = 1;
    while (4 * w * w * w < atomics) w += 2;
    return w;
}

using StencilKernel = Kernel<Array<float>, Array<float>, Array<float>, Array<float>, Array<float, 3>,
                             Array<float, 3>, Array<float, 3>, Array<float, 3>>;

// Kernel `name` of `atomics` atomic adds: site s adds into grid s % 4 at cell s / 4 of the cube
// (x fastest), offset from the particle's cell and wrapped into the grid. A particle at (x, y, z)
// in [0, 1) with mass m adds m * wx * wy * wz, the weights falling off with the offset, times
// 1, x, y and z for the four grids (mass and momentum).
inline StencilKernel add_stencil_scatter(Module& m, int atomics, const std::string& name = "p2g") {
    const int w = stencil_width(atomics);
    return m.kernel(
        name, {"x", "y", "z", "mass", "grid_m", "grid_x", "grid_y", "grid_z"},
        [atomics, w](Array<float> x, Array<float> y, Array<float> z, Array<float> mass, Array<float, 3> gm,
                     Array<float, 3> gx, Array<float, 3> gy, Array<float, 3> gz) {
            auto t = tid();
            auto px = x[t], py = y[t], pz = z[t], pm = mass[t];
            auto ci = cast<int32_t>(px * float(kStencilGrid));
            auto cj = cast<int32_t>(py * float(kStencilGrid));
            auto ck = cast<int32_t>(pz * float(kStencilGrid));
            const Array<float, 3> grids[4] = {gm, gx, gy, gz};
            for (int s = 0; s < atomics; ++s) {
                const int cell = s / 4, di = cell % w - w / 2, dj = cell / w % w - w / 2,
                          dk = cell / (w * w) - w / 2;
                const float weight = 1.0f / float(1 + di * di + dj * dj + dk * dk);
                auto value = pm * weight;
                if (s % 4 == 1) value = value * px;
                if (s % 4 == 2) value = value * py;
                if (s % 4 == 3) value = value * pz;
                atomic_add(grids[s % 4], (ci + (di + kStencilGrid)) % kStencilGrid,
                           (cj + (dj + kStencilGrid)) % kStencilGrid,
                           (ck + (dk + kStencilGrid)) % kStencilGrid, value);
            }
        });
}

// Particles for the scatter: coordinates in [0, 1) and masses in [0.5, 1.5), from a fixed seed.
struct StencilParticles {
    std::vector<float> x, y, z, mass;
};

inline StencilParticles stencil_particles(int n) {
    StencilParticles p;
    uint32_t state = 12345u;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        return static_cast<float>(state >> 8) / 16777216.0f;
    };
    for (int i = 0; i < n; ++i) {
        p.x.push_back(next());
        p.y.push_back(next());
        p.z.push_back(next());
        p.mass.push_back(0.5f + next());
    }
    return p;
}

}  // namespace weft::test
