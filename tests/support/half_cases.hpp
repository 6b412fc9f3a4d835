// Deterministic float16/bfloat16 cases shared by the CPU and GPU tests: a suite of op kernels per
// config, random cases, the oracle (support/half_reference.hpp) and bit comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/deterministic_cases.hpp"
#include "support/half_reference.hpp"

namespace weft::test {

// The half types for typed tests, named by their dtype (Half/float16, Half/bfloat16).
using HalfTypes = ::testing::Types<float16, bfloat16>;
class HalfNames {
public:
    template <class H>
    static std::string GetName(int) {
        return dtype_name(dtype_of<H>);
    }
};

inline std::string hex(uint16_t b) {
    char text[8];
    std::snprintf(text, sizeof text, "0x%04x", b);
    return text;
}

// The op kernels of support/deterministic_cases.hpp over both half types, one module per config.
struct HalfSuite {
    weft::Module module;
    OpKernels<float16> f16;
    OpKernels<bfloat16> bf16;

    explicit HalfSuite(const Config& c)
        : module(std::string("half_det_") + c.name, options(c)), f16(module), bf16(module) {}

    static weft::OptionsPatch options(const Config& c) {
        weft::OptionsPatch p;
        p.deterministic = c.mode;
        p.deterministic_strategy = c.strategy;
        return p;
    }

    template <class H>
    const OpKernels<H>& ops() const {
        if constexpr (std::is_same_v<H, float16>)
            return f16;
        else
            return bf16;
    }
};

inline const HalfSuite& half_suite(const Config& c) {
    static std::map<std::string, std::unique_ptr<HalfSuite>> suites;
    auto& s = suites[c.name];
    if (!s) s = std::make_unique<HalfSuite>(c);
    return *s;
}

template <class H>
using HalfCase = Case<H>;

// The documented result of every destination.
template <class H>
std::vector<uint16_t> half_oracle(Op op, const HalfCase<H>& c) {
    std::vector<std::vector<H>> by(c.initial.size());
    for (size_t t = 0; t < c.index.size(); ++t) {
        H v = c.values[t];
        if (negates(op)) v.bits ^= 0x8000u;
        by[static_cast<size_t>(c.index[t])].push_back(v);
    }
    std::vector<uint16_t> out;
    for (size_t i = 0; i < by.size(); ++i) {
        if (is_sum(op)) {
            out.push_back(reference_sum<H>(c.initial[i], by[i]));
            continue;
        }
        // Min/max under the total order, through float32 (exact), with the float oracle.
        std::vector<float> values;
        for (H v : by[i]) values.push_back(static_cast<float>(v));
        const float init = c.initial[i];
        const float r = op == Op::Min ? total_order_min(init, values) : total_order_max(init, values);
        out.push_back(std::isnan(r) ? reference_round<H>(NAN) : H(r).bits);
    }
    return out;
}

template <class H>
std::vector<uint16_t> run_half(const OpKernel<H>& kernel, const HalfCase<H>& c,
                               const weft::Device& d = test_device()) {
    const auto got = run(kernel, c, d);
    std::vector<uint16_t> bits;
    for (H h : got) bits.push_back(h.bits);
    return bits;
}

template <class H>
::testing::AssertionResult agree(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want) {
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] == want[i] || (half_is_nan<H>(got[i]) && half_is_nan<H>(want[i]))) continue;
        if (bad++ < 5)
            first += "\n  [" + std::to_string(i) + "] got " + hex(got[i]) + ", want " + hex(want[i]);
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << first << "\n  " << bad << " of " << got.size() << " differ";
}

// Random values of H with binary exponents in [min_exp, max_exp] (subnormals below the normal
// range), random signs and significands.
template <class H>
H random_half(std::mt19937_64& rng, int min_exp, int max_exp) {
    constexpr int kM = HalfFields<H>::kMantissa;
    const int e = min_exp + static_cast<int>(rng() % static_cast<uint64_t>(max_exp - min_exp + 1));
    const int biased = std::max(0, e + kHalfBias<H>);
    const uint16_t bits =
        static_cast<uint16_t>(((rng() & 1) << 15) | (biased << kM) | (rng() & ((1u << kM) - 1)));
    return H::from_bits(bits);
}

template <class H>
HalfCase<H> half_case(std::string name, int n, int outputs, int min_exp, int max_exp, uint64_t seed) {
    std::mt19937_64 rng(seed);
    HalfCase<H> c{std::move(name), {}, {}, {}};
    for (int i = 0; i < outputs; ++i) c.initial.push_back(random_half<H>(rng, min_exp, max_exp));
    for (int t = 0; t < n; ++t) {
        c.index.push_back(static_cast<int>(rng() % static_cast<uint64_t>(outputs)));
        c.values.push_back(random_half<H>(rng, min_exp, max_exp));
    }
    return c;
}

}  // namespace weft::test
