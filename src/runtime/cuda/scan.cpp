// A three-phase GPU scan: scan tiles, scan the tile totals (recursively), add the offsets.
#include "runtime/cuda/scan.hpp"

#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "runtime/memory.hpp"

namespace weft::runtime::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 1024;  // kThreads * 4 items

const char* const kSource = R"(
namespace {
constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr long long kTile = kThreads * kItems;

// Scans one tile: each thread its 4 items in order, then a fixed tree over the thread totals.
template <class T>
__device__ void scan_tile(const T* in, T* out, T* tile_totals, long long n, int inclusive) {
    __shared__ T totals[kThreads];
    const long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    T v[kItems];
    T sum = T(0);
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : T(0);
        sum = sum + v[k];
    }
    totals[threadIdx.x] = sum;
    __syncthreads();
    for (int offset = 1; offset < kThreads; offset <<= 1) {
        const T add = threadIdx.x >= offset ? totals[threadIdx.x - offset] : T(0);
        __syncthreads();
        totals[threadIdx.x] = totals[threadIdx.x] + add;
        __syncthreads();
    }
    T running = threadIdx.x > 0 ? totals[threadIdx.x - 1] : T(0);
    for (int k = 0; k < kItems; ++k) {
        const T before = running;
        running = running + v[k];
        if (base + k < n) out[base + k] = inclusive ? running : before;
    }
    if (threadIdx.x == kThreads - 1) tile_totals[blockIdx.x] = totals[kThreads - 1];
}

template <class T>
__device__ void add_offsets(T* out, const T* offsets, long long n) {
    const long long i = (blockIdx.x + 1) * kTile + threadIdx.x * kItems;
    for (int k = 0; k < kItems; ++k)
        if (i + k < n) out[i + k] = offsets[blockIdx.x] + out[i + k];
}
}  // namespace

extern "C" __global__ void scan_tile_i32(const int* in, int* out, int* totals, long long n, int inclusive) {
    scan_tile(in, out, totals, n, inclusive);
}
extern "C" __global__ void scan_tile_f32(const float* in, float* out, float* totals, long long n, int inclusive) {
    scan_tile(in, out, totals, n, inclusive);
}
extern "C" __global__ void add_offsets_i32(int* out, const int* offsets, long long n) { add_offsets(out, offsets, n); }
extern "C" __global__ void add_offsets_f32(float* out, const float* offsets, long long n) {
    add_offsets(out, offsets, n);
}
)";

void launch(int ordinal, const char* name, unsigned blocks, void** params) {
    const CUfunction f = library_function(ordinal, "scan", kSource, name);
    const auto stream = current_stream(ordinal);
    check(
        require_driver().cuLaunchKernel(f, blocks, 1, 1, kThreads, 1, 1, 0, stream->stream, params, nullptr),
        name);
    note_launch(*stream, std::string("array_scan (") + name + ")");
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

}  // namespace weft::runtime::cuda
