// Benchmark (CPU): Weft's CPU launches with one worker and with every hardware thread, next to
// hand-written C++ loops built by the same host compiler with the same flags as Weft's modules;
// then deterministic atomics against plain atomics, the same kernels at the same worker counts.
//
// First table: saxpy over 64M floats (memory-bound); 256 dependent multiply-adds per element over
// 1M elements (compute-bound); 1,048,576 plain atomic adds into 65,536 outputs, whose
// hand-written twin is the serial loop `out[bins[i]] += values[i]`. The hand-written loops are
// compiled at run time through Weft's own host-compiler path (runtime::cpu::compile_flags and
// compile_shared_object), so flags, compiler and -O level are exactly those of the generated
// code.
//
// Second table (issue 23's targets): 1,048,576 atomic adds into 1, 65,536 and 1,048,576 outputs;
// a small launch (1,024 threads into 4,096 outputs); a particle-to-grid scatter (262,144
// particles, each adding its mass and momentum to the 27 cells of its quadratic B-spline stencil
// in a 64^3 grid: 108 atomic adds per particle); slot allocation (1,048,576 values binned into
// 65,536 bins); a scatter adjoint (the backward of a gather of 1,048,576 reads from 65,536
// values); a spring chain's forward and backward on a tape (4,096 springs, 32 steps: many small
// launches); two float64 adds into 16,777,216 outputs (the records strategy). Each time is the
// median of several runs, the variants of a row timed in turn. The particle-to-grid rows are also what
// bench/cpu_side_by_side.sh measures against the spec framework's CPU backend.
//
// Usage: weft_cpu_bench [runs] [p2g]   (runs: default 7; p2g: only the particle-to-grid rows,
// printed for bench/cpu_side_by_side.sh)
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

#include "p2g_kernel.hpp"
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

// The kernels of the second table, in one module: plain or deterministic atomics, `workers`
// workers.
using weft::vec3;
using weft::bench::kGrid;

struct Scatters {
    weft::Module module;
    weft::Kernel<Array<float>, Array<int>, Array<float>> accumulate;
    weft::Kernel<Array<vec3>, Array<vec3>, Array<float, 3>, Array<vec3, 3>> p2g;
    weft::Kernel<Array<float>, Array<int>, Array<int>, Array<float>> binning;
    weft::Kernel<Array<float>, Array<int>, Array<float>> gather;
    weft::Kernel<Array<double>, Array<int>, Array<double>> accumulate_f64;
    weft::Kernel<Array<float>, Array<float>> spring_forces;
    weft::Kernel<Array<float>, Array<float>, Array<float>> spring_step;
    weft::Kernel<Array<float>, Array<float>> spring_loss;
};

Scatters make_scatters(weft::Deterministic mode, int workers) {
    weft::Module m{
        std::string("cpu_bench_scatters_") + weft::deterministic_name(mode) + "_" + std::to_string(workers),
        {.deterministic = mode, .cpu_threads = workers, .enable_backward = true}};
    auto accumulate = m.kernel("accumulate", {"values", "bins", "out"},
                               [](Array<float> values, Array<int> bins, Array<float> out) {
                                   auto i = weft::tid();
                                   out[bins[i]] += values[i];
                               });
    auto p2g = m.kernel("p2g", {"x", "v", "grid_m", "grid_mv"}, weft::bench::p2g);
    auto binning = m.kernel("binning", {"values", "bins", "starts", "out"},
                            [](Array<float> values, Array<int> bins, Array<int> starts, Array<float> out) {
                                auto i = weft::tid();
                                out[weft::atomic_add(starts, bins[i], 1)] = values[i];
                            });
    auto gather = m.kernel("gather", {"values", "indices", "out"},
                           [](Array<float> values, Array<int> indices, Array<float> out) {
                               auto i = weft::tid();
                               out[i] = values[indices[i]];
                           });
    // float64 sums into more than 65,536 elements: the records strategy.
    auto accumulate_f64 = m.kernel("accumulate_f64", {"values", "bins", "out"},
                                   [](Array<double> values, Array<int> bins, Array<double> out) {
                                       auto i = weft::tid();
                                       out[bins[i]] += values[i];
                                   });
    // The spring chain: spring i joins masses i and i + 1 (rest length 1, stiffness 40), each end
    // taking its force with an atomic add; a step integrates the forces; the loss sums the last
    // positions.
    auto spring_forces = m.kernel("spring_forces", {"x", "f"}, [](Array<float> x, Array<float> f) {
        auto i = weft::tid();
        const weft::Float pull = 40.0f * (x[i + 1] - x[i] - 1.0f);
        weft::atomic_add(f, i, pull);
        weft::atomic_sub(f, i + 1, pull);
    });
    auto spring_step =
        m.kernel("spring_step", {"x", "f", "next"}, [](Array<float> x, Array<float> f, Array<float> next) {
            auto i = weft::tid();
            next[i] = x[i] + 0.001f * f[i];
        });
    auto spring_loss = m.kernel("spring_loss", {"x", "loss"}, [](Array<float> x, Array<float> loss) {
        weft::atomic_add(loss, 0, x[weft::tid()]);
    });
    m.compile(cpu);
    return {m, accumulate, p2g, binning, gather, accumulate_f64, spring_forces, spring_step, spring_loss};
}

// Issue 33's spring chain: 4,096 springs, 32 steps of two launches recorded on a tape, a loss,
// and the tape's backward pass (many small launches, half of them with atomics).
struct SpringChain {
    static constexpr int kSprings = 4096, kSteps = 32;
    std::vector<weft::DeviceArray<float>> x, f;
    weft::DeviceArray<float> loss;
    SpringChain() {
        std::vector<float> start(kSprings + 1);
        for (int i = 0; i <= kSprings; ++i) start[static_cast<size_t>(i)] = 1.01f * static_cast<float>(i);
        x.push_back(weft::from_vector(start, cpu, weft::requires_grad));
        for (int t = 0; t < kSteps; ++t) {
            x.push_back(weft::zeros<float>(kSprings + 1, cpu, weft::requires_grad));
            f.push_back(weft::zeros<float>(kSprings + 1, cpu, weft::requires_grad));
        }
        loss = weft::zeros<float>(1, cpu, weft::requires_grad);
    }
    void run(const Scatters& k) {
        for (auto& a : f) a.zero_();
        loss.zero_();
        weft::Tape tape;
        tape.start();
        for (int t = 0; t < kSteps; ++t) {
            weft::launch(k.spring_forces, kSprings, x[t], f[t]);
            weft::launch(k.spring_step, kSprings + 1, x[t], f[t], x[t + 1]);
        }
        weft::launch(k.spring_loss, kSprings + 1, x[kSteps], loss);
        tape.stop();
        tape.zero();  // the last run's gradients
        tape.backward(loss);
    }
};

// `n` values in [-1, 1) and their bins among `outputs`, and the outputs.
struct Scatter {
    int64_t n;
    weft::DeviceArray<float> values, out;
    weft::DeviceArray<int> bins;
    Scatter(int64_t count, int outputs) : n(count) {
        std::vector<float> hv(static_cast<size_t>(n));
        std::vector<int> hb(static_cast<size_t>(n));
        std::mt19937 rng(11);
        for (int64_t i = 0; i < n; ++i) {
            hv[i] = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
            hb[i] = static_cast<int>(rng() % static_cast<unsigned>(outputs));
        }
        values = weft::from_vector(hv, cpu);
        bins = weft::from_vector(hb, cpu);
        out = weft::zeros<float>(outputs, cpu);
    }
    const float* values_ptr() const { return static_cast<const float*>(values.data()); }
    const int* bins_ptr() const { return static_cast<const int*>(bins.data()); }
    float* out_ptr() { return static_cast<float*>(out.data()); }
    void run(const weft::Kernel<Array<float>, Array<int>, Array<float>>& k) {
        out.zero_();
        weft::launch(k, n, values, bins, out);
    }
};

// The particle-to-grid rows' particles: positions in [0.1, 0.9)^3 (every stencil inside the
// grid), velocities in [-1, 1)^3, from the integer hash the side-by-side script uses too.
struct Particles {
    static constexpr int kCount = 262144;
    weft::DeviceArray<vec3> x, v;
    weft::DeviceArray<float> grid_m;
    weft::DeviceArray<vec3> grid_mv;
    static float unit(uint32_t i, uint32_t axis) {  // in [0, 1), exact in float
        uint32_t h = i * 0x9E3779B1u + axis * 0x85EBCA77u;
        h ^= h >> 15;
        h *= 0x2C1B3C6Du;
        h ^= h >> 12;
        return static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
    }
    Particles() {
        std::vector<weft::host::vec3f> hx(kCount), hv(kCount);
        for (uint32_t i = 0; i < kCount; ++i) {
            hx[i] = {0.1f + 0.8f * unit(i, 0), 0.1f + 0.8f * unit(i, 1), 0.1f + 0.8f * unit(i, 2)};
            hv[i] = {2.0f * unit(i, 3) - 1.0f, 2.0f * unit(i, 4) - 1.0f, 2.0f * unit(i, 5) - 1.0f};
        }
        x = weft::from_vector(hx, cpu);
        v = weft::from_vector(hv, cpu);
        grid_m = weft::zeros<float>({kGrid, kGrid, kGrid}, cpu);
        grid_mv = weft::zeros<vec3>({kGrid, kGrid, kGrid}, cpu);
    }
    void run(const Scatters& k) {
        grid_m.zero_();
        grid_mv.zero_();
        weft::launch(k.p2g, kCount, x, v, grid_m, grid_mv);
    }
};

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

// A row of the second table: plain and deterministic at 1 worker and at `workers`, each
// ratio against its target.
void det_row(const char* name, const std::vector<double>& ms, int workers, double target) {
    const double one = ms[1] / ms[0], all = ms[3] / ms[2];
    std::printf("%-40s | %9.3f %9.3f %6.2fx | %9.3f %9.3f %6.2fx | <= %.1fx %s\n", name, ms[0], ms[1], one,
                ms[2], ms[3], all, target,
                one <= target && all <= target ? "met" : "not met (open: issue 33)");
}

// The four variants every table times: plain and deterministic, at 1 worker and at `workers`;
// each module is built once and shared by the tables.
struct ScatterModes {
    explicit ScatterModes(int workers)
        : plain_one(make_scatters(weft::Deterministic::NotGuaranteed, 1)),
          plain_all(make_scatters(weft::Deterministic::NotGuaranteed, workers)),
          det_one(make_scatters(weft::Deterministic::RunToRun, 1)),
          det_all(make_scatters(weft::Deterministic::RunToRun, workers)) {}
    Scatters plain_one, plain_all, det_one, det_all;
};

// The particle-to-grid rows alone, one line each, for bench/cpu_side_by_side.sh: plain and
// deterministic at 1 worker and at `workers`.
void p2g_rows(int runs, int workers, const ScatterModes& k) {
    const auto& [plain_one, plain_all, det_one, det_all] = k;
    Particles particles;
    const std::vector<double> ms =
        medians_ms(runs, {[&] { particles.run(plain_one); }, [&] { particles.run(det_one); },
                          [&] { particles.run(plain_all); }, [&] { particles.run(det_all); }});
    std::printf("p2g plain 1 %.3f\np2g deterministic 1 %.3f\np2g plain %d %.3f\np2g deterministic %d %.3f\n",
                ms[0], ms[1], workers, ms[2], workers, ms[3]);
}

// Deterministic against plain atomics (issue 23's targets): every row's four variants timed in
// turn, and their bits checked where the deterministic results must agree across worker counts.
void deterministic_table(int runs, int workers, const ScatterModes& k) {
    const auto& [plain_one, plain_all, det_one, det_all] = k;
    std::printf(
        "\nDeterministic (RunToRun) against plain atomics, the same kernel; %d workers; ms, median of %d\n\n",
        workers, runs);
    std::printf(
        "target: issue 33's bound on det/pl at 1 worker and at all; rows not met are work in progress,\n"
        "tracked there and in docs/design/0032 (what was done, and the next levers)\n\n");
    std::printf("%-40s | %9s %9s %7s | %9s %9s %7s | %s\n", "row", "plain 1w", "det 1w", "det/pl",
                "plain all", "det all", "det/pl", "target");
    const auto four = [&](auto run) {
        return medians_ms(runs, {[&] { run(plain_one); }, [&] { run(det_one); }, [&] { run(plain_all); },
                                 [&] { run(det_all); }});
    };
    const auto same_bits = [&](const char* what, auto run, auto result) {
        run(det_one);
        const auto one = result();
        run(det_all);
        if (result() != one)
            std::printf("  UNEXPECTED: %s: 1 worker and %d workers gave different bits\n", what, workers);
    };
    for (const auto& [name, count, outputs, target] :
         std::vector<std::tuple<const char*, int64_t, int, double>>{
             {"1M atomic adds into 1", 1 << 20, 1, 1.5},
             {"1M atomic adds into 65536", 1 << 20, 65536, 2.0},
             {"1M atomic adds into 1M", 1 << 20, 1 << 20, 2.0},
             {"small: 1024 atomic adds into 4096", 1024, 4096, 2.0}}) {
        Scatter scatter(count, outputs);
        const auto run = [&](const Scatters& k) { scatter.run(k.accumulate); };
        det_row(name, four(run), workers, target);
        same_bits(name, run, [&] { return scatter.out.to_vector(); });
    }
    {
        Particles particles;
        const auto run = [&](const Scatters& k) { particles.run(k); };
        det_row("p2g: 262144 particles, 108 adds each", four(run), workers, 2.0);
        same_bits("p2g", run, [&] {
            return std::make_pair(particles.grid_m.to_vector(), particles.grid_mv.to_vector());
        });
    }
    {
        // Ten adds into 10 of 16M elements: the resolve visits the slots the launch reached, so
        // this costs what ten adds into a 16-element target cost (issue 33: the resolve walked
        // every slot, 23 ms). The target is not zeroed between runs: only the launch is timed.
        const int outputs = 1 << 24;
        const auto values = weft::full<float>(10, 0.5f, cpu);
        std::vector<int> hb(10);
        for (int i = 0; i < 10; ++i) hb[static_cast<size_t>(i)] = i * (outputs / 10);
        const auto bins = weft::from_vector(hb, cpu);
        auto out = weft::zeros<float>(outputs, cpu);
        const auto run = [&](const Scatters& k) { weft::launch(k.accumulate, 10, values, bins, out); };
        det_row("sparse: 10 atomic adds into 16M", four(run), workers, 2.0);
    }
    {
        SpringChain chain;
        const auto run = [&](const Scatters& k) { chain.run(k); };
        det_row("springs: 4096 x 32 steps, fwd + bwd", four(run), workers, 2.0);
        same_bits("springs", run, [&] { return chain.x.front().grad().to_vector(); });
    }
    {
        // Two records into a large target: the resolve's cost follows the records, not the
        // target's size (issue 32, item 16: 0.26-0.35 s against 0.05 ms plain).
        const int outputs = 1 << 24;
        const auto values = weft::from_vector<double>({0.5, 0.25}, cpu);
        const auto bins = weft::from_vector<int>({3, outputs - 1}, cpu);
        auto out = weft::zeros<double>(outputs, cpu);
        const auto run = [&](const Scatters& k) { weft::launch(k.accumulate_f64, 2, values, bins, out); };
        det_row("records: 2 float64 adds into 16M", four(run), workers, 2.0);
    }
    {
        const int n = 1 << 20, bins = 65536;
        std::vector<int> hb(n);
        std::mt19937 rng(5);
        for (int& b : hb) b = static_cast<int>(rng() % bins);
        std::vector<int> counts(bins + 1, 0);
        for (int b : hb) ++counts[b + 1];
        for (int b = 1; b <= bins; ++b) counts[b] += counts[b - 1];
        counts.pop_back();
        const auto values = weft::full<float>(n, 1.0f, cpu);
        const auto in_bins = weft::from_vector(hb, cpu);
        const auto first = weft::from_vector(counts, cpu);
        auto starts = weft::zeros<int>(bins, cpu);
        auto out = weft::zeros<float>(n, cpu);
        const auto run = [&](const Scatters& k) {
            weft::copy(starts, first);
            weft::launch(k.binning, n, values, in_bins, starts, out);
        };
        det_row("slots: 1M values into 65536 bins", four(run), workers, 1.5);
        same_bits("slots", run, [&] { return starts.to_vector(); });
    }
    {
        const int reads = 1 << 20, sources = 65536;
        std::vector<int> hi(reads);
        std::mt19937 rng(3);
        for (int& i : hi) i = static_cast<int>(rng() % sources);
        const auto values = weft::ones<float>(sources, cpu);
        const auto indices = weft::from_vector(hi, cpu);
        const auto out = weft::zeros<float>(reads, cpu);
        auto values_grad = weft::zeros<float>(sources, cpu);
        const auto out_grad = weft::ones<float>(reads, cpu);
        const auto run = [&](const Scatters& k) {
            values_grad.zero_();
            weft::launch_adjoint(k.gather, reads, {values_grad, weft::AnyArray(), out_grad}, values, indices,
                                 out);
        };
        det_row("backward: gather of 1M reads from 65536", four(run), workers, 2.0);
        same_bits("backward", run, [&] { return values_grad.to_vector(); });
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
        const int workers = weft::runtime::cpu::cpu_workers(weft::config());
        // Compiling is most of a first run's time (the particle-to-grid kernels of 108 sites above
        // all): say so before it starts.
        std::printf("weft_cpu_bench: compiling its modules (from an empty cache a minute or two)...\n");
        std::fflush(stdout);
        const ScatterModes scatters(workers);
        std::printf("weft_cpu_bench: compiled; timing\n");
        std::fflush(stdout);
        if (argc > 2 && std::string(argv[2]) == "p2g") {
            p2g_rows(runs, workers, scatters);
            return 0;
        }
        const HandWritten hand = compile_hand_written(weft::config());
        Kernels one = make_kernels(1), all = make_kernels(workers);
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
        {
            Scatter scatter(1 << 20, 65536);
            row("1M atomic adds into 65536",
                medians_ms(runs, {[&] {
                                      scatter.out.zero_();
                                      hand.accumulate(scatter.n, scatter.values_ptr(), scatter.bins_ptr(),
                                                      scatter.out_ptr());
                                  },
                                  [&] { scatter.run(scatters.plain_one.accumulate); },
                                  [&] { scatter.run(scatters.plain_all.accumulate); }}),
                workers);
        }
        std::printf(
            "\n/hand: 1 worker's time over the hand-written loop's (target <= 1.25); speed-up: 1 worker's "
            "time\n"
            "over all workers'; /workers: speed-up per worker (target >= 0.8 on the compute-bound row).\n"
            "The hand-written accumulation is a plain serial float sum (what plain atomics do with one "
            "worker).\n");
        deterministic_table(runs, workers, scatters);
        return 0;
    } catch (const weft::Error& e) {
        std::fprintf(stderr, "weft_cpu_bench: %s\n", e.what());
        return 1;
    }
}
