// float16 and bfloat16 on a GPU: the CPU's bits for arithmetic and for deterministic sums (hot
// destinations, many outputs, a million threads, every block size), and plain atomics on
// neighbouring 16-bit elements under contention.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/half_cases.hpp"

namespace {

using weft::Array;
using weft::bfloat16;
using weft::float16;
using weft::test::agree;
using weft::test::Config;
using weft::test::half_case;
using weft::test::half_oracle;
using weft::test::half_suite;
using weft::test::HalfCase;
using weft::test::kConfigs;
using weft::test::Op;
using weft::test::op_name;
using weft::test::run_half;

const weft::Device gpu = weft::Device::cuda(0);
const weft::Device cpu = weft::Device::cpu();

const Op kGpuOps[] = {Op::Add, Op::MinusEquals, Op::Min, Op::Max};

template <class H>
void check_cpu_matches_gpu(const Config& config, const HalfCase<H>& c) {
    for (Op op : kGpuOps) {
        SCOPED_TRACE(std::string(op_name(op)) + " " + weft::dtype_name(weft::dtype_of<H>) + " " + c.name +
                     " " + config.name);
        const auto& kernel = half_suite(config).ops<H>().get(op);
        const auto on_gpu = run_half(kernel, c, gpu);
        EXPECT_TRUE(agree<H>(on_gpu, half_oracle(op, c)));
        EXPECT_EQ(run_half(kernel, c, cpu), on_gpu) << "CPU vs GPU";
        EXPECT_EQ(run_half(kernel, c, gpu), on_gpu) << "a second GPU launch";
    }
}

TEST(HalfGpu, DeterministicSumsGiveTheCpusBits) {
    for (const Config& config : kConfigs) {
        check_cpu_matches_gpu(config, half_case<float16>("few", 100000, 3, -26, 4, 1));
        check_cpu_matches_gpu(config, half_case<bfloat16>("few", 100000, 3, -30, 20, 2));
        check_cpu_matches_gpu(config, half_case<float16>("many", 100000, 70000, -26, 15, 3));
        check_cpu_matches_gpu(config, half_case<bfloat16>("many", 100000, 70000, -140, 20, 4));
        check_cpu_matches_gpu(config, half_case<float16>("million_one", 1048576, 1, -20, 0, 5));
        check_cpu_matches_gpu(config, half_case<float16>("million_65536", 1048576, 65536, -20, 4, 6));
    }
}

TEST(HalfGpu, BlockSizeDoesNotChangeBits) {
    for (const Config& config : kConfigs) {
        weft::OptionsPatch options;
        options.deterministic = config.mode;
        options.deterministic_strategy = config.strategy;
        weft::Module m(std::string("half_gpu_blocks_") + config.name, options);
        const weft::test::OpKernels<float16> kernels(m);
        const auto c = half_case<float16>("hot", 100003, 2, -24, 4, 7);
        const auto want = half_oracle(Op::Add, c);
        for (int block : {256, 32, 1024}) {
            m.set_options({.block_dim = block});
            EXPECT_TRUE(agree<float16>(run_half(kernels.add, c, gpu), want))
                << config.name << " block " << block;
        }
    }
}

// Arithmetic and conversions on the GPU give the CPU's bits for every pattern pair sampled.
TEST(HalfGpu, ArithmeticGivesTheCpusBits) {
    weft::Module m("half_gpu_arithmetic");
    auto k =
        m.kernel("ops", {"a", "b", "out"}, [](Array<float16> a, Array<float16> b, Array<float16, 2> out) {
            auto i = weft::tid();
            weft::Float16 x = a[i];
            weft::Float16 y = b[i];
            out(i, 0) = x + y;
            out(i, 1) = x * y - y;
            out(i, 2) = x / y;
            out(i, 3) = weft::sqrt(weft::abs(x));
            out(i, 4) = weft::cast<float16>(weft::cast<bfloat16>(x) * weft::cast<bfloat16>(y));
            out(i, 5) = weft::cast<float16>(weft::cast<double>(x) * 3.0);
        });
    std::mt19937_64 rng(8);
    std::vector<float16> av, bv;
    for (int i = 0; i < 65536; ++i) {
        av.push_back(float16::from_bits(static_cast<uint16_t>(i)));
        bv.push_back(float16::from_bits(static_cast<uint16_t>(rng())));
    }
    auto run = [&](const weft::Device& d) {
        weft::DeviceArray<float16> out(weft::Shape({65536, 6}), d);
        weft::launch(k, 65536, weft::from_vector(av, d), weft::from_vector(bv, d), out);
        // Which NaN an operation on a NaN gives is the device's (docs/design/0018): every NaN
        // counts as one; every other result must have the same bits.
        std::vector<uint16_t> bits;
        for (float16 h : out.to_vector()) bits.push_back((h.bits & 0x7fffu) > 0x7c00u ? 0x7e00u : h.bits);
        return bits;
    };
    EXPECT_EQ(run(gpu), run(cpu));
}

// Many threads update 16-bit neighbours that share 32-bit words: each update of a word (the
// packed pair add, src/device/half.h) must keep the other half's concurrent updates. Sums of
// ones stay exact integers below 2048.
TEST(HalfGpu, PlainAtomicsKeepNeighbouringHalves) {
    weft::Module m("half_gpu_atomics");
    auto k = m.kernel("add", {"target"}, [](Array<float16> target) {
        auto t = weft::tid();
        weft::atomic_add(target, t % 8, weft::Float16(1));
    });
    auto target = weft::zeros<float16>(8, gpu);
    weft::launch(k, 8 * 2000, target);
    for (float16 h : target.to_vector()) EXPECT_EQ(static_cast<float>(h), 2000.0f);
}

}  // namespace
