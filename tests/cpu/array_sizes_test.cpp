// Array sizes that overflow 64 bits (elements or bytes) are errors at the caller's line, never a
// wrapped size; whole-array operations on broadcast views touch each element once.
#include <gtest/gtest.h>

#include <string>

#include "support/test_device.hpp"

namespace {

weft::Device dev() {
    return weft::test::test_device();
}

// Runs `make`, which must throw a weft::Error at `line` whose message holds `text`.
template <class F>
void expect_size_error(F make, uint32_t line, const std::string& text) {
    try {
        make();
        ADD_FAILURE() << "no error; expected one holding \"" << text << "\"";
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find(text), std::string::npos) << e.what();
        EXPECT_EQ(e.line(), line) << e.what();
        EXPECT_NE(e.file().find("array_sizes_test.cpp"), std::string::npos) << e.what();
    }
}

TEST(ArraySizes, ElementCountsPast2To63AreErrors) {
    // clang-format off
    const uint32_t line = __LINE__; expect_size_error([] { (void)weft::empty<float>({int64_t{1} << 32, int64_t{1} << 32}, dev()); }, line, "more than 2^63 - 1 elements");
    const uint32_t line2 = __LINE__; expect_size_error([] { (void)weft::Shape({int64_t{1} << 40, int64_t{1} << 20, 1 << 4}); }, line2, "more than 2^63 - 1 elements");
    // clang-format on
    weft::Shape changed(4);
    changed.ndim = 2;
    changed.dims[0] = changed.dims[1] = int64_t{1} << 32;
    EXPECT_THROW((void)changed.size(), weft::Error);
}

// Shape's fields are public: a Shape whose ndim was set outside 1 to 4 is an error wherever it is
// used (issue 25: ndim = 12 wrote past the array's strides and crashed).
TEST(ArraySizes, AShapeOfMoreThanFourDimensionsIsAnError) {
    weft::Shape bad{4, 4};
    bad.ndim = 12;
    expect_size_error([&] { (void)weft::zeros<float>(bad, dev()); }, __LINE__,
                      "arrays have 1 to 4 dimensions, got 12");
    const auto a = weft::zeros<float>(4, dev());
    expect_size_error([&] { (void)a.broadcast(bad); }, __LINE__, "arrays have 1 to 4 dimensions, got 12");
    EXPECT_THROW((void)bad.size(), weft::Error);
    EXPECT_FALSE(bad == bad);
    bad.ndim = -3;
    expect_size_error([&] { (void)weft::empty<int>(bad, dev()); }, __LINE__,
                      "arrays have 1 to 4 dimensions, got -3");
}

TEST(ArraySizes, ByteCountsPast2To63AreErrors) {
    // clang-format off
    const uint32_t line = __LINE__; expect_size_error([] { (void)weft::empty<float>(int64_t{1} << 62, dev()); }, line, "more than 2^63 - 1 bytes");
    const uint32_t line2 = __LINE__; expect_size_error([] { (void)weft::zeros<double>(int64_t{1} << 61, dev()); }, line2, "more than 2^63 - 1 bytes");
    // clang-format on
}

TEST(ArraySizes, AllocationsBeyondMemoryAreErrorsAtTheCallersLine) {
    // 2^61 - 1 floats: the bytes fit in 64 bits but no address space holds them.
    // clang-format off
    const uint32_t line = __LINE__; expect_size_error([] { (void)weft::empty<float>((int64_t{1} << 61) - 1, dev()); }, line, "allocate");
    // clang-format on
}

// zero_ and fill_ on a broadcast view write its one element, not a host buffer of 2^40.
TEST(ArraySizes, FillingABroadcastViewWritesEachElementOnce) {
    auto one = weft::full<float>(1, 1.0f, dev());
    auto wide = one.broadcast({1 << 20, 1 << 20});
    EXPECT_EQ(wide.size(), int64_t{1} << 40);
    wide.fill_(3.0f);
    EXPECT_EQ(one.to_vector(), std::vector<float>{3.0f});
    wide.zero_();
    EXPECT_EQ(one.to_vector(), std::vector<float>{0.0f});
}

}  // namespace
