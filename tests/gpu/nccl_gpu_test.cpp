// NCCL communicators of one process over 1, 2 and 4 GPUs (ncclCommInitAll, a host thread per
// GPU): the deterministic all-reduce (on the GPUs, or through the host's fallback) equals one GPU's
// deterministic accumulation of the same contributions and the exact sum, on every rank, for each GPU count
// the machine has; the plain all-reduce is NCCL's. Skips without NCCL, and each GPU count the machine lacks.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <weft/distributed.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Int;

std::vector<weft::Device> gpus() {
    std::vector<weft::Device> out;
    for (const weft::Device& d : weft::devices())
        if (d.is_cuda()) out.push_back(d);
    return out;
}

// `wide`: some elements' values span more than the two words' window, which sends the whole
// array to the host's fallback; otherwise the exact sum runs on the GPUs (device/distributed_window.h).
float value(int rank, int64_t i, bool wide) {
    std::mt19937_64 rng(static_cast<uint64_t>(rank) * 1000003u + static_cast<uint64_t>(i));
    const float mantissa = 1.0f + static_cast<float>(rng() % 1000000) / 1000000.0f;
    int exponent = static_cast<int>(rng() % 40) - 20;
    if (wide && i % 16 == 3) exponent = static_cast<int>(rng() % 200) - 100;
    return (rng() & 1 ? -1.0f : 1.0f) * std::ldexp(mantissa, exponent);
}

// Runs body(rank) on one host thread per communicator.
template <class F>
void on_ranks(size_t ranks, F&& body) {
    std::vector<std::thread> threads;
    for (size_t r = 0; r < ranks; ++r) threads.emplace_back([&, r] { body(static_cast<int>(r)); });
    for (auto& t : threads) t.join();
}

std::vector<weft::Communicator> communicators(size_t count) {
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // no NVLink multicast on GPUs shared with others
    const std::vector<weft::Device> all = gpus();  // (one vector: both iterators must be into it)
    return weft::Communicator::nccl_all(std::vector<weft::Device>(all.begin(), all.begin() + count));
}

void deterministic_allreduce_on(size_t count, bool wide) {
    const std::vector<weft::Device> all = gpus();
    if (all.size() < count) GTEST_SKIP() << "needs " << count << " GPUs, found " << all.size();
    std::vector<weft::Communicator> comms;
    try {
        comms = communicators(count);
    } catch (const weft::Error& e) {
        GTEST_SKIP() << e.what();
    }
    constexpr int64_t n = 100000;
    std::vector<std::vector<float>> got(count);
    on_ranks(count, [&](int r) {
        std::vector<float> mine(n);
        for (int64_t i = 0; i < n; ++i) mine[static_cast<size_t>(i)] = value(r, i, wide);
        auto a = weft::from_vector(mine, all[static_cast<size_t>(r)]);
        comms[static_cast<size_t>(r)].allreduce_sum(a);
        got[static_cast<size_t>(r)] = a.to_vector();
    });
    // One GPU: every rank's value of element i accumulated deterministically into a zeroed target.
    weft::Module m{"nccl_one_gpu", {.deterministic = weft::Deterministic::RunToRun}};
    auto k = m.kernel("scatter", [](Array<int> index, Array<float> values, Array<float> out) {
        auto t = weft::tid();
        out[index[t]] += values[t];
    });
    std::vector<float> contributions;
    std::vector<int> index;
    for (size_t r = 0; r < count; ++r)
        for (int64_t i = 0; i < n; ++i) {
            contributions.push_back(value(static_cast<int>(r), i, wide));
            index.push_back(static_cast<int>(i));
        }
    auto out = weft::zeros<float>(n, all[0]);
    weft::launch(k, static_cast<int64_t>(contributions.size()), weft::from_vector(index, all[0]),
                 weft::from_vector(contributions, all[0]), out);
    const std::vector<float> one_gpu = out.to_vector();
    for (size_t r = 0; r < count; ++r) {
        EXPECT_EQ(std::memcmp(got[r].data(), one_gpu.data(), n * sizeof(float)), 0) << "rank " << r;
        for (int64_t i = 0; i < n; i += 997) {
            std::vector<float> c;
            for (size_t q = 0; q < count; ++q) c.push_back(value(static_cast<int>(q), i, wide));
            EXPECT_EQ(weft::test::bits_of(got[r][static_cast<size_t>(i)]),
                      weft::test::bits_of(weft::test::exact_sum(0.0f, c)))
                << "rank " << r << " element " << i;
        }
    }
}

TEST(Nccl, DeterministicAllReduceOnOneGpu) {
    deterministic_allreduce_on(1, false);
}
TEST(Nccl, DeterministicAllReduceOnTwoGpus) {
    deterministic_allreduce_on(2, false);
}
TEST(Nccl, DeterministicAllReduceOnFourGpus) {
    deterministic_allreduce_on(4, false);
}
TEST(Nccl, DeterministicAllReduceOfWideValuesOnOneGpu) {
    deterministic_allreduce_on(1, true);
}
TEST(Nccl, DeterministicAllReduceOfWideValuesOnTwoGpus) {
    deterministic_allreduce_on(2, true);
}
TEST(Nccl, DeterministicAllReduceOfWideValuesOnFourGpus) {
    deterministic_allreduce_on(4, true);
}

TEST(Nccl, PlainAllReduceIsNcclsSum) {
    const std::vector<weft::Device> all = gpus();
    if (all.size() < 2) GTEST_SKIP() << "needs 2 GPUs, found " << all.size();
    std::vector<weft::Communicator> comms;
    try {
        comms = communicators(2);
    } catch (const weft::Error& e) {
        GTEST_SKIP() << e.what();
    }
    std::vector<std::vector<float>> got(2);
    on_ranks(2, [&](int r) {
        auto a = weft::from_vector(std::vector<float>(1000, 0.5f + static_cast<float>(r)),
                                   all[static_cast<size_t>(r)]);
        comms[static_cast<size_t>(r)].allreduce_sum(a, weft::Reduction::Plain);
        got[static_cast<size_t>(r)] = a.to_vector();
    });
    for (const auto& g : got)
        for (float v : g) EXPECT_EQ(v, 2.0f);
}

TEST(Nccl, PlainAllReduceOfAnotherDevicesArrayThrowsOnEveryRank) {
    const std::vector<weft::Device> all = gpus();
    if (all.size() < 2) GTEST_SKIP() << "needs 2 GPUs, found " << all.size();
    std::vector<weft::Communicator> comms;
    try {
        comms = communicators(2);
    } catch (const weft::Error& e) {
        GTEST_SKIP() << e.what();
    }
    std::vector<std::string> messages(2);
    on_ranks(2, [&](int r) {
        auto a = weft::zeros<float>(8, r == 1 ? weft::Device::cpu() : all[0]);
        try {
            comms[static_cast<size_t>(r)].allreduce_sum(a, weft::Reduction::Plain);
        } catch (const weft::Error& e) {
            messages[static_cast<size_t>(r)] = e.what();
        }
    });
    EXPECT_NE(messages[1].find("on this rank's GPU"), std::string::npos) << messages[1];
    EXPECT_NE(messages[0].find("rank 1 could not take part"), std::string::npos) << messages[0];
}

}  // namespace
