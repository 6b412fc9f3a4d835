// GPU prefix sums: a three-phase scan (scan tiles, scan the tile totals recursively, add the
// offsets), and a one-kernel int32 scan whose tiles chain their prefixes by decoupled look-back
// (the kernels: src/device/kernels/scan.cu).
#include "runtime/cuda/scan.hpp"

#include "device/library_abi.h"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace {

using wf::kernels::scan::kChainTile;
using wf::kernels::scan::kThreads;
using wf::kernels::scan::kTile;

// Above this many items the three-phase scan is faster on the H200 (Pattern B: at 1,048,576 and
// 16,777,216 counts the chained scan measured slower than the three-phase one had, at 262,144
// faster; docs/design/0021): a tile finds a published prefix at most 32
// tiles back per L2 round trip, so when most tiles run at once the chain of look-backs, not the
// memory traffic, sets the time.
constexpr int64_t kChainedMost = int64_t{1} << 19;

void launch(int ordinal, const char* name, unsigned blocks, void** params) {
    launch_library_kernel(ordinal, LibraryModule::Scan, name, blocks, kThreads, params,
                          std::string("array_scan (") + name + ")");
}

}  // namespace

void scan(int ordinal, DType dtype, const void* in, void* out, int64_t n, bool inclusive) {
    if (n == 0) return;
    const bool i32 = dtype == DType::Int32;
    const auto tiles = (n + kTile - 1) / kTile;
    const auto totals = detail::allocate(Device::cuda(ordinal), static_cast<size_t>(tiles) * 4);
    long long count = n;
    int incl = inclusive ? 1 : 0;
    void* totals_ptr = totals->ptr;
    void* scan_params[] = {&in, &out, &totals_ptr, &count, &incl};
    launch(ordinal, i32 ? "scan_tile_i32" : "scan_tile_f32", static_cast<unsigned>(tiles), scan_params);
    if (tiles == 1) return;
    // Tile t's offset is the inclusive scan of the totals of tiles 0..t-1.
    scan(ordinal, dtype, totals->ptr, totals->ptr, tiles, true);
    void* add_params[] = {&out, &totals_ptr, &count};
    launch(ordinal, i32 ? "add_offsets_i32" : "add_offsets_f32", static_cast<unsigned>(tiles - 1),
           add_params);
}

int64_t chained_scan_words(int64_t n) {
    return 1 + (n + kChainTile - 1) / kChainTile;
}

void scan_counts(int ordinal, const int32_t* in, int32_t* out, int64_t n, uint64_t* words, int32_t* total) {
    if (n == 0) return;
    long long count = n;
    if (n > kChainedMost) {
        if (total && in == out) throw InternalError("slot allocation", "a scan's total needs its input kept");
        scan(ordinal, DType::Int32, in, out, n, false);
        void* params[] = {&in, &out, &count, &total};
        if (total) launch(ordinal, "scan_total_i32", 1, params);
        return;
    }
    void* params[] = {&in, &out, &count, &words, &total};
    launch(ordinal, "scan_chained_i32", static_cast<unsigned>((n + kChainTile - 1) / kChainTile), params);
}

}  // namespace weft::runtime::cuda
