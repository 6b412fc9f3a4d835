// Array elements: which compound assignments write the array (atomically) and which do not compile.
#include <gtest/gtest.h>

#include "support/test_device.hpp"

namespace {

template <class A>
concept TimesAssignable = requires(A a) {
    a[0] *= 2.0f;
};
template <class A>
concept AddAssignable = requires(A a) {
    a[0] += 2.0f;
};
template <class A>
concept SubAssignable = requires(A a) {
    a[0] -= 2.0f;
};
template <class A>
concept ShiftAssignable = requires(A a) {
    a[0] <<= 1;
};

// `a[i] += v` and `a[i] -= v` are the spec's atomic shorthands; other compound assignments to
// an element used directly would only change a temporary, so they must not compile.
static_assert(AddAssignable<weft::Array<float>> && SubAssignable<weft::Array<float>>);
static_assert(!TimesAssignable<weft::Array<float>>);
static_assert(!ShiftAssignable<weft::Array<int>>);

weft::Module module{"element_test"};
auto named = module.kernel("named", {"a"}, [](weft::Array<int> a) {
    auto t = weft::tid();
    auto local = a[t];  // a named element is a local copy
    local *= 3;
    local <<= 1;
    local += 1;
    a[t] += local;  // the element used directly: atomic add
});

TEST(Element, NamedElementsAreLocalsAndOnlyDirectPlusMinusWriteTheArray) {
    const weft::Device dev = weft::test::test_device();
    auto a = weft::from_vector<int>({1, 2, 3}, dev);
    weft::launch(named, 3, a);
    // local = (v * 3) << 1 + 1; a = v + local
    EXPECT_EQ(a.to_vector(), (std::vector<int>{1 + 7, 2 + 13, 3 + 19}));
}

}  // namespace
