// weft::HashGrid: count per cell, an exclusive scan, then a scatter by deterministic slot allocation.
#include "weft/hash_grid.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/atomics.hpp"
#include "weft/error.hpp"
#include "weft/launch.hpp"
#include "weft/module.hpp"
#include "weft/scan.hpp"

namespace weft {

namespace {

[[noreturn]] void fail(const std::source_location& s, const std::string& message) {
    throw Error("weft::HashGrid: " + message, "", s.file_name(), s.line());
}

using View = HashGridView<kernel_side>;

// Each point's cell, and the number of points per cell (in cell_offsets, scanned afterwards).
auto make_count(Module& m) {
    return m.kernel("hash_grid_count", {"grid", "points", "cell_of"},
                    [](View grid, Array<vec3> points, Array<int32_t> cell_of) {
                        auto i = tid();
                        const vec3 p = points[i];
                        const Int cell = hash_grid_cell(grid, p);
                        cell_of[i] = cell;
                        grid.cell_offsets[cell] += 1;
                    });
}
// Each point's index into its cell's range, at the slot its cell's counter hands out: in thread
// order, since the module is deterministic.
auto make_scatter(Module& m) {
    return m.kernel("hash_grid_scatter", {"grid", "cell_of", "cursor"},
                    [](View grid, Array<int32_t> cell_of, Array<int32_t> cursor) {
                        auto i = tid();
                        const Int cell = cell_of[i];
                        const Int slot = atomic_add(cursor, cell, 1);
                        grid.point_ids[grid.cell_offsets[cell] + slot] = i;
                    });
}

struct Kernels {
    explicit Kernels(const Options& o)
        : module("weft_hash_grid", patch_of(o)), count(make_count(module)), scatter(make_scatter(module)) {}
    static OptionsPatch patch_of(const Options& o) {
        return {.deterministic = o.deterministic,
                .deterministic_strategy = o.deterministic_strategy,
                .deterministic_max_records = o.deterministic_max_records,
                .deterministic_debug = o.deterministic_debug,
                .bounds_check = o.bounds_check,
                .optimization_level = o.optimization_level,
                .block_dim = o.block_dim,
                .cpu_threads = o.cpu_threads,
                .debug = o.debug,
                .verbose = o.verbose,
                .enable_backward = false};
    }
    Module module;
    decltype(make_count(std::declval<Module&>())) count;
    decltype(make_scatter(std::declval<Module&>())) scatter;
};

// One module per set of options, for the life of the process (never destroyed, so no launch
// races a static destructor at exit).
const Kernels& kernels_for(const Options& options) {
    static std::mutex mutex;
    static auto* modules = new std::vector<std::pair<Options, Kernels*>>;
    std::lock_guard lock(mutex);
    for (const auto& [o, k] : *modules)
        if (o == options) return *k;
    modules->emplace_back(options, new Kernels(options));
    return *modules->back().second;
}

}  // namespace

HashGrid::HashGrid(int dim_x, int dim_y, int dim_z, Device device, const OptionsPatch& options,
                   std::source_location s)
    : dims_{dim_x, dim_y, dim_z}, device_(device), options_(apply(config(), options, s)) {
    if (dim_x < 1 || dim_y < 1 || dim_z < 1)
        fail(s, "dimensions must be >= 1, got " + std::to_string(dim_x) + " x " + std::to_string(dim_y) +
                    " x " + std::to_string(dim_z));
    const int64_t cells = int64_t{dim_x} * dim_y * dim_z;
    if (cells > int64_t{0x7ffffffe})
        fail(s, "at most 2^31 - 2 cells, got " + std::to_string(dim_x) + " x " + std::to_string(dim_y) +
                    " x " + std::to_string(dim_z));
    if (options_.deterministic == Deterministic::NotGuaranteed)
        options_.deterministic = Deterministic::RunToRun;
    options_.enable_backward = false;
    offsets_ = zeros<int32_t>(cells + 1, device_, s);
    cursor_ = empty<int32_t>(cells, device_, s);
    cell_of_ = empty<int32_t>(1, device_, s);
    ids_ = empty<int32_t>(1, device_, s);
}

void HashGrid::build(const DeviceArray<vec3>& points, float cell_width, std::source_location s) {
    if (!points.valid()) fail(s, "the points array is empty (default-constructed)");
    if (points.ndim() != 1)
        fail(s, "the points array must have 1 dimension, got " + std::to_string(points.ndim()));
    if (points.device() != device_)
        fail(s, "the points are on " + points.device().name() + " but the grid is on " + device_.name());
    if (!(cell_width > 0.0f) || !std::isfinite(cell_width))
        fail(s, "the cell width must be > 0 and finite, got " + std::to_string(cell_width));
    const int64_t n = points.size();
    if (n > int64_t{0x7fffffff}) fail(s, "at most 2^31 - 1 points, got " + std::to_string(n));
    // A view taken before this build (or a graph, or a copy of cell_offsets() or point_ids())
    // holds the grid's arrays: it would read this build's offsets with the last build's cell
    // width, or past the end of point indices that no longer grow with the grid. Those arrays are
    // retired, so that a launch with that view is refused, and this build writes new ones.
    const bool viewed = detail::shared_elsewhere(offsets_) || detail::shared_elsewhere(ids_);
    if (viewed) {
        static constexpr char kReplaced[] =
            "is an array of a weft::HashGrid view taken before the grid's last build(), which replaced "
            "it; take grid.view() again after each build";
        detail::retire(offsets_, kReplaced);
        detail::retire(ids_, kReplaced);
        offsets_ = empty<int32_t>(offsets_.size(), device_, s);
    }
    if (n > cell_of_.size()) cell_of_ = empty<int32_t>(n, device_, s);
    if (viewed || n > ids_.size()) ids_ = empty<int32_t>(std::max<int64_t>({n, ids_.size(), 1}), device_, s);
    cell_width_ = cell_width;
    num_points_ = n;
    offsets_.zero_();
    if (n == 0) return;
    const Kernels& k = kernels_for(options_);
    const HashGridView<> grid = view();
    launch(k.count, n, grid, points, cell_of_);
    array_scan(offsets_, offsets_, /*inclusive=*/false);
    cursor_.zero_();
    launch(k.scatter, n, grid, cell_of_, cursor_);
}

HashGridView<> HashGrid::view() const {
    return {.cell_offsets = offsets_,
            .point_ids = point_ids(),
            .cell_width = cell_width_,
            .dim_x = dims_[0],
            .dim_y = dims_[1],
            .dim_z = dims_[2]};
}

DeviceArray<int32_t> HashGrid::point_ids() const {
    return num_points_ == ids_.size() ? ids_ : ids_.slice(0, 0, num_points_);
}

}  // namespace weft
