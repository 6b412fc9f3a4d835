// Finite-difference checks of generated adjoints: central differences in float64.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace weft::test {

// For a kernel (Array<double> x, Array<double> out) launched over `threads`: checks that the
// adjoint's gradient of L = sum_j w_j out_j with respect to x (w_j = 1 + j / 8) equals the
// central difference (L(x + h e_i) - L(x - h e_i)) / 2h, within `tolerance` (relative to
// max(1, |gradient|)). `out` starts at zero on every forward launch.
template <class K>
void check_gradient(const K& kernel, int64_t threads, const std::vector<double>& x, size_t outputs,
                    double tolerance = 1e-6, double h = 1e-6) {
    const Device dev = test_device();
    std::vector<double> w(outputs);
    for (size_t j = 0; j < outputs; ++j) w[j] = 1.0 + static_cast<double>(j) / 8;
    auto loss = [&](const std::vector<double>& at) {
        auto in = from_vector(at, dev);
        auto out = zeros<double>(static_cast<int64_t>(outputs), dev);
        launch(kernel, threads, in, out);
        double l = 0;
        const std::vector<double> o = out.to_vector();
        for (size_t j = 0; j < outputs; ++j) l += w[j] * o[j];
        return l;
    };
    auto in = from_vector(x, dev);
    auto out = zeros<double>(static_cast<int64_t>(outputs), dev);
    launch(kernel, threads, in, out);
    auto in_grad = zeros<double>(static_cast<int64_t>(x.size()), dev);
    auto out_grad = from_vector(w, dev);
    launch_adjoint(kernel, threads, {in_grad, out_grad}, in, out);
    const std::vector<double> g = in_grad.to_vector();
    for (size_t i = 0; i < x.size(); ++i) {
        std::vector<double> plus = x, minus = x;
        plus[i] += h;
        minus[i] -= h;
        const double fd = (loss(plus) - loss(minus)) / (2 * h);
        EXPECT_NEAR(g[i], fd, tolerance * std::max(1.0, std::abs(fd)))
            << "d loss / d x[" << i << "] of kernel " << kernel.name();
    }
}

}  // namespace weft::test
