// The demo: the spec's accumulation and compaction kernels on the default device.
#include <cstdio>
#include <numeric>

#include <weft/weft.hpp>

int main() {
    weft::Module sim{"demo"};

    auto accumulate = sim.kernel("accumulate", {"values", "bins", "out"},
                                 [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
                                     auto tid = weft::tid();
                                     out[bins[tid]] += values[tid];
                                 });

    auto compact_positive = sim.kernel(
        "compact_positive", {"values", "count", "compacted"},
        [](weft::Array<float> values, weft::Array<int> count, weft::Array<float> compacted) {
            auto tid = weft::tid();
            auto v = values[tid];
            weft::if_(v > 0.0f, [&] {
                auto slot = weft::atomic_add(count, 0, 1);
                compacted[slot] = v;
            });
        });

    const weft::Device dev = weft::default_device();
    std::printf("device: %s\n", dev.name().c_str());

    const int n = 4096;
    const int num_bins = 8;
    std::vector<float> host_values(n);
    std::vector<int> host_bins(n);
    for (int i = 0; i < n; ++i) {
        host_values[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
        host_bins[i] = (i * 7) % num_bins;
    }
    auto values = weft::from_vector(host_values, dev);
    auto bins = weft::from_vector(host_bins, dev);
    auto out = weft::zeros<float>(num_bins, dev);
    weft::launch(accumulate, n, values, bins, out);
    std::printf("accumulate: %d values into %d bins:", n, num_bins);
    for (float v : out.to_vector()) std::printf(" %g", v);
    std::printf("\n");

    auto count = weft::zeros<int>(1, dev);
    auto compacted = weft::zeros<float>(n, dev);
    weft::launch(compact_positive, n, values, count, compacted);
    const int kept = count.to_vector()[0];
    const auto kept_values = compacted.to_vector();
    std::printf("compact_positive: kept %d of %d values; first five:", kept, n);
    for (int i = 0; i < 5 && i < kept; ++i) std::printf(" %g", kept_values[i]);
    std::printf("\n");
    return 0;
}
