// Benchmark (GPU): the public graph API. Direct launches against replays of weft::capture graphs
// of a deterministic accumulation and a slot allocation (zeroing included), and a capture_while
// loop of ten accumulations against ten direct launches; CUDA events, medians of 50 after 5
// warm-ups.
//
// Usage: weft_graphs_bench
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
#include <weft/weft.hpp>

namespace {

using weft::Array;

const weft::Device gpu = weft::Device::cuda(0);

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median milliseconds of `work` queued between two events.
double time_ms(const std::function<void()>& work) {
    weft::Event start(gpu), end(gpu);
    std::vector<double> ms;
    for (int r = 0; r < 55; ++r) {
        start.record();
        work();
        end.record();
        end.synchronize();
        if (r >= 5) ms.push_back(weft::Event::elapsed_ms(start, end));
    }
    weft::synchronize(gpu);
    return median(ms);
}

void row(const char* what, double direct, double graph) {
    std::printf("%-44s | %10.4f %10.4f %8.2f\n", what, direct, graph, graph / direct);
}

}  // namespace

int main() {
    if (!weft::cuda_available()) {
        std::printf("no GPU: %s\n", weft::cuda_unavailable_reason().c_str());
        return 1;
    }
    std::printf("device: %s\n\n%-44s | %10s %10s %8s\n", weft::device_info(gpu).name.c_str(), "work",
                "direct ms", "graph ms", "ratio");
    weft::Module det{"graphs_bench", {.deterministic = weft::Deterministic::RunToRun}};
    auto accumulate = det.kernel("graphs_accumulate", {"values", "bins", "sums"},
                                 [](Array<float> values, Array<int> bins, Array<float> sums) {
                                     auto t = weft::tid();
                                     weft::atomic_add(sums, bins[t], values[t]);
                                 });
    auto compact = det.kernel("graphs_compact", {"values", "count", "out"},
                              [](Array<float> values, Array<int> count, Array<float> out) {
                                  auto t = weft::tid();
                                  auto slot = weft::atomic_add(count, 0, 1);
                                  out[slot] = values[t];
                              });
    weft::Module plain{"graphs_bench_plain"};
    auto countdown =
        plain.kernel("graphs_countdown", {"left"}, [](Array<int> left) { left[0] = left[0] - 1; });

    const int n = 1 << 20;
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = 1.0f / static_cast<float>(i + 1);
    auto values = weft::from_vector(v, gpu);
    for (int outputs : {1, 65536}) {
        std::vector<int> b(n);
        for (int i = 0; i < n; ++i) b[i] = static_cast<int>((static_cast<long long>(i) * 40503) % outputs);
        auto bins = weft::from_vector(b, gpu);
        auto sums = weft::zeros<float>(outputs, gpu);
        const auto work = [&] {
            sums.zero_();
            weft::launch(accumulate, n, values, bins, sums);
        };
        work();
        const weft::Graph graph = weft::capture(gpu, work);
        char what[64];
        std::snprintf(what, sizeof what, "accumulation, 1M writes -> %d output(s)", outputs);
        row(what, time_ms(work), time_ms([&] { graph.launch(); }));
    }
    {
        auto count = weft::zeros<int>(1, gpu);
        auto out = weft::zeros<float>(n, gpu);
        const auto work = [&] {
            count.zero_();
            weft::launch(compact, n, values, count, out);
        };
        work();
        const weft::Graph graph = weft::capture(gpu, work);
        row("slot allocation, 1M threads -> 1 counter", time_ms(work), time_ms([&] { graph.launch(); }));
    }
    {
        std::vector<int> b(n);
        for (int i = 0; i < n; ++i) b[i] = i % 1024;
        auto bins = weft::from_vector(b, gpu);
        auto sums = weft::zeros<float>(1024, gpu);
        auto left = weft::zeros<int>(1, gpu);
        auto ten = weft::full<int>(1, 10, gpu);
        weft::launch(countdown, 1, left);
        const auto ten_launches = [&] {
            for (int i = 0; i < 10; ++i) weft::launch(accumulate, n, values, bins, sums);
        };
        ten_launches();
        const weft::Graph loop = weft::capture(gpu, [&] {
            weft::copy(left, ten);
            weft::capture_while(left, [&] {
                weft::launch(accumulate, n, values, bins, sums);
                weft::launch(countdown, 1, left);
            });
        });
        row("10 accumulations (1M -> 1024): capture_while", time_ms(ten_launches),
            time_ms([&] { loop.launch(); }));
    }
    return 0;
}
