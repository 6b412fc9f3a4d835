# The particle-to-grid scatter of weft_cpu_bench's p2g rows, written for the spec framework
# (Warp) and timed on its CPU device; run by bench/cpu_side_by_side.sh in a throw-away virtual
# environment, never by the build or the tests. Prints "p2g warp <ms>" (median of the runs).
import sys
import time

import numpy as np
import warp as wp

GRID = 64
COUNT = 262144


@wp.func
def bspline(x: float, base: float, i: int):
    f = x - base
    if i == 0:
        a = 1.5 - f
        return 0.5 * a * a
    if i == 1:
        b = f - 1.0
        return 0.75 - b * b
    c = f - 0.5
    return 0.5 * c * c


@wp.kernel
def p2g(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), grid_m: wp.array3d(dtype=float),
        grid_mv: wp.array3d(dtype=wp.vec3)):
    p = wp.tid()
    at = x[p] * float(GRID)
    vp = v[p]
    base = wp.vec3(wp.floor(at[0] - 0.5), wp.floor(at[1] - 0.5), wp.floor(at[2] - 0.5))
    bx = int(base[0])
    by = int(base[1])
    bz = int(base[2])
    for i in range(3):
        for j in range(3):
            for k in range(3):
                w = bspline(at[0], base[0], i) * bspline(at[1], base[1], j) * bspline(at[2], base[2], k)
                wp.atomic_add(grid_m, bx + i, by + j, bz + k, w)
                wp.atomic_add(grid_mv, bx + i, by + j, bz + k, w * vp)


def unit(i, axis):
    # weft_cpu_bench's Particles::unit: an integer hash to [0, 1), exact in float32.
    h = (i * np.uint32(0x9E3779B1) + np.uint32((axis * 0x85EBCA77) & 0xFFFFFFFF)).astype(np.uint32)
    h ^= h >> np.uint32(15)
    h = (h * np.uint32(0x2C1B3C6D)).astype(np.uint32)
    h ^= h >> np.uint32(12)
    return (h >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    wp.config.quiet = True
    wp.init()
    i = np.arange(COUNT, dtype=np.uint32)
    x = np.stack([np.float32(0.1) + np.float32(0.8) * unit(i, a) for a in range(3)], axis=1)
    v = np.stack([np.float32(2.0) * unit(i, 3 + a) - np.float32(1.0) for a in range(3)], axis=1)
    device = "cpu"
    xs = wp.array(x, dtype=wp.vec3, device=device)
    vs = wp.array(v, dtype=wp.vec3, device=device)
    grid_m = wp.zeros((GRID, GRID, GRID), dtype=float, device=device)
    grid_mv = wp.zeros((GRID, GRID, GRID), dtype=wp.vec3, device=device)
    times = []
    for r in range(runs + 1):  # the first compiles and warms up
        start = time.perf_counter()
        grid_m.zero_()
        grid_mv.zero_()
        wp.launch(p2g, dim=COUNT, inputs=[xs, vs, grid_m, grid_mv], device=device)
        wp.synchronize_device(device)
        if r > 0:
            times.append((time.perf_counter() - start) * 1000.0)
    times.sort()
    print(f"p2g warp {times[len(times) // 2]:.3f}")


if __name__ == "__main__":
    main()
