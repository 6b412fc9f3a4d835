// The demo: the spec's accumulation with plain and with deterministic atomics, and a compaction
// written as count-scan-write, on the default device (the GPU if there is one, else the CPU).
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include <weft/weft.hpp>

using weft::Array;

// The same kernel body in two modules: plain atomics, and deterministic ones.
auto make_accumulate(weft::Module& m) {
    return m.kernel("accumulate", {"values", "bins", "out"}, [](Array<float> values, Array<int> bins, Array<float> out) {
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
    std::printf("accumulate %d values into %d bins, plain atomics: %zu distinct result(s) in 3 runs\n", n, num_bins,
                plain_distinct);
    const size_t det_distinct = distinct_results(accumulate_deterministic, sums);
    std::printf("accumulate, deterministic (RunToRun):  %zu distinct result(s) in 3 runs; sums:", det_distinct);
    for (float s : sums) std::printf(" %.9g", s);
    std::printf("\n");

    // Compaction with a deterministic order: count, scan, write (the spec's manual pattern).
    weft::Module compaction{"demo_compaction"};
    auto count_positive = compaction.kernel("count_positive", {"values", "counts"},
                                            [](Array<float> values, Array<int> counts) {
                                                auto tid = weft::tid();
                                                counts[tid] = weft::cast<int>(values[tid] > 0.0f);
                                            });
    auto write_positive = compaction.kernel(
        "write_positive", {"values", "offsets", "out"}, [](Array<float> values, Array<int> offsets, Array<float> out) {
            auto tid = weft::tid();
            weft::if_(values[tid] > 0.0f, [&] { out[offsets[tid]] = values[tid]; });
        });
    auto counts = weft::empty<int>(n, dev);
    auto offsets = weft::empty<int>(n, dev);
    auto compacted = weft::zeros<float>(n, dev);
    weft::launch(count_positive, n, values, counts);
    weft::array_scan(counts, offsets, false);
    weft::launch(write_positive, n, values, offsets, compacted);
    const int kept = offsets.to_vector().back() + counts.to_vector().back();
    const auto kept_values = compacted.to_vector();
    std::printf("compact positive values: kept %d of %d, in input order; first three: %g %g %g\n", kept, n,
                kept_values[0], kept_values[1], kept_values[2]);
    return det_distinct == 1 ? 0 : 1;
}
