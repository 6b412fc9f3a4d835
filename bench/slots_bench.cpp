// Benchmark (GPU): the spec's Pattern B table. slot = atomic_add(count, 0, 1); out[slot] = v,
// compiled in NotGuaranteed and in RunToRun (slot allocation) modules; times CUDA-graph replay
// of zeroing the counter plus the launch, and direct launches, with CUDA events (medians of 50),
// and checks that the deterministic output repeats exactly. A second table bins 1,048,576
// values through data-dependent counter indices (slot = atomic_add(starts, bins[t], 1), the
// counters starting at each bin's offset) into 1, 16, 256 and 65,536 counter elements.
//
// Usage: weft_slots_bench [ELEMENTS...]   (with element counts: only those rows of the second
// table, for a profiler)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include <weft/weft.hpp>

#include "graph_replay.hpp"

namespace {

using weft::Array;

const weft::Device gpu = weft::Device::cuda(0);
using Counter = weft::Kernel<Array<float>, Array<int>, Array<float>>;

Counter make_kernel(weft::Module& m) {
    return m.kernel("counter_kernel", {"values", "count", "out"},
                    [](Array<float> values, Array<int> count, Array<float> out) {
                        auto tid = weft::tid();
                        auto slot = weft::atomic_add(count, 0, 1);
                        out[slot] = values[tid];
                    });
}

using Binning = weft::Kernel<Array<float>, Array<int>, Array<int>, Array<float>>;

Binning make_binning(weft::Module& m) {
    return m.kernel("binning_kernel", {"values", "bins", "starts", "out"},
                    [](Array<float> values, Array<int> bins, Array<int> starts, Array<float> out) {
                        auto tid = weft::tid();
                        auto slot = weft::atomic_add(starts, bins[tid], 1);
                        out[slot] = values[tid];
                    });
}

// `step` (resetting the counters, then the launch) once outside the graph to compile and warm
// up, then timed as a replay of its capture.
double replay_ms(const std::function<void()>& step) {
    step();
    weft::synchronize(gpu);
    return weft::bench::graph_replay_ms(gpu, step);
}

double direct_ms(const std::function<void()>& step) {
    weft::Event start(gpu), end(gpu);
    std::vector<double> ms;
    for (int r = 0; r < 55; ++r) {
        start.record();
        step();
        end.record();
        end.synchronize();
        if (r >= 5) ms.push_back(weft::Event::elapsed_ms(start, end));
    }
    weft::synchronize(gpu);
    return weft::bench::median(ms);
}

void print_header(const char* first) {
    std::printf("%10s | %12s %12s %8s | %12s %12s %8s | %s\n", first, "graph NG ms", "graph det ms", "ratio",
                "direct NG ms", "direct det", "ratio", "repeats");
}

void print_row(int what, double g_plain, double g_det, double d_plain, double d_det, const char* check) {
    std::printf("%10d | %12.4f %12.4f %7.2fx | %12.4f %12.4f %7.2fx | %s\n", what, g_plain, g_det,
                g_det / g_plain, d_plain, d_det, d_det / d_plain, check);
}

// 1,048,576 values into `elements` bins (a pseudo-random bin per value); the counters start at
// each bin's first slot, so the deterministic output is the stable counting sort of the values.
void binning_row(const Binning& plain, const Binning& det, int elements) {
    const int n = 1 << 20;
    std::vector<float> v(static_cast<size_t>(n));
    std::vector<int> b(static_cast<size_t>(n)), sizes(static_cast<size_t>(elements), 0);
    uint32_t x = 12345;
    for (int i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        v[i] = static_cast<float>(i);
        b[i] = static_cast<int>((x >> 8) % static_cast<uint32_t>(elements));
        ++sizes[b[i]];
    }
    std::vector<int> first(static_cast<size_t>(elements), 0);
    for (int e = 1; e < elements; ++e) first[e] = first[e - 1] + sizes[e - 1];
    std::vector<float> sorted(static_cast<size_t>(n));
    std::vector<int> next = first;
    for (int i = 0; i < n; ++i) sorted[next[b[i]]++] = v[i];
    auto values = weft::from_vector(v, gpu);
    auto bins = weft::from_vector(b, gpu);
    auto firsts = weft::from_vector(first, gpu);
    auto starts = weft::from_vector(first, gpu);
    auto out = weft::zeros<float>(n, gpu);
    const auto step = [&](const Binning& k) {
        return [&, kernel = &k] {
            weft::copy(starts, firsts);
            weft::launch(*kernel, n, values, bins, starts, out);
        };
    };
    const double g_plain = replay_ms(step(plain));
    const double g_det = replay_ms(step(det));
    const double d_plain = direct_ms(step(plain));
    const double d_det = direct_ms(step(det));
    bool exact = true;
    for (int r = 0; r < 2 && exact; ++r) {
        out.zero_();
        step(det)();
        exact = out.to_vector() == sorted && starts.to_vector() == next;
    }
    print_row(elements, g_plain, g_det, d_plain, d_det, exact ? "stable counting sort, identical" : "WRONG");
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> binning_rows;
    for (int i = 1; i < argc; ++i) {
        binning_rows.push_back(std::atoi(argv[i]));
        if (binning_rows.back() < 1) {
            std::printf("usage: weft_slots_bench [ELEMENTS...] (positive counter element counts)\n");
            return 1;
        }
    }
    if (!weft::cuda_available()) {
        std::printf("no GPU: %s\n", weft::cuda_unavailable_reason().c_str());
        return 1;
    }
    std::printf("device: %s\n\n", weft::device_info(gpu).name.c_str());
    weft::Module plain_module{"pattern_b"};
    weft::Module det_module{"pattern_b", {.deterministic = weft::Deterministic::RunToRun}};
    const Counter plain = make_kernel(plain_module);
    const Counter det = make_kernel(det_module);
    if (binning_rows.empty()) print_header("writes");
    for (int n : {65536, 262144, 1048576, 16777216}) {
        if (!binning_rows.empty()) break;  // only the binning rows asked for
        std::vector<float> v(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
        auto values = weft::from_vector(v, gpu);
        auto count = weft::zeros<int>(1, gpu);
        auto out = weft::zeros<float>(n, gpu);
        const auto step = [&](const Counter& k) {
            return [&, kernel = &k] {
                count.zero_();
                weft::launch(*kernel, n, values, count, out);
            };
        };
        const double g_plain = replay_ms(step(plain));
        const double g_det = replay_ms(step(det));
        const double d_plain = direct_ms(step(plain));
        const double d_det = direct_ms(step(det));
        // Deterministic slots are in thread order: out must equal values exactly, every run.
        bool exact = true;
        for (int r = 0; r < 2 && exact; ++r) {
            out.zero_();
            count.zero_();
            weft::launch(det, n, values, count, out);
            exact = out.to_vector() == v && count.to_vector()[0] == n;
        }
        print_row(n, g_plain, g_det, d_plain, d_det, exact ? "thread order, identical" : "WRONG");
    }

    std::printf("\n1,048,576 values binned through data-dependent counter indices\n");
    weft::Module plain_binning{"binning"};
    weft::Module det_binning{"binning", {.deterministic = weft::Deterministic::RunToRun}};
    const Binning plain_bins = make_binning(plain_binning);
    const Binning det_bins = make_binning(det_binning);
    print_header("elements");
    if (binning_rows.empty()) binning_rows = {1, 16, 256, 65536};
    for (int elements : binning_rows) binning_row(plain_bins, det_bins, elements);
    return 0;
}
