// The demo: the spec's accumulation with plain and with deterministic atomics, and its
// compaction by deterministic slot allocation, on the default device (the GPU if there is one,
// else the CPU).
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <weft/weft.hpp>

using weft::Array;

// The same kernel body in two modules: plain atomics, and deterministic ones.
auto make_accumulate(weft::Module& m) {
    return m.kernel("accumulate", {"values", "bins", "out"},
                    [](Array<float> values, Array<int> bins, Array<float> out) {
                        auto tid = weft::tid();
                        out[bins[tid]] += values[tid];
                    });
}

int main() {
    const weft::Device dev = weft::default_device();
    std::printf("device: %s\n", dev.name().c_str());

    weft::Module plain{"demo_plain"};
    weft::Module deterministic{"demo_deterministic", {.deterministic = weft::Deterministic::RunToRun}};
    auto accumulate_plain = make_accumulate(plain);
    auto accumulate_deterministic = make_accumulate(deterministic);

    const int n = 1 << 20;
    const int num_bins = 4;
    std::mt19937 rng(42);
    std::vector<float> host_values(n);
    std::vector<int> host_bins(n);
    for (int i = 0; i < n; ++i) {
        host_values[i] = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        host_bins[i] = static_cast<int>(rng() % num_bins);
    }
    auto values = weft::from_vector(host_values, dev);
    auto bins = weft::from_vector(host_bins, dev);

    // Three runs of each; count the distinct bit patterns of the results.
    auto distinct_results = [&](const auto& kernel, std::vector<float>& last) {
        std::set<std::string> seen;
        for (int run = 0; run < 3; ++run) {
            auto out = weft::zeros<float>(num_bins, dev);
            weft::launch(kernel, n, values, bins, out);
            last = out.to_vector();
            seen.insert(std::string(reinterpret_cast<const char*>(last.data()), last.size() * sizeof(float)));
        }
        return seen.size();
    };
    std::vector<float> sums;
    const size_t plain_distinct = distinct_results(accumulate_plain, sums);
    std::printf("accumulate %d values into %d bins, plain atomics: %zu distinct result(s) in 3 runs\n", n,
                num_bins, plain_distinct);
    const size_t det_distinct = distinct_results(accumulate_deterministic, sums);
    std::printf("accumulate, deterministic (RunToRun):  %zu distinct result(s) in 3 runs; sums:",
                det_distinct);
    for (float s : sums) std::printf(" %.9g", s);
    std::printf("\n");

    // Compaction by slot allocation (the spec's compact_positive) in the deterministic module:
    // the slots follow thread order, so the output is the same on every run.
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
    std::set<std::string> outputs;
    int kept = 0;
    std::vector<float> compacted_values;
    for (int run = 0; run < 3; ++run) {
        auto count = weft::zeros<int>(1, dev);
        auto compacted = weft::zeros<float>(n, dev);
        weft::launch(compact_positive, n, values, count, compacted);
        kept = count.to_vector()[0];
        compacted_values = compacted.to_vector();
        outputs.insert(
            std::string(reinterpret_cast<const char*>(compacted_values.data()), kept * sizeof(float)));
    }
    std::printf(
        "compact_positive, deterministic: kept %d of %d, %zu distinct output order(s) in 3 runs; first "
        "three: "
        "%g %g %g\n",
        kept, n, outputs.size(), compacted_values[0], compacted_values[1], compacted_values[2]);
    return det_distinct == 1 && outputs.size() == 1 ? 0 : 1;
}
