// Benchmark: forward and backward of the spec's gather (1,048,576 reads from 65,536 or from 1
// source element), plain against deterministic (RunToRun), on the default device; then one
// thread's loop carrying its state, forward and backward, for 16k to a million iterations.
//
// The backward is the generated adjoint launched by hand (weft::launch_adjoint): it scatters each
// read's output gradient into the values' gradient, an atomic add per thread; each run zeroes that
// gradient first. On a GPU: medians of CUDA-graph replays timed with events (bench/graph_replay.hpp);
// on the CPU: medians of `repeats` runs (default 21) on a host clock. Usage: weft_autodiff_bench [repeats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "graph_replay.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using weft::Array;

constexpr int kReads = 1 << 20;

template <class F>
double median_ms(int repeats, weft::Device dev, F run) {
    if (!dev.is_cpu()) {
        run();  // compiles outside the capture
        return weft::bench::graph_replay_ms(dev, run);
    }
    std::vector<double> ms;
    run();  // compiles and warms up
    weft::Stream::current(dev).synchronize();
    for (int r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        run();
        weft::Stream::current(dev).synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

struct Row {
    double forward, backward;
};

Row measure(weft::Deterministic mode, int sources, int repeats, weft::Device dev) {
    auto gather = weft::unique_kernel("gather", {.deterministic = mode}, {"values", "indices", "out"},
                                      [](Array<float> values, Array<int> indices, Array<float> out) {
                                          auto tid = weft::tid();
                                          out[tid] = values[indices[tid]];
                                      });
    std::mt19937 rng(3);
    std::vector<int> idx(kReads);
    for (int& i : idx) i = static_cast<int>(rng() % static_cast<unsigned>(sources));
    auto values = weft::ones<float>(sources, dev);
    auto indices = weft::from_vector(idx, dev);
    auto out = weft::zeros<float>(kReads, dev);
    auto values_grad = weft::zeros<float>(sources, dev);
    auto out_grad = weft::ones<float>(kReads, dev);
    Row row{};
    row.forward = median_ms(repeats, dev, [&] { weft::launch(gather, kReads, values, indices, out); });
    row.backward = median_ms(repeats, dev, [&] {
        values_grad.zero_();
        weft::launch_adjoint(gather, kReads, {values_grad, weft::AnyArray(), out_grad}, values, indices, out);
    });
    return row;
}

// One thread's loop of `n` iterations carrying its product (p = p * q): forward and backward
// (the adjoint sweeps the loop from checkpoints of p, docs/design/0031; it replayed every
// iteration before each one it swept, quadratic in n, before).
Row carried_loop(int n, int repeats, weft::Device dev) {
    auto product = weft::unique_kernel("carried_product", {}, {"x", "n", "out"},
                                       [](Array<double> x, Array<int> n, Array<double> out) {
                                           weft::Double p = x[0];
                                           weft::for_(n[0], [&](weft::Int) { p = p * x[1]; });
                                           out[0] = p;
                                       });
    auto x = weft::from_vector<double>({0.75, 1.0 + 1e-7}, dev);
    auto trips = weft::from_vector<int>({n}, dev);
    auto out = weft::zeros<double>(1, dev);
    auto x_grad = weft::zeros<double>(2, dev);
    auto out_grad = weft::ones<double>(1, dev);
    Row row{};
    row.forward = median_ms(repeats, dev, [&] { weft::launch(product, 1, x, trips, out); });
    row.backward = median_ms(repeats, dev, [&] {
        x_grad.zero_();
        weft::launch_adjoint(product, 1, {x_grad, weft::AnyArray(), out_grad}, x, trips, out);
    });
    return row;
}

}  // namespace

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
    const weft::Device dev = weft::default_device();
    std::printf("device %s, gather of %d reads, median ms of %s\n\n", dev.name().c_str(), kReads,
                dev.is_cpu() ? (std::to_string(repeats) + " runs").c_str() : "50 graph replays");
    std::printf(
        "| sources | plain forward | plain backward | deterministic forward | deterministic backward | "
        "deterministic / plain backward |\n|---|---|---|---|---|---|\n");
    for (int sources : {65536, 1}) {
        const Row plain = measure(weft::Deterministic::NotGuaranteed, sources, repeats, dev);
        const Row det = measure(weft::Deterministic::RunToRun, sources, repeats, dev);
        std::printf("| %d | %.4f | %.4f | %.4f | %.4f | %.2fx |\n", sources, plain.forward, plain.backward,
                    det.forward, det.backward, det.backward / plain.backward);
    }
    std::printf("\none thread's loop carrying its state (p = p * q), median ms of %d\n\n",
                std::min(repeats, 5));
    std::printf("| iterations | forward | backward | backward / forward |\n|---|---|---|---|\n");
    for (int n : {16384, 81920, 1048576}) {
        const Row r = carried_loop(n, std::min(repeats, 5), dev);
        std::printf("| %d | %.3f | %.3f | %.1fx |\n", n, r.forward, r.backward, r.backward / r.forward);
    }
}
