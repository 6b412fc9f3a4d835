// Shared by the CPU benchmarks: the particle-to-grid scatter (each particle adds its mass and
// momentum to the 27 cells of its quadratic B-spline stencil in a kGrid^3 grid: 108 atomic adds).
#pragma once

#include <array>
#include <weft/weft.hpp>

namespace weft::bench {

constexpr int kGrid = 64;  // the particle-to-grid grid: kGrid^3 cells

// The quadratic B-spline weights of the three cells from `base` along one axis, at `x` cells.
inline std::array<Float, 3> bspline(const Float& x, const Float& base) {
    const Float f = x - base;
    const Float a = 1.5f - f, b = f - 1.0f, c = f - 0.5f;
    return {0.5f * a * a, 0.75f - b * b, 0.5f * c * c};
}

// The kernel's body (a lambda: Module::kernel takes one): particles x (in [0, 1)^3) with
// velocities v into grid_m and grid_mv.
inline constexpr auto p2g = [](Array<vec3> x, Array<vec3> v, Array<float, 3> grid_m, Array<vec3, 3> grid_mv) {
    auto p = tid();
    const vec3 at = vec3(x[p]) * static_cast<float>(kGrid);
    const vec3 vp = v[p];
    const vec3 base(floor(at.x - 0.5f), floor(at.y - 0.5f), floor(at.z - 0.5f));
    const auto wx = bspline(at.x, base.x), wy = bspline(at.y, base.y), wz = bspline(at.z, base.z);
    const Int bx = cast<int>(base.x), by = cast<int>(base.y), bz = cast<int>(base.z);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) {
                const Float w = wx[i] * wy[j] * wz[k];
                grid_m(bx + i, by + j, bz + k) += w;
                grid_mv(bx + i, by + j, bz + k) += w * vp;
            }
};

}  // namespace weft::bench
