// Deterministic accumulation on a GPU: the CPU's bits, for any block size, and exact for a million threads.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/deterministic_cases.hpp"
#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::DeterministicStrategy;
using weft::test::Case;
using weft::test::Config;
using weft::test::kConfigs;
using weft::test::matches_oracle;
using weft::test::Op;
using weft::test::op_name;
using weft::test::OpKernel;
using weft::test::OpKernels;
using weft::test::oracle;
using weft::test::random_case;
using weft::test::run;
using weft::test::same_bits_all;
using weft::test::type_name;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

// The GPU tests run every configuration but GpuToGpuExact.
const std::vector<Config> kGpuConfigs = [] {
    std::vector<Config> configs;
    for (const Config& c : kConfigs)
        if (std::string(c.name) != "GpuToGpuExact") configs.push_back(c);
    return configs;
}();

// The ops the GPU tests run: add, the -= form of subtraction, min and max.
const Op kGpuOps[] = {Op::Add, Op::MinusEquals, Op::Min, Op::Max};

struct Suite {
    weft::Module module;
    OpKernels<float> f32;
    OpKernels<double> f64;

    Suite(const std::string& name, const Config& c)
        : module(name, {.deterministic = c.mode, .deterministic_strategy = c.strategy}),
          f32(module),
          f64(module) {}

    template <class T>
    const OpKernel<T>& get(Op op) const {
        if constexpr (std::is_same_v<T, float>)
            return f32.get(op);
        else
            return f64.get(op);
    }
};

const Suite& suite(const Config& c) {
    static std::map<std::string, std::unique_ptr<Suite>> suites;
    auto& s = suites[c.name];
    if (!s) s = std::make_unique<Suite>(std::string("det_gpu_") + c.name, c);
    return *s;
}

// Special values at known places among random ones: NaN, infinities, signed zeros, values that
// overflow when summed, and cancellations.
template <class T>
Case<T> special_case(int n, uint64_t seed) {
    auto c = random_case<T>("special", n, 64, -30, 30, seed);
    const T m = std::numeric_limits<T>::max();
    const T inf = std::numeric_limits<T>::infinity();
    const T big = std::is_same_v<T, float> ? T(1e20) : T(1e200);
    for (int t = 0; t < n; ++t) {
        const int d = c.index[t];
        if (d == 1) c.values[t] = t % 2 ? m : -m;  // sums to a few max, may overflow
        if (d == 2 && t % 97 == 0) c.values[t] = inf;
        if (d == 3 && t % 89 == 0) c.values[t] = std::numeric_limits<T>::quiet_NaN();
        if (d == 4) c.values[t] = t % 3 == 1 ? T(0.0) : T(-0.0);
        if (d == 5) c.values[t] = t % 2 ? big : -big;
        if (d == 6) c.values[t] = std::numeric_limits<T>::denorm_min() * T(t % 5);
        if (d == 7) c.values[t] = t % 2 ? inf : -inf;
        if (d == 8) c.values[t] = T(-0.0);
    }
    c.initial[4] = T(-0.0);
    c.initial[8] = T(-0.0);
    c.initial[9] = -inf;
    return c;
}

class DeterministicGpu : public ::testing::TestWithParam<Config> {
protected:
    const Suite& s() const { return suite(GetParam()); }
};

// ---------------------------------------------------------------------------------------------
// The CPU and the GPU give the same bits.

template <class T>
void check_cpu_matches_gpu(const Suite& s, const Case<T>& c) {
    for (Op op : kGpuOps) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + type_name<T>() + " " + c.name);
        const auto on_gpu = run(s.get<T>(op), c, gpu);
        EXPECT_TRUE(matches_oracle(on_gpu, oracle(op, c.initial, c.index, c.values)));
        EXPECT_TRUE(same_bits_all(run(s.get<T>(op), c, cpu), on_gpu)) << "CPU vs GPU";
    }
}

TEST_P(DeterministicGpu, CpuAndGpuGiveTheSameBits) {
    check_cpu_matches_gpu(s(), random_case<float>("few", 100000, 3, -30, 30, 1));
    check_cpu_matches_gpu(s(), random_case<double>("few", 100000, 3, -300, 300, 2));
    check_cpu_matches_gpu(s(), random_case<float>("many", 100000, 70000, -30, 30, 3));
    check_cpu_matches_gpu(s(), random_case<double>("many", 100000, 70000, -300, 300, 4));
    check_cpu_matches_gpu(s(), random_case<float>("wide", 50000, 5, -160, 100, 5));
    check_cpu_matches_gpu(s(), random_case<double>("wide", 50000, 5, -1100, 1000, 6));
    check_cpu_matches_gpu(s(), random_case<float>("hot", 100000, 4096, -30, 30, 7, 0.9));
    check_cpu_matches_gpu(s(), random_case<double>("hot", 100000, 4096, -300, 300, 8, 0.9));
    check_cpu_matches_gpu(s(), special_case<float>(50000, 9));
    check_cpu_matches_gpu(s(), special_case<double>(50000, 10));
}

// ---------------------------------------------------------------------------------------------
// The block size does not change the bits.

template <class T>
void check_block_sizes(weft::Module& m, const OpKernels<T>& kernels, const std::vector<Case<T>>& cases) {
    for (const auto& c : cases) {
        for (Op op : kGpuOps) {
            SCOPED_TRACE(std::string(op_name(op)) + " " + type_name<T>() + " " + c.name);
            const auto want = oracle(op, c.initial, c.index, c.values);
            std::vector<T> reference;
            for (int block : {256, 32, 128, 1024}) {
                m.set_options({.block_dim = block});
                const auto got = run(kernels.get(op), c, gpu);
                if (block == 256) {
                    EXPECT_TRUE(matches_oracle(got, want));
                    reference = got;
                } else {
                    EXPECT_TRUE(same_bits_all(got, reference)) << "block_dim " << block << " vs 256";
                }
            }
        }
    }
}

TEST_P(DeterministicGpu, BlockSizeDoesNotChangeBits) {
    // A module of its own: set_options changes it.
    weft::Module m(std::string("det_gpu_blocks_") + GetParam().name,
                   {.deterministic = GetParam().mode, .deterministic_strategy = GetParam().strategy});
    const OpKernels<float> f32(m);
    const OpKernels<double> f64(m);
    // Thread counts that are not multiples of any block size.
    check_block_sizes(
        m, f32,
        {random_case<float>("few", 100003, 2, -40, 40, 11),
         random_case<float>("hot", 100003, 65536, -40, 40, 12, 0.7), special_case<float>(30001, 13)});
    check_block_sizes(
        m, f64,
        {random_case<double>("few", 100003, 2, -400, 400, 14),
         random_case<double>("hot", 100003, 65536, -400, 400, 15, 0.7), special_case<double>(30001, 16)});
}

// ---------------------------------------------------------------------------------------------
// A million threads, repeated: the same bits each time, and the oracle's.

template <class T>
void check_million(const Suite& s, int outputs, int min_exp, int max_exp, uint64_t seed) {
    const auto c = random_case<T>("million", 1000000, outputs, min_exp, max_exp, seed);
    for (Op op : kGpuOps) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + type_name<T>() + " into " + std::to_string(outputs));
        const auto first = run(s.get<T>(op), c, gpu);
        EXPECT_TRUE(matches_oracle(first, oracle(op, c.initial, c.index, c.values)));
        for (int repeat = 1; repeat < 3; ++repeat)
            EXPECT_TRUE(same_bits_all(run(s.get<T>(op), c, gpu), first)) << "repeat " << repeat;
    }
}

TEST_P(DeterministicGpu, MillionThreadsIntoOneOutput) {
    check_million<float>(s(), 1, -140, 40, 21);
    check_million<double>(s(), 1, -1070, 900, 22);
}

TEST_P(DeterministicGpu, MillionThreadsInto65536Outputs) {
    check_million<float>(s(), 65536, -140, 40, 23);
    check_million<double>(s(), 65536, -1070, 900, 24);
}

INSTANTIATE_TEST_SUITE_P(Deterministic, DeterministicGpu, ::testing::ValuesIn(kGpuConfigs),
                         [](const auto& info) { return std::string(info.param.name); });

void check_carrying_sums(DeterministicStrategy strategy);

// Sums that carry (a data-dependent loop) give the CPU's bits for every block size: warp sums,
// returning atomics and carries do not change the value (exact digits, and compact windows).
TEST(DeterministicGpuCarrying, CarryingSumsGiveTheCpusBitsForEveryBlockSize) {
    for (const auto strategy : {DeterministicStrategy::Auto, DeterministicStrategy::Compact})
        check_carrying_sums(strategy);
}

// Compact windows on a GPU: lanes racing to anchor a slot, to claim and zero its spill block and
// to spill (values of every exponent into a few outputs), for every block size, give the CPU's
// bits.
TEST(DeterministicGpuCompact, SpillsGiveTheCpusBitsForEveryBlockSize) {
    const auto c = random_case<float>("wide", 200000, 7, -149, 127, 41);
    std::vector<float> reference;
    for (const int block_dim : {256, 32, 1024}) {
        weft::Module m{"compact_spills_" + std::to_string(block_dim),
                       {.deterministic = Deterministic::RunToRun,
                        .deterministic_strategy = DeterministicStrategy::Compact,
                        .block_dim = block_dim}};
        const OpKernels<float> kernels(m);
        const auto got = run(kernels.get(Op::Add), c, gpu);
        if (reference.empty()) {
            reference = run(kernels.get(Op::Add), c, cpu);
            EXPECT_TRUE(matches_oracle(reference, oracle(Op::Add, c.initial, c.index, c.values)));
        }
        EXPECT_TRUE(same_bits_all(got, reference)) << "block_dim " << block_dim;
    }
}

// First contributions racing on fresh slots: on sm_90 the first sets a slot's window and anchor
// in one 128-bit compare-and-swap, the others see its cell and add to the window or spill. The
// 32 lanes of a warp share a slot (and the warps of a slot run side by side), with values of
// wide exponents so that which contribution anchors decides how the state holds the sum; and a
// strided view takes the resolve's other address path. The CPU's bits, and exact.
TEST(DeterministicGpuCompact, FirstContributionsRacingOnFreshSlotsGiveTheCpusBits) {
    weft::Module m{
        "compact_first_contributions",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Compact}};
    const OpKernels<float> kernels(m);
    for (const int lanes : {32, 1}) {
        SCOPED_TRACE(std::to_string(lanes) + " lanes per slot");
        auto c = random_case<float>("fresh", 1 << 18, 8192, -30, 40, 77);
        for (size_t t = 0; t < c.index.size(); ++t) c.index[t] = static_cast<int>(t / lanes % 8192);
        const auto got = run(kernels.get(Op::Add), c, gpu);
        EXPECT_TRUE(matches_oracle(got, oracle(Op::Add, c.initial, c.index, c.values)));
        EXPECT_TRUE(same_bits_all(got, run(kernels.get(Op::Add), c, cpu))) << "CPU vs GPU";
    }
    // Every third element of an array: a sparse view, whose slots the resolve maps back by strides.
    auto c = random_case<float>("fresh strided", 1 << 18, 8192, -30, 40, 78);
    for (size_t t = 0; t < c.index.size(); ++t) c.index[t] = static_cast<int>(t / 32 % 8192);
    const auto strided = [&](const weft::Device& d) {
        std::vector<float> whole(3 * 8192, 5.0f);
        for (int i = 0; i < 8192; ++i) whole[3 * i] = c.initial[i];
        auto array = weft::from_vector(whole, d);
        weft::launch(kernels.get(Op::Add), static_cast<int64_t>(c.index.size()),
                     weft::from_vector(c.values, d), weft::from_vector(c.index, d),
                     array.slice(0, 0, weft::to_end, 3));
        return array.to_vector();
    };
    const auto on_gpu = strided(gpu);
    EXPECT_TRUE(same_bits_all(on_gpu, strided(cpu))) << "strided, CPU vs GPU";
    std::vector<float> own;
    for (int i = 0; i < 8192; ++i) own.push_back(on_gpu[3 * i]);
    EXPECT_TRUE(matches_oracle(own, oracle(Op::Add, c.initial, c.index, c.values))) << "strided";
}

// Direct launches into the same target reuse its state, which each resolve leaves zeroed: every
// launch adds its own contributions once, on the GPU as on the CPU (exact digits for a small
// target, compact windows for a large one).
TEST(DeterministicGpuState, RepeatedLaunchesIntoOneTargetAddOnce) {
    for (const int outputs : {3, 70000}) {
        SCOPED_TRACE(std::to_string(outputs) + " outputs");
        weft::Module m{"repeated_" + std::to_string(outputs), {.deterministic = Deterministic::RunToRun}};
        const OpKernels<float> kernels(m);
        const auto c = random_case<float>("repeated", 50000, outputs, -40, 40, 42);
        auto values_gpu = weft::from_vector(c.values, gpu);
        auto index_gpu = weft::from_vector(c.index, gpu);
        auto values_cpu = weft::from_vector(c.values, cpu);
        auto index_cpu = weft::from_vector(c.index, cpu);
        auto on_gpu = weft::from_vector(c.initial, gpu);
        auto on_cpu = weft::from_vector(c.initial, cpu);
        const auto n = static_cast<int64_t>(c.index.size());
        for (int launch = 0; launch < 4; ++launch) {
            weft::launch(kernels.get(Op::Add), n, values_gpu, index_gpu, on_gpu);
            weft::launch(kernels.get(Op::Add), n, values_cpu, index_cpu, on_cpu);
            EXPECT_TRUE(same_bits_all(on_gpu.to_vector(), on_cpu.to_vector())) << "launch " << launch;
        }
    }
}

void check_carrying_sums(DeterministicStrategy strategy) {
    SCOPED_TRACE(weft::strategy_name(strategy));
    auto kernel_for = [strategy](int block_dim) {
        weft::Module m{"carrying_" + std::string(weft::strategy_name(strategy)) + std::to_string(block_dim),
                       {.deterministic = Deterministic::RunToRun,
                        .deterministic_strategy = strategy,
                        .block_dim = block_dim}};
        return m.kernel("loop_sums", {"values", "trips", "out"},
                        [](Array<float> values, weft::Int trips, Array<float> out) {
                            auto t = weft::tid();
                            weft::for_(trips, [&](weft::Int k) { out[(t + k) % 3] += values[t]; });
                        });
    };
    std::mt19937 rng(5);
    std::vector<float> v(8192);
    for (float& x : v)
        x = std::ldexp(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng),
                       static_cast<int>(rng() % 40) - 20);
    const auto n = static_cast<int64_t>(v.size());
    auto on_cpu = weft::zeros<float>(3, cpu);
    weft::launch(kernel_for(256), n, weft::from_vector(v, cpu), 64, on_cpu);
    const auto reference = on_cpu.to_vector();
    for (const int block_dim : {32, 256, 1024}) {
        auto out = weft::zeros<float>(3, gpu);
        weft::launch(kernel_for(block_dim), n, weft::from_vector(v, gpu), 64, out);
        EXPECT_TRUE(same_bits_all(out.to_vector(), reference)) << "block_dim " << block_dim;
    }
}

// State larger than any GPU's memory (a 4 GiB float64 target needs 284 GB of exact digits) is a
// weft::Error naming the target, and the target keeps its value.
TEST(DeterministicGpuState, StateBeyondTheGpusMemoryIsAnErrorNamingTheTarget) {
    weft::Module m{
        "gpu_state",
        {.deterministic = Deterministic::RunToRun, .deterministic_strategy = DeterministicStrategy::Exact}};
    auto add = m.kernel("add_one", {"totals"}, [](Array<double> totals) { totals[weft::tid()] += 1.0; });
    auto totals = weft::zeros<double>(int64_t{1} << 29, gpu);
    std::string message;
    try {
        weft::launch(add, 4, totals);
        weft::synchronize(gpu);
    } catch (const weft::Error& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("cannot allocate the deterministic state for array 'totals'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("add_one"), std::string::npos) << message;
    const auto head = totals.slice(0, 0, 8).to_vector();
    EXPECT_EQ(head, std::vector<double>(8, 0.0));
}

// A deterministic launch does not synchronize the host: not testable without timing, so not
// tested here (bench/ measures launches).

}  // namespace
