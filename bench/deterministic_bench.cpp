// Benchmark (GPU): the spec's Pattern A table and issue 14's rows. One accumulation kernel
// compiled in NotGuaranteed, RunToRun and GpuToGpu modules; each row times CUDA-graph replay of
// zeroing the output plus the launch (CUDA events, median of 50), with ratios to NotGuaranteed in
// the same run, the strategy the launch used and its workspace bytes, and checks that both
// deterministic modes give identical bits. Tables: float32, float16, bfloat16, float64 (the half
// rows' plain atomics are the GPU's packed half-pair instruction, device/half.h); the strategies
// side by side on float32; composite elements (vec3, mat33: one accumulation per component);
// then the host time of direct (not captured) launches.
//
// Usage: weft_deterministic_bench [records]   ("records" forces the records strategy)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "graph_replay.hpp"
#include "runtime/backend.hpp"
#include "runtime/det/accumulation.hpp"

namespace {

using weft::Array;
using weft::DeterministicStrategy;

const weft::Device gpu = weft::Device::cuda(0);

// "float32", or "float32x3" for elements of 3 float32 components (a vec3).
template <class T>
std::string element_name() {
    const std::string scalar = weft::dtype_name(weft::scalar_dtype_of<T>);
    const int n = weft::components_of<T>;
    return n == 1 ? scalar : scalar + "x" + std::to_string(n);
}

template <class T>
struct Case {
    weft::Module module;
    weft::Kernel<Array<T>, Array<int>, Array<T>> kernel;
};

template <class T>
Case<T> make_case(weft::Deterministic mode, DeterministicStrategy strategy) {
    weft::Module m{"pattern_a_" + element_name<T>(),
                   {.deterministic = mode, .deterministic_strategy = strategy}};
    auto k = m.kernel("atomic_add_kernel", {"values", "indices", "out"},
                      [](Array<T> values, Array<int> indices, Array<T> out) {
                          auto tid = weft::tid();
                          weft::atomic_add(out, indices[tid], values[tid]);
                      });
    return {m, k};
}

// The strategy a launch of `writes` threads into `out` takes, and its workspace bytes (as the
// runtime plans it: one contribution per thread).
template <class T>
std::pair<std::string, long long> plan_of(DeterministicStrategy strategy, int writes,
                                          const weft::DeviceArray<T>& out) {
    weft::plan::DetTarget t;
    t.dtype = weft::scalar_dtype_of<T>;
    t.records_per_thread = 1;
    const weft::runtime::det::LaunchSite site{"atomic_add_kernel", "bench", 0, writes};
    weft::Options options;
    options.deterministic = weft::Deterministic::RunToRun;
    options.deterministic_strategy = strategy;
    const weft::runtime::Backend& backend = weft::runtime::backend(out.device());
    const bool serial = backend.has_serial_launches() && backend.runs_serial(writes, options);
    const auto plans = weft::runtime::det::plan({t}, {&out}, {"out"}, options, site, serial);
    const auto& p = plans.at(0);
    const char* name = p.records ? "records" : p.compact ? "compact" : "exact";
    return {name, static_cast<long long>(weft::runtime::det::workspace_bytes(p))};
}

template <class T>
struct Inputs {
    weft::DeviceArray<T> values;
    weft::DeviceArray<int> indices;
};

template <class T>
Inputs<T> inputs(int writes, int outputs) {
    using S = typename weft::Layout<T>::scalar;
    std::mt19937 rng(1234);
    std::vector<weft::host_t<T>> v(static_cast<size_t>(writes));
    std::vector<int> idx(static_cast<size_t>(writes));
    for (int i = 0; i < writes; ++i) {
        S c[weft::components_of<T>];
        for (S& x : c) x = S(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
        std::memcpy(&v[i], c, sizeof(c));
        idx[i] = static_cast<int>(rng() % static_cast<unsigned>(outputs));
    }
    return {weft::from_vector<T>(v, gpu), weft::from_vector(idx, gpu)};
}

// Median milliseconds of one replay of a graph holding out.zero_() and the launch.
template <class T>
double replay_ms(const Case<T>& c, int writes, const Inputs<T>& in, weft::DeviceArray<T>& out) {
    weft::launch(c.kernel, writes, in.values, in.indices, out);  // compile and warm up outside the graph
    weft::synchronize(gpu);
    return weft::bench::graph_replay_ms(gpu, [&] {
        out.zero_();
        weft::launch(c.kernel, writes, in.values, in.indices, out);
    });
}

// One table: each row's writes into its outputs, in the three modes.
template <class T>
void table(const std::vector<std::pair<int, int>>& rows, DeterministicStrategy strategy) {
    Case<T> plain = make_case<T>(weft::Deterministic::NotGuaranteed, strategy);
    Case<T> r2r = make_case<T>(weft::Deterministic::RunToRun, strategy);
    Case<T> g2g = make_case<T>(weft::Deterministic::GpuToGpu, strategy);
    std::printf("%s, strategy %s\n%10s %10s | %12s %12s %12s | %9s %9s %8s | %8s %12s %7s | %s\n",
                element_name<T>().c_str(), weft::strategy_name(strategy), "writes", "outputs", "NotGuar. ms",
                "RunToRun ms", "GpuToGpu ms", "R2R/NG", "G2G/NG", "G2G/R2R", "used", "workspace B", "B/elem",
                "bits");
    for (const auto& [writes, outputs] : rows) {
        const Inputs<T> in = inputs<T>(writes, outputs);
        auto out_plain = weft::zeros<T>(outputs, gpu);
        auto out_r2r = weft::zeros<T>(outputs, gpu);
        auto out_g2g = weft::zeros<T>(outputs, gpu);
        const double t_plain = replay_ms(plain, writes, in, out_plain);
        const double t_r2r = replay_ms(r2r, writes, in, out_r2r);
        const double t_g2g = replay_ms(g2g, writes, in, out_g2g);
        const auto a = out_r2r.to_vector();
        const auto b = out_g2g.to_vector();
        const bool same = std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
        const auto [used, workspace] = plan_of<T>(strategy, writes, out_r2r);
        std::printf("%10d %10d | %12.4f %12.4f %12.4f | %8.3fx %8.3fx %7.2fx | %8s %12lld %7.1f | %s\n",
                    writes, outputs, t_plain, t_r2r, t_g2g, t_r2r / t_plain, t_g2g / t_plain, t_g2g / t_r2r,
                    used.c_str(), workspace, static_cast<double>(workspace) / outputs,
                    same ? "R2R == G2G" : "DIFFER");
    }
    std::printf("\n");
}

// float32 rows under each strategy (RunToRun), against plain atomics and the exact strategy; all
// strategies must give the same bits.
void strategies(const std::vector<std::pair<int, int>>& rows) {
    const DeterministicStrategy kinds[] = {DeterministicStrategy::Exact, DeterministicStrategy::Compact,
                                           DeterministicStrategy::Records};
    Case<float> plain = make_case<float>(weft::Deterministic::NotGuaranteed, DeterministicStrategy::Auto);
    std::printf("float32 by strategy (RunToRun)\n%10s %10s | %12s | %9s %8s %8s | %9s %9s %9s | %s\n",
                "writes", "outputs", "NotGuar. ms", "exact ms", "compact", "records", "C/NG", "R/NG",
                "R/exact", "bits");
    for (const auto& [writes, outputs] : rows) {
        const Inputs<float> in = inputs<float>(writes, outputs);
        auto out = weft::zeros<float>(outputs, gpu);
        const double t_plain = replay_ms(plain, writes, in, out);
        double t[3];
        std::vector<float> results[3];
        for (int k = 0; k < 3; ++k) {
            Case<float> c = make_case<float>(weft::Deterministic::RunToRun, kinds[k]);
            auto o = weft::zeros<float>(outputs, gpu);
            t[k] = replay_ms(c, writes, in, o);
            results[k] = o.to_vector();
        }
        const bool same = std::memcmp(results[0].data(), results[1].data(), results[0].size() * 4) == 0 &&
                          std::memcmp(results[0].data(), results[2].data(), results[0].size() * 4) == 0;
        std::printf("%10d %10d | %12.4f | %9.4f %8.4f %8.4f | %8.3fx %8.3fx %8.2fx | %s\n", writes, outputs,
                    t_plain, t[0], t[1], t[2], t[1] / t_plain, t[2] / t_plain, t[2] / t[0],
                    same ? "all equal" : "DIFFER");
    }
    std::printf("\n");
}

// Host microseconds per direct launch (the call alone, 200 back to back after a warm-up; the
// GPU keeps up at these sizes), plain and deterministic; and the microseconds per launch of the
// same 200 launches until the GPU has run them (what a stream of direct launches sustains).
void direct_launches(const std::vector<std::pair<int, int>>& rows) {
    using Clock = std::chrono::steady_clock;
    Case<float> plain = make_case<float>(weft::Deterministic::NotGuaranteed, DeterministicStrategy::Auto);
    Case<float> det = make_case<float>(weft::Deterministic::RunToRun, DeterministicStrategy::Auto);
    std::printf(
        "direct launches, host time per launch, and time per launch until the GPU is done (float32)\n"
        "%10s %10s | %12s %12s | %8s | %12s %12s | %8s | %8s\n",
        "writes", "outputs", "NotGuar. us", "RunToRun us", "R2R/NG", "NG done us", "R2R done us", "R2R/NG",
        "used");
    for (const auto& [writes, outputs] : rows) {
        const Inputs<float> in = inputs<float>(writes, outputs);
        auto out = weft::zeros<float>(outputs, gpu);
        // (host us, done us)
        auto per_launch = [&](const Case<float>& c) {
            std::vector<double> host, done;
            for (int rep = 0; rep < 5; ++rep) {
                for (int i = 0; i < 20; ++i) weft::launch(c.kernel, writes, in.values, in.indices, out);
                weft::synchronize(gpu);
                const auto start = Clock::now();
                for (int i = 0; i < 200; ++i) weft::launch(c.kernel, writes, in.values, in.indices, out);
                const auto queued = Clock::now();
                weft::synchronize(gpu);
                const auto finished = Clock::now();
                host.push_back(std::chrono::duration<double, std::micro>(queued - start).count() / 200);
                done.push_back(std::chrono::duration<double, std::micro>(finished - start).count() / 200);
            }
            return std::pair{weft::bench::median(host), weft::bench::median(done)};
        };
        const auto [plain_host, plain_done] = per_launch(plain);
        const auto [det_host, det_done] = per_launch(det);
        std::printf("%10d %10d | %12.2f %12.2f | %7.2fx | %12.2f %12.2f | %7.2fx | %8s\n", writes, outputs,
                    plain_host, det_host, det_host / plain_host, plain_done, det_done, det_done / plain_done,
                    plan_of<float>(DeterministicStrategy::Auto, writes, out).first.c_str());
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
    const auto strategy = records ? DeterministicStrategy::Records : DeterministicStrategy::Auto;
    const weft::DeviceInfo info = weft::device_info(gpu);
    std::printf("device: %s\n\n", info.name.c_str());
    table<float>({{65536, 1},
                  {262144, 1},
                  {1048576, 1},
                  {65536, 65536},
                  {262144, 65536},
                  {1048576, 65536},
                  {1048576, 1048576}},
                 strategy);
    table<weft::float16>({{1048576, 1}, {1048576, 65536}}, strategy);
    table<weft::bfloat16>({{1048576, 1}, {1048576, 65536}}, strategy);
    table<double>({{1048576, 1}, {1048576, 65536}}, strategy);
    table<weft::vec3>({{1048576, 1}, {1048576, 65536}}, strategy);
    table<weft::mat33>({{1048576, 65536}}, strategy);
    if (records) return 0;
    strategies({{1048576, 1}, {65536, 65536}, {1048576, 65536}, {1048576, 1048576}});
    direct_launches({{1024, 1}, {1024, 1024}, {65536, 65536}, {1048576, 65536}});
    return 0;
}
