// weft::HashGrid: neighbour search over points (the spec framework's wp.HashGrid), built
// deterministically by slot allocation.
//
//   weft::HashGrid grid(64, 64, 64, dev);             // cells hashed modulo 64 x 64 x 64
//   grid.build(positions, 2.0f * radius);             // cell width: at least the query radius
//   auto k = m.kernel("k", [](weft::HashGridView<weft::kernel_side> g, weft::Array<weft::vec3> x) {
//       auto i = weft::tid();
//       weft::vec3 p = x[i];
//       weft::for_each_neighbor(g, p, 0.1f, [&](weft::Int j) {
//           weft::if_(weft::length(x[j] - p) < 0.1f, [&] { ... });   // the caller checks distances
//       });
//   });
//   weft::launch(k, n, grid.view(), positions);
//
// Cell (x, y, z) of a point is floor(p / cell_width) per axis, hashed to the cell
// (x mod dim_x, y mod dim_y, z mod dim_z), so points beyond the grid's extent share cells with
// points inside it (and are still found). build() runs three kernels and a scan: count points per
// cell (integer atomics), an exclusive scan of the counts into cell offsets, then a scatter of
// each point's index into its cell's range with `slot = atomic_add(cursor, cell, 1)`. The build
// module is always deterministic (RunToRun unless the options ask for GpuToGpu), so slots follow
// thread order: inside a cell the point indices are ascending, and point_ids() is the same on every
// run, worker count, CPU and GPU (cells are computed with correctly rounded divisions).
#pragma once

#include <cstdint>
#include <source_location>
#include <type_traits>

#include "weft/builtins.hpp"
#include "weft/composite_array.hpp"
#include "weft/control.hpp"
#include "weft/device_array.hpp"
#include "weft/options.hpp"
#include "weft/struct.hpp"
#include "weft/vec.hpp"

namespace weft {

/// The kernel side of a HashGrid (HashGrid::view()), a parameter of type
/// `weft::HashGridView<weft::kernel_side>`. Points of cell c are point_ids[cell_offsets[c]] to
/// point_ids[cell_offsets[c + 1] - 1], in ascending order.
template <class Side = host_side>
struct HashGridView {
    /// dim_x * dim_y * dim_z + 1 entries; the last is the point count.
    ArrayField<Side, int32_t> cell_offsets;
    /// The point indices sorted by cell.
    ArrayField<Side, int32_t> point_ids;
    /// The cell width of the last build.
    Field<Side, float> cell_width;
    /// The grid's cells along x, y and z.
    ///@{
    Field<Side, int32_t> dim_x;
    Field<Side, int32_t> dim_y;
    Field<Side, int32_t> dim_z;
    ///@}
};
WEFT_STRUCT(HashGridView, cell_offsets, point_ids, cell_width, dim_x, dim_y, dim_z)

namespace detail {
/// |cell coordinate| is clamped to 2^29 before the float to int conversion, so huge or non-finite
/// coordinates stay defined (and equal on every device); such points share a far cell.
inline Int grid_coordinate(const Float& x, const Float& cell_width) {
    return cast<int32_t>(clamp(floor(x / cell_width), -536870912.0f, 536870912.0f));
}
inline Int grid_wrap(const Int& x, const Int& dim) {
    Int m = x % dim;
    return select(m < 0, m + dim, m);
}
/// grid_wrap(x + 1, dim) for a wrapped x: a comparison, not a remainder.
inline Int grid_step(const Int& wrapped, const Int& dim) {
    const Int next = wrapped + 1;
    return select(next == dim, Int(0), next);
}
}  // namespace detail

/// The hashed cell of integer cell coordinates (x, y, z): (z' * dim_y + y') * dim_x + x' with
/// x' = x mod dim_x (non-negative), and so on.
inline Int hash_grid_cell(const HashGridView<kernel_side>& grid, const Int& x, const Int& y, const Int& z) {
    return (detail::grid_wrap(z, grid.dim_z) * grid.dim_y + detail::grid_wrap(y, grid.dim_y)) * grid.dim_x +
           detail::grid_wrap(x, grid.dim_x);
}
/// The hashed cell of point p.
inline Int hash_grid_cell(const HashGridView<kernel_side>& grid, const vec3& p) {
    return hash_grid_cell(grid, detail::grid_coordinate(p.x, grid.cell_width),
                          detail::grid_coordinate(p.y, grid.cell_width),
                          detail::grid_coordinate(p.z, grid.cell_width));
}
/// The point at position `k` of the cell-sorted order (Warp's hash_grid_point_id): launching over
/// the points and taking i = hash_grid_point_id(grid, tid) makes neighbouring threads handle nearby
/// points.
inline Int hash_grid_point_id(const HashGridView<kernel_side>& grid, const Int& k) {
    return grid.point_ids[k];
}

/// Calls body(j) for every point j of the cells that the box [p - radius, p + radius] overlaps
/// (27 cells when radius <= cell_width; each hashed cell once, even when the box is wider than
/// the grid). Candidates only: body checks the distance itself, and sees p's own point too when
/// p is one of the grid's points. Inside body, weft::continue_() skips to the next candidate and
/// weft::break_() leaves the current cell.
template <class F>
requires std::invocable<F&, Int>
void for_each_neighbor(const HashGridView<kernel_side>& grid, const vec3& p, const Float& radius, F&& body) {
    const Float w = grid.cell_width;
    auto range = [&](const Float& x, const Int& dim, Int& first, Int& count) {
        first = detail::grid_coordinate(x - radius, w);
        const Int last = detail::grid_coordinate(x + radius, w);
        count = min(last - first, dim - 1) + 1;  // at most dim cells: each hashed cell once
    };
    Int x0, nx, y0, ny, z0, nz;
    range(p.x, grid.dim_x, x0, nx);
    range(p.y, grid.dim_y, y0, ny);
    range(p.z, grid.dim_z, z0, nz);
    // Each axis wrapped once, then stepped: a remainder per cell visited (27, each with its
    // division checks) made the loop 1.4x slower than a hand-written grid's.
    const Int first_x = detail::grid_wrap(x0, grid.dim_x), first_y = detail::grid_wrap(y0, grid.dim_y);
    Int hz = detail::grid_wrap(z0, grid.dim_z);
    for_(nz, [&](Int) {
        Int hy = first_y;
        for_(ny, [&](Int) {
            const Int row = (hz * grid.dim_y + hy) * grid.dim_x;
            Int hx = first_x;
            for_(nx, [&](Int) {
                const Int cell = row + hx;
                const Int begin = grid.cell_offsets[cell];
                const Int end = grid.cell_offsets[cell + 1];
                for_(begin, end, [&](Int k) { body(Int(grid.point_ids[k])); });
                hx = detail::grid_step(hx, grid.dim_x);
            });
            hy = detail::grid_step(hy, grid.dim_y);
        });
        hz = detail::grid_step(hz, grid.dim_z);
    });
}

/// A hash grid over points on one device. Not thread-safe: build and view from one thread at a time.
class HashGrid {
public:
    /// dim_x * dim_y * dim_z cells (each dim >= 1, at most 2^31 - 2 cells in all). `options` are
    /// the build module's (cpu_threads, block_dim, debug, ...); its deterministic mode is RunToRun
    /// unless GpuToGpu is asked for.
    HashGrid(int dim_x, int dim_y, int dim_z, Device device = default_device(),
             const OptionsPatch& options = {}, std::source_location s = std::source_location::current());

    /// Sorts `points` (a 1-D array on the grid's device) into cells of width `cell_width` (> 0 and
    /// finite; Warp's `radius` argument). The points are read now: after they move, build again.
    void build(const DeviceArray<vec3>& points, float cell_width,
               std::source_location s = std::source_location::current());

    /// The kernel side, for a parameter of type HashGridView<kernel_side>, valid until the next
    /// build(): take it again after each build. A build replaces the arrays that a view (or a
    /// graph, or a copy of cell_offsets() or point_ids()) still holds, so a launch with a view
    /// taken before it is a weft::Error naming that launch, as is a CPU graph's replay of one; a
    /// GPU graph's replay reads the older build's grid as it was.
    HashGridView<> view() const;

    /// The cells along x, y and z, as constructed.
    ///@{
    int dim_x() const { return dims_[0]; }
    int dim_y() const { return dims_[1]; }
    int dim_z() const { return dims_[2]; }
    ///@}
    /// The cell width of the last build (1 before the first).
    float cell_width() const { return cell_width_; }
    /// The number of points of the last build (0 before the first).
    int64_t num_points() const { return num_points_; }
    /// The device holding the grid's arrays (and the points it builds from).
    Device device() const { return device_; }
    /// dim_x * dim_y * dim_z + 1 offsets into point_ids(), and the point indices sorted by cell.
    ///@{
    const DeviceArray<int32_t>& cell_offsets() const { return offsets_; }
    DeviceArray<int32_t> point_ids() const;
    ///@}

private:
    int dims_[3];
    Device device_;
    Options options_;
    float cell_width_ = 1.0f;
    int64_t num_points_ = 0;
    DeviceArray<int32_t> offsets_;  // counts, then scanned in place
    DeviceArray<int32_t> cursor_;   // per-cell slot counters
    DeviceArray<int32_t> cell_of_;  // each point's cell (capacity >= num_points_)
    DeviceArray<int32_t> ids_;      // sorted point indices (capacity >= num_points_, >= 1)
};

}  // namespace weft
