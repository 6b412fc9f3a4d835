// Helpers shared by the CPU and GPU deterministic-accumulation tests: configs, ops, kernels, cases, oracle.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace weft::test {

// ---------------------------------------------------------------------------------------------
// Module configurations: every strategy, in both deterministic modes.

struct Config {
    const char* name;
    Deterministic mode;
    DeterministicStrategy strategy;
};

inline constexpr Config kConfigs[] = {
    {"RunToRunAuto", Deterministic::RunToRun, DeterministicStrategy::Auto},
    {"RunToRunExact", Deterministic::RunToRun, DeterministicStrategy::Exact},
    {"RunToRunRecords", Deterministic::RunToRun, DeterministicStrategy::Records},
    {"RunToRunCompact", Deterministic::RunToRun, DeterministicStrategy::Compact},
    {"GpuToGpuAuto", Deterministic::GpuToGpu, DeterministicStrategy::Auto},
    {"GpuToGpuExact", Deterministic::GpuToGpu, DeterministicStrategy::Exact},
    {"GpuToGpuRecords", Deterministic::GpuToGpu, DeterministicStrategy::Records},
    {"GpuToGpuCompact", Deterministic::GpuToGpu, DeterministicStrategy::Compact},
};

inline void PrintTo(const Config& c, std::ostream* os) {
    *os << c.name;
}

// ---------------------------------------------------------------------------------------------
// The accumulating ops, one kernel each.

enum class Op { Add, Sub, PlusEquals, MinusEquals, Min, Max };
inline constexpr Op kOps[] = {Op::Add, Op::Sub, Op::PlusEquals, Op::MinusEquals, Op::Min, Op::Max};

inline const char* op_name(Op op) {
    switch (op) {
        case Op::Add: return "atomic_add";
        case Op::Sub: return "atomic_sub";
        case Op::PlusEquals: return "+=";
        case Op::MinusEquals: return "-=";
        case Op::Min: return "atomic_min";
        case Op::Max: return "atomic_max";
    }
    return "?";
}

inline bool is_sum(Op op) {
    return op != Op::Min && op != Op::Max;
}
inline bool negates(Op op) {
    return op == Op::Sub || op == Op::MinusEquals;
}

template <class T>
std::string type_name() {
    return weft::dtype_name(weft::dtype_of<T>);
}

// out[index[t]] <op> values[t], one kernel per op.
template <class T>
using OpKernel = weft::Kernel<Array<T>, Array<int>, Array<T>>;

template <class T>
struct OpKernels {
    OpKernel<T> add, sub, plus_equals, minus_equals, min, max;

    explicit OpKernels(weft::Module& m)
        : add(m.kernel("add_" + type_name<T>(), {"values", "index", "out"},
                       [](Array<T> values, Array<int> index, Array<T> out) {
                           auto t = weft::tid();
                           weft::atomic_add(out, index[t], values[t]);
                       })),
          sub(m.kernel("sub_" + type_name<T>(), {"values", "index", "out"},
                       [](Array<T> values, Array<int> index, Array<T> out) {
                           auto t = weft::tid();
                           weft::atomic_sub(out, index[t], values[t]);
                       })),
          plus_equals(m.kernel("plus_equals_" + type_name<T>(), {"values", "index", "out"},
                               [](Array<T> values, Array<int> index, Array<T> out) {
                                   auto t = weft::tid();
                                   out[index[t]] += values[t];
                               })),
          minus_equals(m.kernel("minus_equals_" + type_name<T>(), {"values", "index", "out"},
                                [](Array<T> values, Array<int> index, Array<T> out) {
                                    auto t = weft::tid();
                                    out[index[t]] -= values[t];
                                })),
          min(m.kernel("min_" + type_name<T>(), {"values", "index", "out"},
                       [](Array<T> values, Array<int> index, Array<T> out) {
                           auto t = weft::tid();
                           weft::atomic_min(out, index[t], values[t]);
                       })),
          max(m.kernel("max_" + type_name<T>(), {"values", "index", "out"},
                       [](Array<T> values, Array<int> index, Array<T> out) {
                           auto t = weft::tid();
                           weft::atomic_max(out, index[t], values[t]);
                       })) {}

    const OpKernel<T>& get(Op op) const {
        switch (op) {
            case Op::Add: return add;
            case Op::Sub: return sub;
            case Op::PlusEquals: return plus_equals;
            case Op::MinusEquals: return minus_equals;
            case Op::Min: return min;
            case Op::Max: return max;
        }
        return add;
    }
};

// ---------------------------------------------------------------------------------------------
// Inputs.

template <class T>
struct Case {
    std::string name;
    std::vector<T> initial;  // the target before the launch
    std::vector<int> index;  // thread t's destination
    std::vector<T> values;   // thread t's operand
};

// `n` threads into `outputs` elements, with values whose exponents span [min_exp, max_exp]; with
// `hot` > 0, that fraction of the threads all go to element 0 (one hot destination among cold ones).
template <class T>
Case<T> random_case(std::string name, int n, int outputs, int min_exp, int max_exp, uint64_t seed,
                    double hot = 0.0) {
    std::mt19937_64 rng(seed);
    Case<T> c{std::move(name), {}, {}, {}};
    for (int i = 0; i < outputs; ++i) c.initial.push_back(random_value<T>(rng, min_exp, max_exp));
    for (int t = 0; t < n; ++t) {
        const bool to_hot = hot > 0 && static_cast<double>(rng() % 1000) < hot * 1000;
        c.index.push_back(to_hot ? 0 : static_cast<int>(rng() % static_cast<uint64_t>(outputs)));
        c.values.push_back(random_value<T>(rng, min_exp, max_exp));
    }
    return c;
}

// The documented result of every destination.
template <class T>
std::vector<T> oracle(Op op, const std::vector<T>& initial, const std::vector<int>& index,
                      const std::vector<T>& values) {
    std::vector<T> operands = values;
    if (negates(op))
        for (T& v : operands) v = -v;
    const Reduction r = is_sum(op) ? Reduction::Sum : op == Op::Min ? Reduction::Min : Reduction::Max;
    return reduce_by_destination(r, initial, index, operands);
}

// `kernel` launched on `c`, one thread per contribution, on device `d`.
template <class T>
std::vector<T> run(const OpKernel<T>& kernel, const Case<T>& c, const weft::Device& d = test_device()) {
    auto out = weft::from_vector(c.initial, d);
    weft::launch(kernel, static_cast<int64_t>(c.index.size()), weft::from_vector(c.values, d),
                 weft::from_vector(c.index, d), out);
    return out.to_vector();
}

// ---------------------------------------------------------------------------------------------
// Comparisons.

// Bit-for-bit equality of two results (NaNs included).
template <class T>
::testing::AssertionResult same_bits_all(const std::vector<T>& got, const std::vector<T>& want) {
    const std::string m = mismatches(got, want, false);
    if (m.empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << m;
}

// Agreement with the oracle: bit for bit, any NaN for a NaN.
template <class T>
::testing::AssertionResult matches_oracle(const std::vector<T>& got, const std::vector<T>& want) {
    const std::string m = mismatches(got, want, true);
    if (m.empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << m << " (vs the oracle)";
}

}  // namespace weft::test
