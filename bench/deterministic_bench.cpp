// Benchmark (GPU): the spec's Pattern A table. One accumulation kernel compiled in
// NotGuaranteed, RunToRun and GpuToGpu modules; each row times CUDA-graph replay of zeroing the
// output plus the launch (CUDA events, median of 50), with ratios to NotGuaranteed in the same
// run, and checks that both deterministic modes give identical bits. A float32 table, then
// float16 rows (1,048,576 writes into 1 and into 65,536 outputs).
//
// Usage: weft_deterministic_bench [records]   ("records" forces the records strategy)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "graph_replay.hpp"

namespace {

using weft::Array;

const weft::Device gpu = weft::Device::cuda(0);

template <class T>
struct Case {
    weft::Module module;
    weft::Kernel<Array<T>, Array<int>, Array<T>> kernel;
};

template <class T>
Case<T> make_case(weft::Deterministic mode, weft::DeterministicStrategy strategy) {
    weft::Module m{std::string("pattern_a_") + weft::dtype_name(weft::dtype_of<T>),
                   {.deterministic = mode, .deterministic_strategy = strategy}};
    auto k = m.kernel("atomic_add_kernel", {"values", "indices", "out"},
                      [](Array<T> values, Array<int> indices, Array<T> out) {
                          auto tid = weft::tid();
                          weft::atomic_add(out, indices[tid], values[tid]);
                      });
    return {m, k};
}

// Median milliseconds of one replay of a graph holding out.zero_() and the launch.
template <class T>
double replay_ms(const Case<T>& c, int writes, const weft::DeviceArray<T>& values,
                 const weft::DeviceArray<int>& indices, weft::DeviceArray<T>& out) {
    weft::launch(c.kernel, writes, values, indices, out);  // compile and warm up outside the graph
    weft::synchronize(gpu);
    return weft::bench::graph_replay_ms(gpu, [&] {
        out.zero_();
        weft::launch(c.kernel, writes, values, indices, out);
    });
}

// One table: each row's writes into its outputs, in the three modes.
template <class T>
void table(const std::vector<std::pair<int, int>>& rows, bool records, weft::DeterministicStrategy strategy) {
    Case<T> plain = make_case<T>(weft::Deterministic::NotGuaranteed, strategy);
    Case<T> r2r = make_case<T>(weft::Deterministic::RunToRun, strategy);
    Case<T> g2g = make_case<T>(weft::Deterministic::GpuToGpu, strategy);
    std::printf("%s\n%10s %10s | %12s %12s %12s | %9s %9s %8s | %14s | %s\n",
                weft::dtype_name(weft::dtype_of<T>), "writes", "outputs", "NotGuar. ms", "RunToRun ms",
                "GpuToGpu ms", "R2R/NG", "G2G/NG", "G2G/R2R", "workspace B", "bits");
    std::mt19937 rng(1234);
    for (const auto& [writes, outputs] : rows) {
        std::vector<T> v;
        std::vector<int> idx(static_cast<size_t>(writes));
        for (int i = 0; i < writes; ++i) {
            v.push_back(T(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng)));
            idx[i] = static_cast<int>(rng() % static_cast<unsigned>(outputs));
        }
        auto values = weft::from_vector(v, gpu);
        auto indices = weft::from_vector(idx, gpu);
        auto out_plain = weft::zeros<T>(outputs, gpu);
        auto out_r2r = weft::zeros<T>(outputs, gpu);
        auto out_g2g = weft::zeros<T>(outputs, gpu);
        const double t_plain = replay_ms(plain, writes, values, indices, out_plain);
        const double t_r2r = replay_ms(r2r, writes, values, indices, out_r2r);
        const double t_g2g = replay_ms(g2g, writes, values, indices, out_g2g);
        const auto a = out_r2r.to_vector();
        const auto b = out_g2g.to_vector();
        const bool same = std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
        // Exact digits: 9 words and a flag word per element (float16 keeps float32's); records:
        // 12 bytes per record (1024 at least) plus counting buffers of 8 bytes per element and
        // 8 per record.
        const long long workspace =
            records ? 12LL * std::max(writes, 1024) + 8LL * outputs + 8LL * std::max(writes, 1024)
                    : 76LL * outputs;
        std::printf("%10d %10d | %12.4f %12.4f %12.4f | %8.3fx %8.3fx %7.2fx | %14lld | %s\n", writes,
                    outputs, t_plain, t_r2r, t_g2g, t_r2r / t_plain, t_g2g / t_plain, t_g2g / t_r2r,
                    workspace, same ? "R2R == G2G" : "DIFFER");
    }
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (!weft::cuda_available()) {
        std::printf("no GPU: %s\n", weft::cuda_unavailable_reason().c_str());
        return 1;
    }
    const bool records = argc > 1 && std::string(argv[1]) == "records";
    const auto strategy = records ? weft::DeterministicStrategy::Records : weft::DeterministicStrategy::Auto;
    const weft::DeviceInfo info = weft::device_info(gpu);
    std::printf("device: %s; strategy for deterministic modes: %s\n\n", info.name.c_str(),
                weft::strategy_name(strategy));
    table<float>({{65536, 1},
                  {262144, 1},
                  {1048576, 1},
                  {65536, 65536},
                  {262144, 65536},
                  {1048576, 65536},
                  {1048576, 1048576}},
                 records, strategy);
    table<weft::float16>({{1048576, 1}, {1048576, 65536}}, records, strategy);
    return 0;
}
