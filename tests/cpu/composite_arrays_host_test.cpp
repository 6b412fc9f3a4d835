// Arrays of composite elements (vec, mat, quat, transform) on the host side: layouts, host
// copies, views, component views, gradients, errors, and the per-component deterministic slots
// of composite targets (docs/design/0015).
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/deterministic.h"
// clang-format on

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/det/accumulation.hpp"
#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::DeviceArray;
using weft::Shape;
using weft::test::error_from;
using weft::test::has;
namespace host = weft::host;
namespace det = weft::runtime::det;

weft::Device dev() {
    return weft::test::test_device();
}

// ---------------------------------------------------------------------------------------------
// Host layouts

TEST(CompositeArraysHost, HostStructsHoldTheirComponentsWithoutPadding) {
    using weft::bfloat16;
    using weft::float16;
    EXPECT_EQ(sizeof(host::vec<2, float16>), 4u);
    EXPECT_EQ(sizeof(host::vec<3, float16>), 6u);
    EXPECT_EQ(sizeof(host::vec<4, float16>), 8u);
    EXPECT_EQ(sizeof(host::vec<2, bfloat16>), 4u);
    EXPECT_EQ(sizeof(host::vec<3, bfloat16>), 6u);
    EXPECT_EQ(sizeof(host::vec<4, bfloat16>), 8u);
    EXPECT_EQ(sizeof(host::vec2f), 8u);
    EXPECT_EQ(sizeof(host::vec3f), 12u);
    EXPECT_EQ(sizeof(host::vec4f), 16u);
    EXPECT_EQ(sizeof(host::vec2d), 16u);
    EXPECT_EQ(sizeof(host::vec3d), 24u);
    EXPECT_EQ(sizeof(host::vec4d), 32u);
    EXPECT_EQ(sizeof(host::vec2i), 8u);
    EXPECT_EQ(sizeof(host::vec3i), 12u);
    EXPECT_EQ(sizeof(host::vec4i), 16u);
    EXPECT_EQ(sizeof(host::mat22f), 16u);
    EXPECT_EQ(sizeof(host::mat33f), 36u);
    EXPECT_EQ(sizeof(host::mat44f), 64u);
    EXPECT_EQ(sizeof(host::mat<2, 2, double>), 32u);
    EXPECT_EQ(sizeof(host::mat33d), 72u);
    EXPECT_EQ(sizeof(host::mat<4, 4, double>), 128u);
    EXPECT_EQ(sizeof(host::quatf), 16u);
    EXPECT_EQ(sizeof(host::quatd), 32u);
    EXPECT_EQ(sizeof(host::transformf), 28u);
    EXPECT_EQ(sizeof(host::transformd), 56u);
}

TEST(CompositeArraysHost, ArraysKnowTheirScalarTypeAndComponents) {
    auto v = weft::empty<weft::vec3>(5, dev());
    EXPECT_EQ(v.dtype(), weft::DType::Float32);
    EXPECT_EQ(v.components(), 3);
    EXPECT_EQ(v.element_bytes(), 12u);
    EXPECT_EQ(v.stride(0), 12);
    EXPECT_TRUE(v.is_contiguous());
    auto t = weft::empty<weft::transform_t<double>>({2, 3}, dev());
    EXPECT_EQ(t.dtype(), weft::DType::Float64);
    EXPECT_EQ(t.components(), 7);
    EXPECT_EQ(t.element_bytes(), 56u);
    EXPECT_EQ(t.stride(1), 56);
    EXPECT_EQ(t.stride(0), 3 * 56);
    auto m = weft::empty<weft::mat33>(4, dev());
    EXPECT_EQ(m.components(), 9);
    EXPECT_EQ(m.element_bytes(), 36u);
    // Run-time typed arrays: the old constructor is one component.
    weft::AnyArray any(weft::DType::Int32, {2, 2}, dev());
    EXPECT_EQ(any.components(), 1);
    EXPECT_EQ(any.element_bytes(), 4u);
    weft::AnyArray any3(weft::DType::Float16, 4, {2, 2}, dev());
    EXPECT_EQ(any3.components(), 4);
    EXPECT_EQ(any3.element_bytes(), 8u);
    EXPECT_EQ(any3.stride(0), 16);
    const int line = __LINE__ + 1;
    const weft::Error e = error_from([] { weft::AnyArray(weft::DType::Float32, 0, Shape(3), dev()); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
}

// ---------------------------------------------------------------------------------------------
// Round trips of every element type, 1-D to 4-D

// The element with scalars start, start + 1, ... (a distinct value per component, exact in
// every scalar type for the small counts used here).
template <class E>
weft::host_t<E> element_value(int start) {
    using S = typename weft::Layout<E>::scalar;
    S scalars[weft::components_of<E>];
    for (int c = 0; c < weft::components_of<E>; ++c) scalars[c] = static_cast<S>((start + c) % 250 - 100);
    weft::host_t<E> h;
    std::memcpy(&h, scalars, sizeof(h));
    return h;
}

template <class E>
double scalar_of(const weft::host_t<E>& h, int c) {
    using S = typename weft::Layout<E>::scalar;
    S scalars[weft::components_of<E>];
    std::memcpy(scalars, &h, sizeof(h));
    return static_cast<double>(scalars[c]);
}

template <class E>
std::vector<weft::host_t<E>> values_of(int64_t n, int seed = 0) {
    std::vector<weft::host_t<E>> v;
    for (int64_t k = 0; k < n; ++k) v.push_back(element_value<E>(seed + static_cast<int>(k) * 7));
    return v;
}

template <class H>
bool same_bits(const std::vector<H>& a, const std::vector<H>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(H)) == 0;
}

template <class E>
class CompositeRoundTrip : public testing::Test {};

using weft::bfloat16;
using weft::float16;
using CompositeTypes =
    testing::Types<weft::vec<2, float16>, weft::vec<3, float16>, weft::vec<4, float16>,
                   weft::vec<2, bfloat16>, weft::vec<3, bfloat16>, weft::vec<4, bfloat16>, weft::vec2,
                   weft::vec3, weft::vec4, weft::vec2d, weft::vec3d, weft::vec4d, weft::vec2i, weft::vec3i,
                   weft::vec4i, weft::mat22, weft::mat33, weft::mat44, weft::mat22d, weft::mat33d,
                   weft::mat44d, weft::quat, weft::quatd, weft::transform_t<float>,
                   weft::transform_t<double>>;
TYPED_TEST_SUITE(CompositeRoundTrip, CompositeTypes);

TYPED_TEST(CompositeRoundTrip, FromVectorToVectorAndComponents) {
    using E = TypeParam;
    using S = typename weft::Layout<E>::scalar;
    constexpr int C = weft::components_of<E>;
    for (const Shape& shape : {Shape(5), Shape({2, 3}), Shape({2, 3, 2}), Shape({2, 1, 3, 2})}) {
        const auto values = values_of<E>(shape.size());
        const DeviceArray<E> a = weft::from_vector<E>(values, shape, dev());
        EXPECT_EQ(a.components(), C);
        EXPECT_EQ(a.element_bytes(), sizeof(weft::host_t<E>));
        EXPECT_EQ(a.stride(shape.ndim - 1), static_cast<int64_t>(sizeof(weft::host_t<E>)));
        EXPECT_TRUE(same_bits(a.to_vector(), values)) << "ndim " << shape.ndim;
        // Run-time typed: the scalars lie packed, element by element.
        std::vector<S> scalars(values.size() * C);
        static_cast<const weft::AnyArray&>(a).copy_to_host(scalars.data(), scalars.size() * sizeof(S));
        EXPECT_EQ(std::memcmp(scalars.data(), values.data(), scalars.size() * sizeof(S)), 0);
        // Component c of every element.
        for (int c = 0; c < C; ++c) {
            const DeviceArray<S> comp = a.component(c);
            EXPECT_EQ(comp.components(), 1);
            ASSERT_TRUE(comp.shape() == shape);
            const std::vector<S> got = comp.to_vector();
            for (size_t k = 0; k < values.size(); ++k)
                ASSERT_EQ(static_cast<double>(got[k]), scalar_of<E>(values[k], c)) << "component " << c;
        }
        // to() gives a new array of the same elements.
        const DeviceArray<E> b = a.to(weft::Device::cpu());
        EXPECT_EQ(b.components(), C);
        EXPECT_FALSE(weft::may_share_memory(a, b));
        EXPECT_TRUE(same_bits(b.to_vector(), values));
    }
}

TYPED_TEST(CompositeRoundTrip, ZerosFullAndFill) {
    using E = TypeParam;
    const auto one = element_value<E>(3);
    const auto two = element_value<E>(40);
    const DeviceArray<E> a = weft::full<E>({3, 4}, one, dev());
    EXPECT_TRUE(same_bits(a.to_vector(), std::vector<weft::host_t<E>>(12, one)));
    a.slice(1, 1, weft::to_end, 2).fill_(two);
    auto expect = std::vector<weft::host_t<E>>(12, one);
    for (int i = 0; i < 3; ++i) expect[i * 4 + 1] = expect[i * 4 + 3] = two;
    EXPECT_TRUE(same_bits(a.to_vector(), expect));
    a[1].zero_();
    for (int j = 0; j < 4; ++j) expect[4 + j] = weft::host_t<E>{};
    EXPECT_TRUE(same_bits(a.to_vector(), expect));
    const DeviceArray<E> z = weft::zeros<E>({2, 2, 2}, dev());
    EXPECT_TRUE(same_bits(z.to_vector(), std::vector<weft::host_t<E>>(8)));
}

// ---------------------------------------------------------------------------------------------
// Values deduced from host structs

TEST(CompositeArraysHost, ElementTypesAreDeducedFromHostValues) {
    const auto a = weft::from_vector(std::vector<host::vec3f>{{1, 2, 3}, {4, 5, 6}}, dev());
    static_assert(std::is_same_v<std::remove_const_t<decltype(a)>, DeviceArray<weft::vec3>>);
    EXPECT_EQ(a.to_vector(), (std::vector<host::vec3f>{{1, 2, 3}, {4, 5, 6}}));
    const auto q = weft::full(Shape({2, 2}), host::quatd{0, 0, 0, 1}, dev());
    static_assert(std::is_same_v<std::remove_const_t<decltype(q)>, DeviceArray<weft::quatd>>);
    EXPECT_EQ(q.to_vector(), std::vector<host::quatd>(4, host::quatd{0, 0, 0, 1}));
    const auto b = weft::from_vector<weft::vec2>({{1, 2}, {3, 4}, {5, 6}}, Shape({3}), dev());
    EXPECT_EQ(b.component(1).to_vector(), (std::vector<float>{2, 4, 6}));
    // Scalars are as before.
    const auto f = weft::from_vector(std::vector<float>{1, 2, 3}, dev());
    static_assert(std::is_same_v<std::remove_const_t<decltype(f)>, DeviceArray<float>>);
    EXPECT_EQ(weft::ones<int32_t>(3, dev()).to_vector(), (std::vector<int32_t>{1, 1, 1}));
    const auto bits = weft::from_vector(std::vector<bool>{true, false, true}, dev());
    EXPECT_EQ(bits.to_vector(), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(weft::full<bool>(2, true, dev()).to_vector(), (std::vector<bool>{true, true}));
}

// ---------------------------------------------------------------------------------------------
// Views

// The vec3 of element (i, j) of a 4 x 5 array.
host::vec3f at(int i, int j) {
    const auto f = static_cast<float>(i * 5 + j);
    return {f, f + 0.25f, f + 0.5f};
}

DeviceArray<weft::vec3> grid() {
    std::vector<host::vec3f> values;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) values.push_back(at(i, j));
    return weft::from_vector<weft::vec3>(values, {4, 5}, dev());
}

TEST(CompositeArraysHost, ViewsSelectWholeElements) {
    const auto a = grid();
    std::vector<host::vec3f> want;
    for (int i = 0; i < 4; ++i)
        for (int j = 1; j < 5; j += 2) want.push_back(at(i, j));
    const DeviceArray<weft::vec3> sliced = a.slice(1, 1, weft::to_end, 2);
    EXPECT_EQ(sliced.stride(1), 24);
    EXPECT_EQ(sliced.components(), 3);
    EXPECT_FALSE(sliced.is_contiguous());
    EXPECT_EQ(sliced.to_vector(), want);

    want.clear();
    for (int j = 0; j < 5; ++j) want.push_back(at(2, j));
    EXPECT_EQ(a[2].to_vector(), want);
    EXPECT_EQ(a.select(0, -2).to_vector(), want);

    want.clear();
    for (int i = 0; i < 4; ++i) want.push_back(at(i, 3));
    EXPECT_EQ(a.select(1, 3).to_vector(), want);

    want.clear();
    for (int j = 0; j < 5; ++j)
        for (int i = 0; i < 4; ++i) want.push_back(at(i, j));
    EXPECT_EQ(a.transpose().to_vector(), want);
    EXPECT_EQ(a.transpose(0, 1).to_vector(), want);

    want.clear();
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 5; ++j) want.push_back(at(1, j));
    const DeviceArray<weft::vec3> wide = a[1].broadcast({3, 5});
    EXPECT_EQ(wide.stride(0), 0);
    EXPECT_EQ(wide.to_vector(), want);

    // Views of views, then a component of the result.
    const auto v = a.slice(0, 1, 4, 2).transpose().slice(0, 0, 5, 3);  // (j in {0, 3}, i in {1, 3})
    want = {at(1, 0), at(3, 0), at(1, 3), at(3, 3)};
    EXPECT_EQ(v.to_vector(), want);
    EXPECT_EQ(v.component(2).to_vector(), (std::vector<float>{5.5f, 15.5f, 8.5f, 18.5f}));
    EXPECT_TRUE(weft::may_share_memory(v, a));
    EXPECT_FALSE(weft::may_share_memory(a[0], a[1]));
    EXPECT_TRUE(weft::may_share_memory(a[1].slice(0, 4, 5), a[1].component(2)));  // the last element
}

TEST(CompositeArraysHost, ComponentViewsReadAndWriteTheElements) {
    const auto a = grid();
    const DeviceArray<float> y = a.component(1);
    EXPECT_EQ(y.ndim(), 2);
    EXPECT_EQ(y.stride(0), 60);
    EXPECT_EQ(y.stride(1), 12);
    EXPECT_EQ(y.offset(), 4);
    EXPECT_EQ(static_cast<char*>(y.data()), static_cast<char*>(a.data()) + 4);
    EXPECT_FALSE(y.is_contiguous());
    EXPECT_TRUE(weft::may_share_memory(y, a));
    EXPECT_EQ(y[3].to_vector(), (std::vector<float>{15.25f, 16.25f, 17.25f, 18.25f, 19.25f}));

    // Writes through a component view change only that component.
    y.slice(1, 0, 5, 2).fill_(-1.0f);
    a.component(2)[0].zero_();
    const std::vector<float> column = {7, 8, 9, 10};
    a.select(1, 4).component(0).copy_from_host(column.data(), column.size());
    const auto got = a.to_vector();
    for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 5; ++j) {
            host::vec3f want = at(i, j);
            if (j % 2 == 0) want.y = -1;
            if (i == 0) want.z = 0;
            if (j == 4) want.x = column[i];
            EXPECT_EQ(got[i * 5 + j], want) << i << ", " << j;
        }
    }

    // A copy into a component from a scalar array, and out of one into another component.
    const auto xs = weft::from_vector(std::vector<float>{1, 2, 3, 4, 5}, dev());
    auto line = weft::zeros<weft::vec3>(5, dev());
    weft::copy(line.component(0), xs);
    weft::copy(line.component(2), line.component(0));
    EXPECT_EQ(line.to_vector(),
              (std::vector<host::vec3f>{{1, 0, 1}, {2, 0, 2}, {3, 0, 3}, {4, 0, 4}, {5, 0, 5}}));

    // Matrix entries (r, c); a transform's q.w is component 6.
    auto m = weft::zeros<weft::mat<2, 3, float>>(2, dev());
    m.component(1, 2).fill_(5.0f);
    m.component(0, 1).fill_(3.0f);
    auto mh = m.to_vector();
    EXPECT_EQ(mh[1][1][2], 5.0f);
    EXPECT_EQ(mh[1][0][1], 3.0f);
    EXPECT_EQ(mh[0][1][1], 0.0f);
    EXPECT_EQ(m.component(5).to_vector(), (std::vector<float>{5, 5}));
    auto t = weft::zeros<weft::transform_t<double>>(3, dev());
    t.component(6).fill_(1.0);
    EXPECT_EQ(t.to_vector()[2].q.w, 1.0);
    EXPECT_EQ(t.to_vector()[2].q.z, 0.0);
}

TEST(CompositeArraysHost, CopiesBetweenViews) {
    const auto a = grid();
    auto b = weft::zeros<weft::vec3>({4, 5}, dev());
    // The even columns of a into the even columns of b, through transposed views (3 x 4 each).
    weft::copy(b.transpose().slice(0, 0, 5, 2), a.slice(1, 0, 5, 2).transpose());
    const auto got = b.to_vector();
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) {
            const host::vec3f want = j % 2 == 0 ? at(i, j) : host::vec3f{};
            EXPECT_EQ(got[i * 5 + j], want) << i << ", " << j;
        }
    // Overlapping views of one array: as if the source were read whole first.
    auto line = weft::from_vector<weft::vec2d>({{1, 10}, {2, 20}, {3, 30}, {4, 40}}, dev());
    weft::copy(line.slice(0, 1, 4), line.slice(0, 0, 3));
    EXPECT_EQ(line.to_vector(), (std::vector<host::vec2d>{{1, 10}, {1, 10}, {2, 20}, {3, 30}}));
    // A broadcast source; to() of a strided view is contiguous.
    auto c = weft::zeros<weft::vec2d>({2, 4}, dev());
    weft::copy(c, line.broadcast({2, 4}));
    EXPECT_EQ(c[1].to_vector(), line.to_vector());
    const auto strided = a.slice(0, 0, 4, 3).to(dev());
    EXPECT_TRUE(strided.is_contiguous());
    EXPECT_EQ(strided.to_vector(),
              (std::vector<host::vec3f>{at(0, 0), at(0, 1), at(0, 2), at(0, 3), at(0, 4), at(3, 0), at(3, 1),
                                        at(3, 2), at(3, 3), at(3, 4)}));
}

// ---------------------------------------------------------------------------------------------
// Gradients

TEST(CompositeArraysHost, GradientsHaveTheSameComponents) {
    auto a = weft::zeros<weft::vec3>({3, 2}, dev(), weft::requires_grad);
    const DeviceArray<weft::vec3> g = a.grad();
    EXPECT_EQ(g.components(), 3);
    EXPECT_TRUE(g.shape() == a.shape());
    EXPECT_EQ(g.element_bytes(), 12u);
    EXPECT_EQ(g.to_vector(), std::vector<host::vec3f>(6));
    // A view's gradient is the same view of the base's; a component's is the same component.
    a.slice(0, 1, 3).grad().fill_({1, 2, 3});
    a.component(2).grad()[0].fill_(9.0f);
    EXPECT_EQ(a.grad().to_vector(),
              (std::vector<host::vec3f>{{0, 0, 9}, {0, 0, 9}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}));
    EXPECT_EQ(a.component(1).grad().to_vector(), (std::vector<float>{0, 0, 2, 2, 2, 2}));
    EXPECT_EQ(a.to_vector(), std::vector<host::vec3f>(6));  // the values are untouched
    // A gradient given to a component view is the whole array's.
    auto q = weft::full<weft::quatd>(2, {0, 0, 0, 1}, dev());
    q.component(3).requires_grad_();
    EXPECT_TRUE(q.requires_grad());
    EXPECT_EQ(q.grad().components(), 4);
    EXPECT_EQ(q.grad().to_vector(), std::vector<host::quatd>(2));
    // Integer composites have none.
    const int line = __LINE__ + 1;
    const weft::Error e = error_from([] { weft::zeros<weft::vec3i>(2, dev()).requires_grad_(); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(CompositeArraysHost, ComponentOutOfRangeIsAnErrorAtTheCallersLine) {
    const auto a = weft::zeros<weft::vec3>(4, dev());
    int line = __LINE__ + 1;
    weft::Error e = error_from([&] { (void)a.component(3); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "component 3")) << e.message();
    EXPECT_TRUE(has(e.message(), "0 to 2")) << e.message();
    line = __LINE__ + 1;
    e = error_from([&] { (void)a.component(-1); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    line = __LINE__ + 1;
    e = error_from([&] { (void)a.component(0).component(1); });  // a component is a scalar array
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    const auto m = weft::zeros<weft::mat<2, 3, double>>(2, dev());
    line = __LINE__ + 1;
    e = error_from([&] { (void)m.component(0, 3); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "entry (0, 3)")) << e.message();
    line = __LINE__ + 1;
    e = error_from([&] { (void)m.component(2, 0); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    const weft::AnyArray any(weft::DType::Float32, 2, Shape(3), dev());
    line = __LINE__ + 1;
    e = error_from([&] { (void)any.component(2); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
}

TEST(CompositeArraysHost, CopiesBetweenArraysOfOtherComponentsAreErrors) {
    const auto v3 = weft::zeros<weft::vec3>(4, dev());
    const auto v4 = weft::zeros<weft::vec4>(4, dev());
    const auto f = weft::zeros<float>(4, dev());
    int line = __LINE__ + 1;
    weft::Error e = error_from([&] { weft::copy(v3, v4); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "float32 x 3")) << e.message();
    EXPECT_TRUE(has(e.message(), "float32 x 4")) << e.message();
    line = __LINE__ + 1;
    e = error_from([&] { weft::copy(f, v3); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    line = __LINE__ + 1;
    e = error_from([&] { weft::copy(v3, weft::zeros<weft::vec3d>(4, dev())); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    // The bytes of a run-time typed host copy are whole elements.
    std::vector<float> host(4);
    e = error_from([&] {
        static_cast<const weft::AnyArray&>(v3).copy_to_host(host.data(), host.size() * sizeof(float));
    });
    EXPECT_TRUE(has(e.message(), "48 bytes")) << e.message();
    // A typed array's host copies count elements, as from_vector and to_vector do.
    std::vector<weft::host::vec3f> elements(4);
    line = __LINE__ + 1;
    e = error_from([&] { v3.copy_to_host(elements.data(), elements.size() * sizeof(elements[0])); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(
        has(e.message(), "copy_to_host: 48 elements for an array of 4 elements; the count is in elements"))
        << e.message();
    v3.copy_to_host(elements.data(), elements.size());
    // Same components and shape copy.
    weft::copy(v3.component(1), f);
}

// ---------------------------------------------------------------------------------------------
// Deterministic state: one slot per scalar component

// The slot map as the kernels see it.
wf::DetTarget described(const det::SlotMap& m) {
    det::TargetPlan p{};
    p.slots = m;
    wf::DetTarget t{};
    det::describe_slots(p, t);
    return t;
}

// Every component of every element of `a` gets its own slot below the map's count, and
// slot_address gives the component's address back.
void expect_slots_per_component(const weft::AnyArray& a, const std::string& what) {
    const det::SlotMap m = det::slot_map(a);
    const wf::DetTarget t = described(m);
    const auto scalar = static_cast<int64_t>(weft::dtype_size(a.dtype()));
    std::set<int64_t> seen;
    int64_t index[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < a.size(); ++k) {
        int64_t offset = 0;
        for (int d = 0, rest = static_cast<int>(k); d < a.ndim(); ++d) {
            int64_t below = 1;
            for (int e = d + 1; e < a.ndim(); ++e) below *= a.shape()[e];
            index[d] = rest / below;
            rest = static_cast<int>(rest % below);
            offset += index[d] * a.stride(d);
        }
        for (int c = 0; c < a.components(); ++c) {
            char* const p = static_cast<char*>(a.data()) + offset + c * scalar;
            const wf::i64 slot = wf::slot_of(&t, p, scalar);
            ASSERT_GE(slot, 0) << what;
            ASSERT_LT(slot, m.count) << what;
            ASSERT_EQ(wf::slot_address(t, slot, scalar), p) << what;
            seen.insert(slot);
        }
    }
    // Broadcast elements share slots; every other component has its own.
    const weft::AnyArray reached = weft::detail::without_broadcast(a);
    EXPECT_EQ(static_cast<int64_t>(seen.size()), reached.size() * a.components()) << what;
}

TEST(CompositeArraysHost, ContiguousCompositeTargetsHaveOneSlotPerComponent) {
    const auto a = weft::empty<weft::vec3>(1000, weft::Device::cpu());
    const det::Span span = det::span_of(a);
    EXPECT_EQ(span.base, static_cast<char*>(a.data()));
    EXPECT_EQ(span.count, 3000);
    const det::SlotMap m = det::slot_map(a);
    EXPECT_EQ(m.dims, 0);
    EXPECT_EQ(m.count, 3000);
    EXPECT_EQ(m.base, static_cast<char*>(a.data()));
    expect_slots_per_component(a, "vec3[1000]");

    const auto t = weft::empty<weft::transform_t<double>>({6, 7}, weft::Device::cpu());
    EXPECT_EQ(det::span_of(t).count, 6 * 7 * 7);
    EXPECT_EQ(det::slot_map(t).dims, 0);
    EXPECT_EQ(det::slot_map(t).count, 6 * 7 * 7);
    expect_slots_per_component(t, "transformd[6, 7]");
    // A single element: its components.
    EXPECT_EQ(det::slot_map(weft::empty<weft::mat44>(1, weft::Device::cpu())).count, 16);
}

TEST(CompositeArraysHost, SparseCompositeViewsMapEachComponent) {
    const auto a = weft::empty<weft::vec3>(40, weft::Device::cpu());
    // Every fourth element: element run {48, 10} and component run {4, 3}.
    const auto every4 = a.slice(0, 0, 40, 4);
    EXPECT_EQ(det::span_of(every4).count, 9 * 12 + 3);
    det::SlotMap m = det::slot_map(every4);
    EXPECT_EQ(m.dims, 2);
    EXPECT_EQ(m.count, 30);
    EXPECT_EQ(m.stride[0], 48);
    EXPECT_EQ(m.extent[0], 10);
    EXPECT_EQ(m.stride[1], 4);
    EXPECT_EQ(m.extent[1], 3);
    expect_slots_per_component(every4, "every fourth vec3");

    // Rows 0, 3, 6, ...: the components continue the columns (one run of 150 scalars per row).
    const auto g = weft::empty<weft::vec3>({100, 50}, weft::Device::cpu());
    const auto rows = g.slice(0, 0, 100, 3);
    m = det::slot_map(rows);
    EXPECT_EQ(m.dims, 2);
    EXPECT_EQ(m.count, 34 * 150);
    EXPECT_EQ(m.stride[0], 3 * 600);
    EXPECT_EQ(m.stride[1], 4);
    EXPECT_EQ(m.extent[1], 150);
    expect_slots_per_component(rows, "rows of vec3");

    // A column, and a column's transposed blocks.
    const auto column = g.slice(1, 7, 8);
    m = det::slot_map(column);
    EXPECT_EQ(m.count, 300);
    EXPECT_EQ(m.dims, 2);
    expect_slots_per_component(column, "a column of vec3");
    const auto blocks = g.slice(0, 0, 100, 10).slice(1, 0, 50, 5).transpose();
    EXPECT_EQ(det::slot_map(blocks).count, 10 * 10 * 3);
    expect_slots_per_component(blocks, "blocks of vec3");

    // A broadcast view reaches only what it broadcasts.
    const auto wide = g.slice(1, 0, 1).broadcast({100, 64});
    EXPECT_EQ(det::slot_map(wide).count, 300);
    expect_slots_per_component(wide, "a broadcast column of vec3");

    // A component view: scalars 12 bytes apart.
    const auto y = g.slice(1, 2, 3).component(1);
    m = det::slot_map(y);
    EXPECT_EQ(m.count, 100);
    EXPECT_EQ(m.base, static_cast<char*>(g.data()) + 2 * 12 + 4);
    expect_slots_per_component(y, "a component of a column");
    const auto ys = a.component(1);
    EXPECT_EQ(det::span_of(ys).count, 39 * 3 + 1);
    EXPECT_EQ(det::slot_map(ys).count, 40);
    expect_slots_per_component(ys, "the y of vec3[40]");
}

TEST(CompositeArraysHost, CompositeViewsOfMoreThanFourRunsUseTheDenseSpan) {
    const auto a = weft::empty<weft::vec3d>({6, 6, 6, 6}, weft::Device::cpu());
    const auto sparse = a.slice(0, 0, 6, 3).slice(1, 0, 6, 3).slice(2, 0, 6, 3).slice(3, 0, 6, 3);
    const det::Span span = det::span_of(sparse);
    const det::SlotMap m = det::slot_map(sparse);
    EXPECT_EQ(m.dims, 0);
    EXPECT_EQ(m.count, span.count);
    EXPECT_EQ(span.count, (3 * 216 + 3 * 36 + 3 * 6 + 3) * 3 + 3);
    expect_slots_per_component(sparse, "a 4-D sparse view of vec3d");
    // (A scalar array of the same view keeps its four runs.)
    const auto s = weft::empty<double>({6, 6, 6, 6}, weft::Device::cpu());
    EXPECT_EQ(det::slot_map(s.slice(0, 0, 6, 3).slice(1, 0, 6, 3).slice(2, 0, 6, 3).slice(3, 0, 6, 3)).dims,
              4);
}

TEST(CompositeArraysHost, ACompositeTargetAndItsComponentShareOneState) {
    const auto a = weft::empty<weft::vec3>(64, weft::Device::cpu());
    const weft::AnyArray z = a.component(2);
    weft::plan::DetTarget t;
    t.records_per_thread = 1;
    const det::LaunchSite site{"k", "f.cpp", 1, 1};
    const auto plans = det::plan({t, t}, {&a, &z}, {"a", "z"}, weft::Options{}, site, false);
    ASSERT_EQ(plans.size(), 2u);
    EXPECT_EQ(plans[1].shared_with, 0);
    EXPECT_EQ(plans[0].span.base, static_cast<char*>(a.data()));
    EXPECT_EQ(plans[0].span.count, 192);
    EXPECT_EQ(plans[0].slots.dims, 0);
    EXPECT_EQ(plans[0].slots.count, 192);
    // Disjoint halves of a composite array keep their own state.
    const weft::AnyArray lo = a.slice(0, 0, 32);
    const weft::AnyArray hi = a.slice(0, 32, 64);
    const auto apart = det::plan({t, t}, {&lo, &hi}, {"lo", "hi"}, weft::Options{}, site, false);
    EXPECT_EQ(apart[1].shared_with, -1);
    EXPECT_EQ(apart[0].slots.count, 96);
    EXPECT_EQ(apart[1].slots.count, 96);
}

}  // namespace
