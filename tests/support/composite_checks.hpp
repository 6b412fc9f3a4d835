// Runs composite-value kernels over random inputs and compares every output component with a
// host reference computed in double (exactly for integer element types).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace weft::test {

// What a check's kernel sees: thread i reads its k inputs and writes its m outputs.
template <class T>
struct Io {
    Array<T> in;
    Array<T> out;
    Int i;
    int k;
    int m;

    Scalar<T> operator()(int j) const { return in[i * k + j]; }
    template <int N>
    vec<N, T> v(int j) const {
        vec<N, T> r;
        for (int c = 0; c < N; ++c) r[c] = (*this)(j + c);
        return r;
    }
    template <int R, int C>
    mat<R, C, T> mx(int j) const {
        mat<R, C, T> r;
        for (int a = 0; a < R; ++a)
            for (int b = 0; b < C; ++b) r[a][b] = (*this)(j + a * C + b);
        return r;
    }
    quat_t<T> q(int j) const { return quat_t<T>((*this)(j), (*this)(j + 1), (*this)(j + 2), (*this)(j + 3)); }

    void put(int j, const Scalar<T>& x) const { out[i * m + j] = x; }
    template <int N>
    void put(int j, const vec<N, T>& x) const {
        for (int c = 0; c < N; ++c) put(j + c, x[c]);
    }
    template <int R, int C>
    void put(int j, const mat<R, C, T>& x) const {
        for (int a = 0; a < R; ++a) put(j + a * C, x[a]);
    }
    void put(int j, const quat_t<T>& x) const {
        for (int c = 0; c < 4; ++c) put(j + c, x[c]);
    }
};

using Values = std::vector<double>;

template <class T>
struct Check {
    std::string name;
    int k;  // inputs per thread
    int m;  // outputs per thread
    std::function<void(const Io<T>&)> body;
    std::function<Values(const Values&)> reference;
    // Fills one thread's k inputs (default: uniform in [-2, 2], integers in [-20, 20]).
    std::function<void(std::mt19937&, Values&)> inputs = {};
};

template <class T>
void uniform_inputs(std::mt19937& rng, Values& in) {
    if constexpr (std::is_integral_v<T>) {
        std::uniform_int_distribution<int> d(-20, 20);
        for (auto& x : in) x = d(rng);
    } else {
        std::uniform_real_distribution<double> d(-2, 2);
        for (auto& x : in) x = d(rng);
    }
}

// Builds every check's kernel in one module (so it compiles once), launches each over `threads`
// threads and compares. `tolerance` bounds |got - want| / (1 + |want|); 0 means bit-exact.
template <class T>
void run_checks(const std::string& module_name, const std::vector<Check<T>>& checks, double tolerance,
                int threads = 64) {
    const Device dev = test_device();
    Module module{module_name};
    std::vector<Kernel<Array<T>, Array<T>>> kernels;
    for (const auto& c : checks)
        kernels.push_back(module.kernel(c.name, {"in", "out"}, [c](Array<T> in, Array<T> out) {
            c.body(Io<T>{in, out, tid(), c.k, c.m});
        }));
    std::mt19937 rng(12345);
    for (size_t n = 0; n < checks.size(); ++n) {
        const auto& c = checks[n];
        SCOPED_TRACE(c.name);
        std::vector<T> host_in;
        std::vector<Values> inputs;
        for (int t = 0; t < threads; ++t) {
            Values in(c.k);
            (c.inputs ? c.inputs : uniform_inputs<T>)(rng, in);
            for (auto& x : in) {
                host_in.push_back(static_cast<T>(x));
                x = static_cast<double>(host_in.back());  // the reference sees the rounded input
            }
            inputs.push_back(in);
        }
        auto in = from_vector(host_in, dev);
        auto out = zeros<T>(int64_t(threads) * c.m, dev);
        launch(kernels[n], threads, in, out);
        const auto got = out.to_vector();
        for (int t = 0; t < threads; ++t) {
            const Values want = c.reference(inputs[t]);
            ASSERT_EQ(want.size(), size_t(c.m));
            for (int j = 0; j < c.m; ++j) {
                const double g = static_cast<double>(got[size_t(t) * c.m + j]);
                if (tolerance == 0)  // an integer reference computed in double may be off by rounding
                    EXPECT_EQ(g, std::round(want[j])) << "thread " << t << " output " << j;
                else
                    EXPECT_LE(std::abs(g - want[j]), tolerance * (1 + std::abs(want[j])))
                        << "thread " << t << " output " << j << ": got " << g << ", want " << want[j];
            }
        }
    }
}

}  // namespace weft::test
