// Benchmark (GPU): the spec's Pattern B table. slot = atomic_add(count, 0, 1); out[slot] = v,
// compiled in NotGuaranteed and in RunToRun (slot allocation) modules; times CUDA-graph replay
// of zeroing the counter plus the launch, and direct launches, with CUDA events (medians of 50),
// and checks that the deterministic output repeats exactly.
//
// Usage: weft_slots_bench
#include <cstdio>
#include <cstring>
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

double replay_ms(const Counter& k, int n, const weft::DeviceArray<float>& values,
                 weft::DeviceArray<int>& count, weft::DeviceArray<float>& out) {
    count.zero_();
    weft::launch(k, n, values, count, out);  // compile and warm up outside the graph
    weft::synchronize(gpu);
    return weft::bench::graph_replay_ms(gpu, [&] {
        count.zero_();
        weft::launch(k, n, values, count, out);
    });
}

double direct_ms(const Counter& k, int n, const weft::DeviceArray<float>& values,
                 weft::DeviceArray<int>& count, weft::DeviceArray<float>& out) {
    weft::Event start(gpu), end(gpu);
    std::vector<double> ms;
    for (int r = 0; r < 55; ++r) {
        start.record();
        count.zero_();
        weft::launch(k, n, values, count, out);
        end.record();
        end.synchronize();
        if (r >= 5) ms.push_back(weft::Event::elapsed_ms(start, end));
    }
    weft::synchronize(gpu);
    return weft::bench::median(ms);
}

}  // namespace

int main() {
    if (!weft::cuda_available()) {
        std::printf("no GPU: %s\n", weft::cuda_unavailable_reason().c_str());
        return 1;
    }
    std::printf("device: %s\n\n", weft::device_info(gpu).name.c_str());
    weft::Module plain_module{"pattern_b"};
    weft::Module det_module{"pattern_b", {.deterministic = weft::Deterministic::RunToRun}};
    const Counter plain = make_kernel(plain_module);
    const Counter det = make_kernel(det_module);
    std::printf("%10s | %12s %12s %8s | %12s %12s %8s | %s\n", "writes", "graph NG ms", "graph det ms",
                "ratio", "direct NG ms", "direct det", "ratio", "repeats");
    for (int n : {65536, 262144, 1048576, 16777216}) {
        std::vector<float> v(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
        auto values = weft::from_vector(v, gpu);
        auto count = weft::zeros<int>(1, gpu);
        auto out = weft::zeros<float>(n, gpu);
        const double g_plain = replay_ms(plain, n, values, count, out);
        const double g_det = replay_ms(det, n, values, count, out);
        const double d_plain = direct_ms(plain, n, values, count, out);
        const double d_det = direct_ms(det, n, values, count, out);
        // Deterministic slots are in thread order: out must equal values exactly, every run.
        bool exact = true;
        for (int r = 0; r < 2 && exact; ++r) {
            out.zero_();
            count.zero_();
            weft::launch(det, n, values, count, out);
            exact = out.to_vector() == v && count.to_vector()[0] == n;
        }
        std::printf("%10d | %12.4f %12.4f %7.2fx | %12.4f %12.4f %7.2fx | %s\n", n, g_plain, g_det,
                    g_det / g_plain, d_plain, d_det, d_det / d_plain,
                    exact ? "thread order, identical" : "WRONG");
    }
    return 0;
}
