// Benchmark (GPU): CUDA module compile and cached load; the cold compile of a kernel of 1, 108
// and 1,000 atomic sites, plain against deterministic (issue 37), and the 108-site kernel's run
// time; launch overhead against a raw cuLaunchKernel; a memory-bound saxpy as a fraction of device-to-device
// copy bandwidth.
//
// Usage: weft_cuda_bench [sites]   (needs a GPU; prints a table of medians; "sites": only the
// cold compiles of 1, 108 and 1,000 sites, median of 7)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "api/module_state.hpp"
#include "atomic_sites.hpp"
#include "graph_replay.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cuda_module.hpp"

namespace {

namespace fs = std::filesystem;
namespace cu = weft::runtime::cuda;
using Clock = std::chrono::steady_clock;
using weft::Array;

const weft::Device gpu = weft::Device::cuda(0);

using weft::bench::median;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

weft::Module make_module(weft::Deterministic mode, const std::string& name) {
    weft::Module m{name, {.deterministic = mode}};
    m.kernel("accumulate", {"values", "bins", "out"},
             [](Array<float> values, Array<int> bins, Array<float> out) {
                 auto tid = weft::tid();
                 weft::atomic_add(out, bins[tid], values[tid]);
             });
    m.kernel("compact_positive", {"values", "count", "compacted"},
             [](Array<float> values, Array<int> count, Array<float> compacted) {
                 auto tid = weft::tid();
                 auto v = values[tid];
                 weft::if_(v > 0.0f, [&] {
                     auto slot = weft::atomic_add(count, 0, 1);
                     compacted[slot] = v;
                 });
             });
    return m;
}

// A module of two kernels (an accumulation and a compaction) compiled from an empty cache, then
// loaded from it; `mode` NotGuaranteed is a plain module, RunToRun a deterministic one.
void compile_times(const char* what, weft::Deterministic mode, double target_ms) {
    std::vector<double> cold, cached;
    for (int r = 0; r < 5; ++r) {
        const fs::path dir = fs::temp_directory_path() / ("weft-cuda-bench-" + std::to_string(r));
        fs::remove_all(dir);
        setenv("WEFT_CACHE_DIR", dir.c_str(), 1);
        // A name of its own per repeat (the generated source carries it): NVRTC 12.9 and later
        // keep what they compiled for a process, and would give the same source again from there.
        const std::string name = "cuda_bench_" + std::to_string(r);
        {
            weft::Module m = make_module(mode, name);
            const auto start = Clock::now();
            m.compile(gpu);
            cold.push_back(ms_since(start));
        }
        weft::Module m = make_module(mode, name);
        const auto start = Clock::now();
        m.compile(gpu);
        cached.push_back(ms_since(start));
        fs::remove_all(dir);
    }
    std::printf("%-44s %10.2f ms", (std::string(what) + ", first compile (NVRTC)").c_str(), median(cold));
    if (target_ms > 0)
        std::printf("  (target <= %.0f ms: %s)", target_ms, median(cold) <= target_ms ? "met" : "NOT met");
    std::printf("\n%-44s %10.2f ms\n", (std::string(what) + ", cached load").c_str(), median(cached));
}

void launch_overhead() {
    weft::Module m{"launch_overhead"};
    auto empty = m.kernel("empty", {"a"}, [](Array<float>) {});
    auto a = weft::zeros<float>(1, gpu);
    m.compile(gpu);
    for (int i = 0; i < 1000; ++i) weft::launch(empty, 1, a);
    weft::synchronize(gpu);

    // The same compiled function, launched directly with the same parameters.
    const auto compiled = m.state()->compile(gpu);
    const auto& module = dynamic_cast<const cu::CudaModule&>(*compiled->code);
    const auto index = compiled->plan->find("empty")->variants.forward;
    struct {
        void* data;
        int64_t shape[4];
        int64_t strides[4];
        void* det;
    } desc{a.data(), {1, 1, 1, 1}, {4, 0, 0, 0}, nullptr};
    weft::runtime::LaunchRecord record{{1, 1, 1, 1}, 1, 1, 0, nullptr};
    void* params[] = {&desc, &record};
    const auto stream = cu::current_stream(0)->stream;
    const cu::Driver& d = cu::require_driver();

    const int launches = 20000;
    std::vector<double> weft_us, raw_us;
    for (int round = 0; round < 7; ++round) {
        auto start = Clock::now();
        for (int i = 0; i < launches; ++i) weft::launch(empty, 1, a);
        weft_us.push_back(ms_since(start) * 1000.0 / launches);
        weft::synchronize(gpu);
        start = Clock::now();
        for (int i = 0; i < launches; ++i)
            d.cuLaunchKernel(module.function(index), 1, 1, 1, 256, 1, 1, 0, stream, params, nullptr);
        raw_us.push_back(ms_since(start) * 1000.0 / launches);
        weft::synchronize(gpu);
    }
    std::printf("%-44s %10.2f us\n", "launch of an empty kernel, weft::launch", median(weft_us));
    std::printf("%-44s %10.2f us\n", "launch of an empty kernel, raw cuLaunchKernel", median(raw_us));
    std::printf("%-44s %10.2f x\n", "  ratio weft / raw", median(weft_us) / median(raw_us));
}

void saxpy_bandwidth() {
    const int64_t n = int64_t(1) << 28;  // 256M floats, 1 GiB per array
    weft::Module m{"saxpy"};
    auto saxpy = m.kernel("saxpy", {"a", "x", "y"}, [](weft::Float a, Array<float> x, Array<float> y) {
        auto t = weft::tid();
        y[t] = a * x[t] + y[t];
    });
    auto x = weft::full<float>(n, 1.0f, gpu);
    auto y = weft::full<float>(n, 2.0f, gpu);
    auto z = weft::empty<float>(n, gpu);
    weft::launch(saxpy, n, 0.5f, x, y);
    weft::synchronize(gpu);

    weft::Event start(gpu), end(gpu);
    std::vector<double> saxpy_ms, copy_ms;
    for (int r = 0; r < 20; ++r) {
        start.record();
        weft::launch(saxpy, n, 0.5f, x, y);
        end.record();
        end.synchronize();
        saxpy_ms.push_back(weft::Event::elapsed_ms(start, end));
        start.record();
        weft::copy(z, x);
        end.record();
        end.synchronize();
        copy_ms.push_back(weft::Event::elapsed_ms(start, end));
    }
    const double gb = 1e9;
    const double saxpy_bw = 3.0 * 4.0 * static_cast<double>(n) / (median(saxpy_ms) / 1e3) / gb;
    const double copy_bw = 2.0 * 4.0 * static_cast<double>(n) / (median(copy_ms) / 1e3) / gb;
    std::printf("%-44s %10.3f ms  %7.0f GB/s\n", "saxpy, 256M floats (12 B/element)", median(saxpy_ms),
                saxpy_bw);
    std::printf("%-44s %10.3f ms  %7.0f GB/s\n", "device-to-device copy, 1 GiB (8 B/element)",
                median(copy_ms), copy_bw);
    const double ratio = 100.0 * saxpy_bw / copy_bw;
    std::printf("%-44s %10.1f %%  (target >= 85%%: %s)\n", "  saxpy bandwidth / copy bandwidth", ratio,
                ratio >= 85.0 ? "met" : "NOT met");
    const float check = y.to_vector()[12345];
    std::printf("%-44s %10g (expected %g)\n", "  check y[12345]", check, 2.0 + 21 * 0.5);
}

// The 108-site scatter's run time, 1,048,576 particles into four 64^3 grids zeroed first: the
// code that the compile rows above make cheaper to build, plain against RunToRun and GpuToGpu.
void scatter_run_time() {
    constexpr int kParticles = 1 << 20;
    const weft::test::StencilParticles p = weft::test::stencil_particles(kParticles);
    const auto x = weft::from_vector(p.x, gpu), y = weft::from_vector(p.y, gpu),
               z = weft::from_vector(p.z, gpu), mass = weft::from_vector(p.mass, gpu);
    const int g = weft::test::kStencilGrid;
    std::printf("\nRun time of the 108-site scatter, %d particles (graph replay, median)\n\n", kParticles);
    double plain_ms = 0.0;
    for (const weft::Deterministic mode :
         {weft::Deterministic::NotGuaranteed, weft::Deterministic::RunToRun, weft::Deterministic::GpuToGpu}) {
        weft::Module m{std::string("scatter_run_time_") + weft::deterministic_name(mode),
                       {.deterministic = mode}};
        const auto p2g = weft::test::add_stencil_scatter(m, 108);
        std::vector<weft::DeviceArray<float>> grids;
        for (int i = 0; i < 4; ++i) grids.push_back(weft::zeros<float>({g, g, g}, gpu));
        const auto run = [&] {
            for (auto& grid : grids) grid.zero_();
            weft::launch(p2g, kParticles, x, y, z, mass, grids[0], grids[1], grids[2], grids[3]);
        };
        run();  // compile and warm up outside the graph
        weft::synchronize(gpu);
        const double ms = weft::bench::graph_replay_ms(gpu, run);
        if (mode == weft::Deterministic::NotGuaranteed) plain_ms = ms;
        std::printf("%-44s %10.3f ms  %6.2fx plain\n", weft::deterministic_name(mode), ms, ms / plain_ms);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool sites_only = argc > 1 && std::string(argv[1]) == "sites";
    if (!weft::cuda_available()) {
        std::printf("no GPU: %s\n", weft::cuda_unavailable_reason().c_str());
        return 1;
    }
    const weft::DeviceInfo info = weft::device_info(gpu);
    std::printf("device: %s (sm_%d%d, %d SMs)\n\n", info.name.c_str(), info.compute_capability_major,
                info.compute_capability_minor, info.multiprocessors);
    if (sites_only) {
        weft::bench::atomic_site_rows(gpu, "NVRTC", 1500, 7);
        return 0;
    }
    compile_times("plain CUDA module", weft::Deterministic::NotGuaranteed, 30);
    compile_times("deterministic CUDA module", weft::Deterministic::RunToRun, 0);
    weft::bench::atomic_site_rows(gpu, "NVRTC", 1500, 3);
    scatter_run_time();
    launch_overhead();
    saxpy_bandwidth();
    return 0;
}
