// Gradient arrays: requires_grad at creation, grad() from the host, views sharing their base's gradient.
#include <gtest/gtest.h>

#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::test::error_from;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

TEST(GradientArrays, CreatedZeroedWithTheArraysShape) {
    auto a = weft::ones<float>({3, 4}, dev(), weft::requires_grad);
    ASSERT_TRUE(a.requires_grad());
    auto g = a.grad();
    EXPECT_EQ(g.shape(), a.shape());
    EXPECT_EQ(g.dtype(), weft::DType::Float32);
    EXPECT_EQ(g.to_vector(), std::vector<float>(12, 0.0f));
    EXPECT_FALSE(weft::zeros<float>(3, dev()).requires_grad());
    auto b = weft::from_vector<double>({1, 2}, dev(), weft::requires_grad);
    EXPECT_EQ(b.grad().to_vector(), std::vector<double>(2, 0.0));
}

TEST(GradientArrays, RequiresGradKeepsAnExistingGradient) {
    auto a = weft::zeros<float>(4, dev(), weft::requires_grad);
    a.grad().fill_(2.0f);
    a.requires_grad_();
    EXPECT_EQ(a.grad().to_vector(), std::vector<float>(4, 2.0f));
}

TEST(GradientArrays, ViewsShareTheBasesGradientWithTheSameGeometry) {
    auto a = weft::zeros<float>({4, 6}, dev(), weft::requires_grad);
    auto row = a[2];
    auto strided = a.slice(1, 1, weft::to_end, 2);  // columns 1, 3, 5
    ASSERT_TRUE(row.requires_grad());
    row.grad().fill_(1.0f);
    strided.grad().fill_(5.0f);
    const std::vector<float> g = a.grad().to_vector();
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) {
            const float expected = j % 2 == 1 ? 5.0f : (i == 2 ? 1.0f : 0.0f);
            EXPECT_EQ(g[i * 6 + j], expected) << i << ", " << j;
        }
    EXPECT_EQ(strided.grad().shape(), strided.shape());
    EXPECT_EQ(strided.grad().stride(1), strided.stride(1));
    // Gradients made through a view belong to the base too.
    auto b = weft::zeros<double>(8, dev());
    b.slice(0, 2, 4).requires_grad_();
    EXPECT_TRUE(b.requires_grad());
    EXPECT_EQ(b.grad().size(), 8);
}

TEST(GradientArrays, Rejections) {
    auto ints = weft::zeros<int>(4, dev());
    EXPECT_TRUE(
        has(error_from([&] { ints.requires_grad_(); }).message(), "only float arrays have gradients"));
    auto plain = weft::zeros<float>(4, dev());
    const weft::Error e = error_from([&] { (void)plain.grad(); });
    EXPECT_TRUE(has(e.message(), "has no gradient; create it with weft::requires_grad")) << e.what();
    EXPECT_TRUE(has(e.file(), "autodiff_arrays_test.cpp"));
}

}  // namespace
