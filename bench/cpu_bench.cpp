// Benchmark (CPU): Weft's CPU launches with one worker and with every hardware thread, next to
// hand-written C++ loops built by the same host compiler with the same flags as Weft's modules.
//
// Rows: saxpy over 64M floats (memory-bound); 256 dependent multiply-adds per element over 1M
// elements (compute-bound); 1,048,576 deterministic (RunToRun) writes into 1 and into 65,536
// outputs, whose hand-written twin is the serial loop `out[bins[i]] += values[i]`. The
// hand-written loops are compiled at run time through Weft's own host-compiler path
// (runtime::cpu::compile_flags and compile_shared_object), so flags, compiler and -O level are
// exactly those of the generated code. Each time is the median of several runs, the three
// variants of a row timed in turn.
//
// Usage: weft_cpu_bench [runs]   (default 7)
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cpu/host_compiler.hpp"
#include "runtime/cpu/worker_pool.hpp"

namespace {

namespace fs = std::filesystem;
using weft::Array;
const weft::Device cpu = weft::Device::cpu();

// The hand-written loops: what a C++ programmer writes for each row (restrict-qualified, as a
// programmer who wants the loop vectorized would).
constexpr const char* kHandWritten = R"(
extern "C" __attribute__((visibility("default")))
void saxpy(long n, float a, const float* __restrict x, float* __restrict y) {
    for (long i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
extern "C" __attribute__((visibility("default")))
void multiply_add(long n, float a, float b, const float* __restrict x, float* __restrict y) {
    for (long i = 0; i < n; ++i) {
        float v = x[i];
        for (int k = 0; k < 256; ++k) v = v * a + b;
        y[i] = v;
    }
}
extern "C" __attribute__((visibility("default")))
void accumulate(long n, const float* __restrict values, const int* __restrict bins, float* __restrict out) {
    for (long i = 0; i < n; ++i) out[bins[i]] += values[i];
}
)";

struct HandWritten {
    void (*saxpy)(long, float, const float*, float*);
    void (*multiply_add)(long, float, float, const float*, float*);
    void (*accumulate)(long, const float*, const int*, float*);
};

HandWritten compile_hand_written(const weft::Options& options) {
    namespace c = weft::runtime::cpu;
    const fs::path dir = fs::temp_directory_path() / ("weft_cpu_bench_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path source = dir / "hand_written.cpp", object = dir / "hand_written.so";
    std::ofstream(source) << kHandWritten;
    const c::HostCompiler& compiler = c::host_compiler();
    const std::vector<std::string> flags = c::compile_flags(compiler, options);
    std::string shown;
    for (const std::string& f : flags) shown += " " + f;
    std::printf("host compiler %s, flags%s (generated modules and hand-written loops alike)\n",
                compiler.path.c_str(), shown.c_str());
    c::compile_shared_object(compiler, source, object, flags, "hand_written");
    void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
    fs::remove_all(dir);
    if (!handle) throw weft::Error(std::string("cannot load the hand-written loops: ") + dlerror());
    return {reinterpret_cast<decltype(HandWritten::saxpy)>(dlsym(handle, "saxpy")),
            reinterpret_cast<decltype(HandWritten::multiply_add)>(dlsym(handle, "multiply_add")),
            reinterpret_cast<decltype(HandWritten::accumulate)>(dlsym(handle, "accumulate"))};
}

// The row kernels in one module; `workers` is the module's cpu_threads.
struct Kernels {
    weft::Module module;
    weft::Kernel<Array<float>, Array<float>, weft::Float> saxpy;
    weft::Kernel<Array<float>, Array<float>, weft::Float, weft::Float> multiply_add;
};

Kernels make_kernels(int workers) {
    weft::Module m{"cpu_bench_" + std::to_string(workers), {.cpu_threads = workers}};
    auto saxpy = m.kernel("saxpy", {"x", "y", "a"}, [](Array<float> x, Array<float> y, weft::Float a) {
        auto i = weft::tid();
        y[i] = a * x[i] + y[i];
    });
    auto multiply_add = m.kernel("multiply_add", {"x", "y", "a", "b"},
                                 [](Array<float> x, Array<float> y, weft::Float a, weft::Float b) {
                                     auto i = weft::tid();
                                     weft::Float v = x[i];
                                     weft::for_(256, [&](weft::Int) { v = v * a + b; });
                                     y[i] = v;
                                 });
    return {m, saxpy, multiply_add};
}

struct Accumulate {
    weft::Module module;
    weft::Kernel<Array<float>, Array<int>, Array<float>> kernel;
};

Accumulate make_accumulate(int workers) {
    weft::Module m{"cpu_bench_accumulate_" + std::to_string(workers),
                   {.deterministic = weft::Deterministic::RunToRun, .cpu_threads = workers}};
    auto k = m.kernel("accumulate", {"values", "bins", "out"},
                      [](Array<float> values, Array<int> bins, Array<float> out) {
                          auto i = weft::tid();
                          out[bins[i]] += values[i];
                      });
    return {m, k};
}

// The median milliseconds of each variant (hand-written, 1 worker, all workers), timed in turn:
// one call of each per round, `runs` rounds after an untimed one, so that whatever changes on the
// machine meanwhile (clock frequency, other load, memory placement) reaches every variant alike.
std::vector<double> medians_ms(int runs, const std::vector<std::function<void()>>& variants) {
    std::vector<std::vector<double>> ms(variants.size());
    for (int r = -1; r < runs; ++r)
        for (size_t v = 0; v < variants.size(); ++v) {
            const auto start = std::chrono::steady_clock::now();
            variants[v]();
            const auto end = std::chrono::steady_clock::now();
            if (r >= 0) ms[v].push_back(std::chrono::duration<double, std::milli>(end - start).count());
        }
    std::vector<double> medians;
    for (std::vector<double>& m : ms) {
        std::sort(m.begin(), m.end());
        medians.push_back(m[m.size() / 2]);
    }
    return medians;
}

void row(const char* name, const std::vector<double>& ms, int workers) {
    const double hand = ms[0], one = ms[1], all = ms[2];
    std::printf("%-34s | %10.2f | %10.2f %7.2fx | %10.2f %7.2fx %8.2f\n", name, hand, one, one / hand, all,
                one / all, one / all / workers);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
        const int workers = weft::runtime::cpu::cpu_workers(weft::config());
        const HandWritten hand = compile_hand_written(weft::config());
        Kernels one = make_kernels(1), all = make_kernels(workers);
        Accumulate acc_one = make_accumulate(1), acc_all = make_accumulate(workers);
        std::printf("%d workers (WEFT_CPU_THREADS, else every hardware thread: %u); median of %d runs\n\n",
                    workers, std::thread::hardware_concurrency(), runs);
        std::printf("%-34s | %10s | %10s %8s | %10s %8s %8s\n", "kernel", "hand ms", "1 worker", "/hand",
                    "all ms", "speed-up", "/workers");

        {
            const int64_t n = int64_t{64} << 20;
            std::vector<float> hx(static_cast<size_t>(n), 1.5f), hy(static_cast<size_t>(n), 0.25f);
            auto x = weft::from_vector(hx, cpu), y = weft::from_vector(hy, cpu);
            auto* px = static_cast<float*>(x.data());
            auto* py = static_cast<float*>(y.data());
            row("saxpy, 64M floats",
                medians_ms(runs, {[&] { hand.saxpy(n, 0.5f, px, py); },
                                  [&] { weft::launch(one.saxpy, n, x, y, 0.5f); },
                                  [&] { weft::launch(all.saxpy, n, x, y, 0.5f); }}),
                workers);
        }
        {
            const int n = 1 << 20;
            std::vector<float> hx(n);
            std::mt19937 rng(7);
            for (float& v : hx) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
            auto x = weft::from_vector(hx, cpu);
            auto y = weft::zeros<float>(n, cpu);
            auto* px = static_cast<float*>(x.data());
            auto* py = static_cast<float*>(y.data());
            const float a = 0.999f, b = 0.001f;
            row("256 multiply-adds, 1M elements",
                medians_ms(runs, {[&] { hand.multiply_add(n, a, b, px, py); },
                                  [&] { weft::launch(one.multiply_add, n, x, y, a, b); },
                                  [&] { weft::launch(all.multiply_add, n, x, y, a, b); }}),
                workers);
            hand.multiply_add(n, a, b, px, py);
            const std::vector<float> expected = y.to_vector();
            weft::launch(one.multiply_add, n, x, y, a, b);
            const bool same = y.to_vector() == expected;
            weft::launch(all.multiply_add, n, x, y, a, b);
            if (!same || y.to_vector() != expected)
                std::printf("  (note: Weft's results differ from the hand-written loop's)\n");
        }
        for (const int outputs : {1, 65536}) {
            const int n = 1 << 20;
            std::vector<float> hv(n);
            std::vector<int> hb(n);
            std::mt19937 rng(11);
            for (int i = 0; i < n; ++i) {
                hv[i] = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
                hb[i] = static_cast<int>(rng() % static_cast<unsigned>(outputs));
            }
            auto values = weft::from_vector(hv, cpu);
            auto bins = weft::from_vector(hb, cpu);
            auto out = weft::zeros<float>(outputs, cpu);
            auto* pv = static_cast<float*>(values.data());
            auto* pb = static_cast<int*>(bins.data());
            auto* po = static_cast<float*>(out.data());
            const std::string name = "deterministic 1M writes into " + std::to_string(outputs);
            row(name.c_str(),
                medians_ms(runs, {[&] {
                                      out.zero_();
                                      hand.accumulate(n, pv, pb, po);
                                  },
                                  [&] {
                                      out.zero_();
                                      weft::launch(acc_one.kernel, n, values, bins, out);
                                  },
                                  [&] {
                                      out.zero_();
                                      weft::launch(acc_all.kernel, n, values, bins, out);
                                  }}),
                workers);
            out.zero_();
            weft::launch(acc_one.kernel, n, values, bins, out);
            const std::vector<float> bits_one = out.to_vector();
            out.zero_();
            weft::launch(acc_all.kernel, n, values, bins, out);
            if (out.to_vector() != bits_one)
                std::printf("  UNEXPECTED: 1 worker and %d workers gave different bits\n", workers);
        }
        std::printf(
            "\n/hand: 1 worker's time over the hand-written loop's (target <= 1.25); speed-up: 1 worker's "
            "time\n"
            "over all workers'; /workers: speed-up per worker (target >= 0.8 on the compute-bound row).\n"
            "The hand-written accumulation is a plain serial float sum (not deterministic across orders).\n");
        return 0;
    } catch (const weft::Error& e) {
        std::fprintf(stderr, "weft_cpu_bench: %s\n", e.what());
        return 1;
    }
}
