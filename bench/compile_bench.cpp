// Benchmark: cold compile and cached load of a CPU module holding the spec's example kernels.
//
// Cold: a fresh, empty WEFT_CACHE_DIR, so Module::compile traces, lowers, generates C++ and runs
// the host compiler. Cached: the module is destroyed (its shared object dlclosed) and an
// identical one compiled again, which loads the verified entry from disk. Baseline: the host
// compiler turning an empty file into a shared object, so the cold figure can be read as a
// multiple of the compiler's own start-up cost on this machine. Then issue 37's rows: the cold
// compile of one kernel of 1, 108 and 1,000 atomic sites, plain against deterministic
// (bench/atomic_sites.hpp).
//
// Usage: weft_compile_bench [repeats]   (default 7)
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "atomic_sites.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The C++ twins of the spec's examples, in one module with the options the spec gives its
// deterministic examples, so the figures include the deterministic lowering (and the counting
// pass that slot allocation adds).
weft::Module make_module() {
    weft::Module m{"compile_bench",
                   {.deterministic = weft::Deterministic::RunToRun, .deterministic_max_records = 8}};

    m.kernel("accumulate", {"values", "bins", "out"},
             [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
                 auto tid = weft::tid();
                 weft::atomic_add(out, bins[tid], values[tid]);
             });

    m.kernel("compact_positive", {"values", "count", "compacted"},
             [](weft::Array<float> values, weft::Array<int> count, weft::Array<float> compacted) {
                 auto tid = weft::tid();
                 auto v = values[tid];
                 weft::if_(v > 0.0f, [&] {
                     auto slot = weft::atomic_add(count, 0, 1);
                     compacted[slot] = v;
                 });
             });

    m.kernel("reduce_by_bin", {"values", "bins", "out", "n"},
             [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out, weft::Int n) {
                 auto bin_id = weft::tid();
                 weft::Float total = 0.0f;
                 weft::for_(n,
                            [&](weft::Int i) { weft::if_(bins[i] == bin_id, [&] { total += values[i]; }); });
                 out[bin_id] = total;
             });

    m.kernel("count_positive", {"values", "counts"}, [](weft::Array<float> values, weft::Array<int> counts) {
        auto tid = weft::tid();
        counts[tid] = weft::cast<int32_t>(values[tid] > 0.0f);
    });

    m.kernel("write_positive", {"values", "offsets", "out"},
             [](weft::Array<float> values, weft::Array<int> offsets, weft::Array<float> out) {
                 auto tid = weft::tid();
                 weft::if_(values[tid] > 0.0f, [&] { out[offsets[tid]] = values[tid]; });
             });

    m.kernel("loop_accumulate", {"values", "loop_counts", "out"},
             [](weft::Array<float> values, weft::Array<int> loop_counts, weft::Array<float> out) {
                 auto tid = weft::tid();
                 weft::for_(loop_counts[tid], [&](weft::Int) { weft::atomic_add(out, 0, values[tid]); });
             });
    return m;
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double time_ms(const std::function<void()>& fn) {
    const auto start = Clock::now();
    fn();
    return ms_since(start);
}

struct Stats {
    double median, min, max;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return {median, v.front(), v.back()};
}

// The compiler Weft uses for generated modules: WEFT_CXX, else the one that built Weft.
std::string host_compiler() {
    if (const char* env = std::getenv("WEFT_CXX"); env && *env) return env;
    if (fs::exists(WEFT_BENCH_CXX)) return WEFT_BENCH_CXX;
    return "c++";
}

// `cxx -shared -fPIC -O2 -x c++ - -o out </dev/null`, spawned directly (no shell in the timing).
void compile_empty(const std::string& cxx, const fs::path& out) {
    std::vector<std::string> args = {cxx, "-shared", "-fPIC", "-O2", "-x", "c++", "-", "-o", out.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "baseline: '%s' failed to compile an empty file\n", cxx.c_str());
        std::exit(1);
    }
}

// Whether any file under `dir` is still mapped into this process (a shared object that dlclose
// did not unload would make the cached figure measure nothing).
bool mapped_from(const fs::path& dir) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find(dir.string()) != std::string::npos) return true;
    return false;
}

// Weft creates the folder (mode 0700) at the first compile.
void use_cache_dir(const fs::path& dir) {
    setenv("WEFT_CACHE_DIR", dir.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
    const weft::Device cpu = weft::Device::cpu();
    const std::string cxx = host_compiler();

    char tmpl[] = "/tmp/weft-compile-bench-XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("mkdtemp");
        return 1;
    }
    const fs::path root = tmpl;

    // One untimed cold compile first: it pays the one-off costs of a process (the compiler's
    // --version probe, page-cache warm-up) that would otherwise land on the first sample only.
    use_cache_dir(root / "warmup");
    make_module().compile(cpu);

    std::vector<double> baseline, cold, cached;
    bool still_mapped = false;
    for (int r = 0; r < repeats; ++r) {
        baseline.push_back(time_ms([&] { compile_empty(cxx, root / "empty.so"); }));

        const fs::path dir = root / ("cold-" + std::to_string(r));
        use_cache_dir(dir);
        {
            weft::Module m = make_module();
            cold.push_back(time_ms([&] { m.compile(cpu); }));
        }  // destroyed: the shared object is dlclosed
        still_mapped = still_mapped || mapped_from(dir);
        {
            weft::Module m = make_module();
            cached.push_back(time_ms([&] { m.compile(cpu); }));
        }
    }
    fs::remove_all(root);

    const Stats b = stats(baseline), c = stats(cold), h = stats(cached);
    std::printf("weft_compile_bench: 6 kernels (the spec's examples), %d repeats, %u hardware threads\n",
                repeats, std::thread::hardware_concurrency());
    std::printf("host compiler: %s\n\n", cxx.c_str());
    std::printf("%-34s %10s %10s %10s\n", "measurement (ms)", "median", "min", "max");
    std::printf("%-34s %10.1f %10.1f %10.1f\n", "baseline: empty file -> .so", b.median, b.min, b.max);
    std::printf("%-34s %10.1f %10.1f %10.1f\n", "cold compile (empty cache)", c.median, c.min, c.max);
    std::printf("%-34s %10.2f %10.2f %10.2f\n", "cached load (from disk)", h.median, h.min, h.max);
    std::printf("\ncold / baseline: %.1fx\n", c.median / b.median);
    std::printf("targets on a 2-core machine: cold < 2000 ms (%s), cached < 20 ms (%s)\n",
                c.median < 2000 ? "met here" : "NOT met here", h.median < 20 ? "met here" : "NOT met here");
    if (still_mapped)
        std::printf(
            "note: a module's shared object stayed mapped after dlclose, so the cached figure "
            "may not include loading it\n");
    weft::bench::atomic_site_rows(cpu, ("the host compiler " + cxx).c_str(), 3000, std::min(repeats, 3));
    return 0;
}
