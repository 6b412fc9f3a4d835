// Shared by weft_compile_bench (CPU) and weft_cuda_bench (GPU): the cold compile of a kernel of
// 1, 108 and 1,000 atomic sites (tests/support/stencil_scatter.hpp, issue 37's particle-to-grid
// scatter), as a plain module and as a deterministic one, against issue 37's targets.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "graph_replay.hpp"
#include "support/stencil_scatter.hpp"

namespace weft::bench {

// One cold compile (in a fresh, empty cache folder) of the scatter of `atomics` sites in mode
// `mode` on `device`, in milliseconds. The caller's WEFT_CACHE_DIR is restored afterwards. Each
// module's and kernel's name, which the generated code carries, is new to the machine (the
// process id and `repeat`): NVRTC (12.9 and later) keeps what it compiled, within a process and
// across processes (there a source that differs only in a comment was taken from it), and the
// same code again would take it from there in a fraction of the time.
inline double cold_scatter_ms(Device device, Deterministic mode, int atomics, int repeat) {
    namespace fs = std::filesystem;
    const char* saved = std::getenv("WEFT_CACHE_DIR");
    const std::string kept = saved ? saved : "";
    const std::string name = "atomic_sites_" + std::to_string(atomics) + "_" + deterministic_name(mode) +
                             "_" + std::to_string(getpid()) + "_" + std::to_string(repeat);
    const fs::path dir = fs::temp_directory_path() / ("weft-" + name);
    fs::remove_all(dir);
    setenv("WEFT_CACHE_DIR", dir.c_str(), 1);
    double ms = 0;
    {
        Module m{name, {.deterministic = mode}};
        test::add_stencil_scatter(m, atomics, name);  // the name in the code, not only in a comment
        const auto start = std::chrono::steady_clock::now();
        m.compile(device);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    fs::remove_all(dir);
    if (saved)
        setenv("WEFT_CACHE_DIR", kept.c_str(), 1);
    else
        unsetenv("WEFT_CACHE_DIR");
    return ms;
}

// One row per site count: the plain module's and the RunToRun module's cold compile, their ratio
// and issue 37's targets (108 sites: the deterministic module at most twice the plain one and at
// most `limit_108_ms`; 1,000 sites: at most ten times the plain one). `compiler` names what
// compiles (the host compiler, NVRTC). The rows of 1,000 sites take one compile each (half a
// minute for the plain module, on the CPU and in NVRTC alike).
inline void atomic_site_rows(Device device, const char* compiler, double limit_108_ms, int repeats) {
    std::printf(
        "\nCold compile of one kernel of N atomic adds (a particle-to-grid scatter into four 64^3 float32 "
        "grids), %s, median of %d (1 for 1,000 sites)\n\n",
        compiler, repeats);
    std::printf("%-10s %12s %12s %8s  %s\n", "sites", "plain ms", "det ms", "det/pl", "target (issue 37)");
    for (const int atomics : {1, 108, 1000}) {
        std::printf("%-10d", atomics);
        std::fflush(stdout);
        // Plain and deterministic compiles in turn, so that a machine busier for a while (the
        // GPU machine's compile times vary by a third from one minute to the next) slows both.
        const int n = atomics >= 1000 ? 1 : repeats;
        std::vector<double> plain_ms, det_ms;
        for (int r = 0; r < n; ++r) {
            plain_ms.push_back(cold_scatter_ms(device, Deterministic::NotGuaranteed, atomics, r));
            det_ms.push_back(cold_scatter_ms(device, Deterministic::RunToRun, atomics, r));
        }
        const double plain = median(plain_ms);
        const double det = median(det_ms);
        const double ratio = det / plain;
        std::printf(" %12.0f %12.0f %7.2fx  ", plain, det, ratio);
        if (atomics == 108)
            std::printf("<= 2x and <= %.0f ms: %s\n", limit_108_ms,
                        ratio <= 2.0 && det <= limit_108_ms ? "met" : "NOT met");
        else if (atomics == 1000)
            std::printf("<= 10x: %s\n", ratio <= 10.0 ? "met" : "NOT met");
        else
            std::printf("-\n");
    }
}

}  // namespace weft::bench
