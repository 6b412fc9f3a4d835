// The demo: the spec's accumulation with plain and with deterministic atomics side by side,
// against the exact sums computed on the host, and its compaction by deterministic slot
// allocation, on the default device (the GPU if there is one, else the CPU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

using weft::Array;

namespace {

constexpr int num_values = 1 << 20;
constexpr int num_bins = 4;
constexpr int runs = 10;

// weft::default_device(), and why it is the one.
weft::Device choose_device(std::string& why) {
    const char* env = std::getenv("WEFT_DEVICE");
    const bool chosen = env && *env;
    try {
        const weft::Device dev = weft::default_device();
        const std::string pick = "\n        (WEFT_DEVICE=cpu picks the CPU, WEFT_DEVICE=cuda:N a GPU)";
        if (chosen)
            why = std::string("chosen by WEFT_DEVICE=") + env;
        else if (dev.is_cuda())
            why = "the first CUDA GPU: " + weft::device_info(dev).name + pick;
        else
            why = "no GPU can be used: " + weft::cuda_unavailable_reason() + pick;
        return dev;
    } catch (const weft::Error& e) {
        if (!chosen) throw;
        throw weft::Error(std::string("WEFT_DEVICE=") + env + ": " + e.message());
    }
}

void print_compile(const weft::Module& module, const weft::CompileReport& report) {
    std::printf("module '%s' for %s: %s in %.1f ms\n", module.name().c_str(), report.device.c_str(),
                report.loaded_from_cache ? "loaded from the cache" : "compiled (and cached for the next run)",
                report.milliseconds);
}

// The same kernel body in two modules: plain atomics, and deterministic ones.
auto make_accumulate(weft::Module& m) {
    return m.kernel("accumulate", {"values", "bins", "out"},
                    [](Array<float> values, Array<int> bins, Array<float> out) {
                        auto tid = weft::tid();
                        out[bins[tid]] += values[tid];
                    });
}

// The results of `runs` launches of one mode, and the median time of a launch.
struct Runs {
    std::vector<float> last;
    std::vector<std::vector<float>> all;  // every run's sums
    size_t distinct = 0;
    double median_ms = 0;
};

template <class Kernel>
Runs run_accumulate(const Kernel& kernel, const weft::DeviceArray<float>& values,
                    const weft::DeviceArray<int>& bins, weft::Device dev) {
    Runs r;
    std::set<std::vector<uint32_t>> seen;  // bit patterns, so -0.0 and NaNs count as different
    std::vector<double> ms;
    for (int run = 0; run < runs; ++run) {
        auto out = weft::zeros<float>(num_bins, dev);
        const auto start = std::chrono::steady_clock::now();
        weft::launch(kernel, num_values, values, bins, out);
        weft::synchronize(dev);
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        r.last = out.to_vector();
        r.all.push_back(r.last);
        std::vector<uint32_t> bits(num_bins);
        std::memcpy(bits.data(), r.last.data(), num_bins * sizeof(float));
        seen.insert(bits);
    }
    std::sort(ms.begin(), ms.end());
    r.distinct = seen.size();
    r.median_ms = ms[ms.size() / 2];
    return r;
}

const char* results(size_t n) {
    return n == 1 ? "result" : "results";
}

// Signed distance in units in the last place between two finite floats.
int64_t ulps(float from, float to) {
    auto ordered = [](float f) {
        int32_t i;
        std::memcpy(&i, &f, sizeof i);
        return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
    };
    return ordered(to) - ordered(from);
}

std::string versus_exact(float got, float exact) {
    const int64_t d = ulps(exact, got);
    if (d == 0) return "exact";
    return (d > 0 ? "+" : "") + std::to_string(d) + " ulp";
}

int run_demo() {
    std::string why;
    const weft::Device dev = choose_device(why);
    std::printf("device: %s, %s\n\n", dev.name().c_str(), why.c_str());

    weft::Module plain{"demo_plain"};
    weft::Module deterministic{"demo_deterministic", {.deterministic = weft::Deterministic::RunToRun}};
    auto accumulate_plain = make_accumulate(plain);
    auto accumulate_deterministic = make_accumulate(deterministic);
    // Compaction by slot allocation (the spec's compact_positive), in the deterministic module.
    auto compact_positive =
        deterministic.kernel("compact_positive", {"values", "count", "compacted"},
                             [](Array<float> values, Array<int> count, Array<float> compacted) {
                                 auto tid = weft::tid();
                                 auto v = values[tid];
                                 weft::if_(v > 0.0f, [&] {
                                     auto slot = weft::atomic_add(count, 0, 1);
                                     compacted[slot] = v;
                                 });
                             });
    print_compile(plain, plain.compile(dev));
    print_compile(deterministic, deterministic.compile(dev));

    // Multiples of 2^-24 in [-1, 1]: each value is an exact float, and the exact sum of a bin is
    // an integer count of 2^-24, so the host computes it exactly and rounds it once.
    std::mt19937 rng(42);
    std::uniform_int_distribution<int32_t> units(-(1 << 24), 1 << 24);
    std::vector<float> host_values(num_values);
    std::vector<int> host_bins(num_values);
    std::vector<int64_t> exact_units(num_bins, 0);
    for (int i = 0; i < num_values; ++i) {
        const int32_t k = units(rng);
        host_values[i] = std::ldexp(static_cast<float>(k), -24);
        host_bins[i] = static_cast<int>(rng() % num_bins);
        exact_units[host_bins[i]] += k;
    }
    std::vector<float> exact(num_bins);
    for (int b = 0; b < num_bins; ++b) exact[b] = std::ldexp(static_cast<float>(exact_units[b]), -24);

    auto values = weft::from_vector(host_values, dev);
    auto bins = weft::from_vector(host_bins, dev);
    const Runs p = run_accumulate(accumulate_plain, values, bins, dev);
    const Runs d = run_accumulate(accumulate_deterministic, values, bins, dev);

    std::printf("\naccumulate %d values into %d bins (out[bins[i]] += values[i]), %d runs of each mode\n",
                num_values, num_bins, runs);
    std::printf("%-4s %-16s %-28s %s\n", "bin", "exact (host)", "plain atomics (last run)", "deterministic");
    for (int b = 0; b < num_bins; ++b) {
        char plain_cell[64];
        char det_cell[64];
        std::snprintf(plain_cell, sizeof plain_cell, "%.9g (%s)", p.last[b],
                      versus_exact(p.last[b], exact[b]).c_str());
        std::snprintf(det_cell, sizeof det_cell, "%.9g (%s)", d.last[b],
                      versus_exact(d.last[b], exact[b]).c_str());
        std::printf("%-4d %-16.9g %-28s %s\n", b, exact[b], plain_cell, det_cell);
    }
    std::printf("plain atomics: %zu distinct %s in %d runs, %.2f ms per launch (median)\n", p.distinct,
                results(p.distinct), runs, p.median_ms);
    if (dev.is_cpu() && p.distinct == 1)
        std::printf(
            "               (with one CPU worker thread a kernel's threads run one after another,\n"
            "               so plain atomics add in the same order every run; CPU launches use\n"
            "               WEFT_CPU_THREADS workers, else every hardware thread: %d here)\n",
            weft::device_info(dev).multiprocessors);
    std::printf("deterministic: %zu distinct %s in %d runs, %.2f ms per launch (median)\n", d.distinct,
                results(d.distinct), runs, d.median_ms);
    // Every run, for tools/plot-demo.py: how far each sum lies from the exact one.
    std::printf("\neach run's sum against the exact sum, in ulps (runs 1 to %d):\n", runs);
    for (const auto& [mode, r] : {std::pair<const char*, const Runs*>{"plain", &p}, {"deterministic", &d}})
        for (int b = 0; b < num_bins; ++b) {
            std::printf("%-13s bin %d:", mode, b);
            for (const std::vector<float>& run : r->all)
                std::printf(" %+lld", static_cast<long long>(ulps(exact[b], run[b])));
            std::printf("\n");
        }

    // Compaction: the slots follow thread order, so the output is the same on every run.
    std::set<std::vector<float>> outputs;
    int kept = 0;
    std::vector<float> compacted_values;
    for (int run = 0; run < 3; ++run) {
        auto count = weft::zeros<int>(1, dev);
        auto compacted = weft::zeros<float>(num_values, dev);
        weft::launch(compact_positive, num_values, values, count, compacted);
        kept = count.to_vector()[0];
        compacted_values = compacted.to_vector();
        compacted_values.resize(kept);
        outputs.insert(compacted_values);
    }
    std::printf("\ncompact_positive (deterministic slots): kept %d of %d values; %zu distinct %s in 3 runs\n",
                kept, num_values, outputs.size(), outputs.size() == 1 ? "output" : "outputs");

    const bool det_exact = d.distinct == 1 && d.last == exact;
    if (!det_exact || outputs.size() != 1) {
        std::printf("\nunexpected: deterministic results must repeat and equal the exact sums\n");
        return 1;
    }
    std::printf(
        "\nthe deterministic sums are the exact sums, correctly rounded, and the same on every run\n");
    return 0;
}

}  // namespace

int main() {
    try {
        return run_demo();
    } catch (const weft::Error& e) {
        std::fprintf(stderr, "weft_demo: %s\n", e.what());
        return 1;
    }
}
