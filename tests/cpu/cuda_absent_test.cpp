// With CUDA absent the library reports why, and the CPU works (CI has no GPU at all).
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/test_device.hpp"

namespace {

TEST(CudaAbsent, CpuWorksAndCudaSaysWhyItIsUnavailable) {
    // Each ctest test is its own process, so this runs before anything loads the driver.
    setenv("WEFT_DISABLE_CUDA", "1", 1);
    WEFT_SKIP_UNLESS_CPU();
    unsetenv("WEFT_DEVICE");
    EXPECT_FALSE(weft::cuda_available());
    EXPECT_NE(weft::cuda_unavailable_reason().find("WEFT_DISABLE_CUDA"), std::string::npos);
    EXPECT_EQ(weft::devices(), std::vector<weft::Device>{weft::Device::cpu()});
    EXPECT_EQ(weft::default_device(), weft::Device::cpu());
    try {
        weft::device("cuda:0");
        FAIL() << "an absent GPU was accepted";
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find("WEFT_DISABLE_CUDA"), std::string::npos) << e.message();
    }

    // A name taken from WEFT_DEVICE says so, since the program itself named no device.
    setenv("WEFT_DEVICE", "cuda:0", 1);
    try {
        weft::default_device();
        FAIL() << "an absent GPU named by WEFT_DEVICE was accepted";
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find("WEFT_DEVICE is 'cuda:0'"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("device 'cuda:0' is not available"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("unset WEFT_DEVICE"), std::string::npos) << e.message();
    }
    unsetenv("WEFT_DEVICE");

    weft::Module m{"cuda_absent"};
    auto twice = m.kernel("twice", [](weft::Array<int> a) {
        auto t = weft::tid();
        a[t] = a[t] * 2;
    });
    auto a = weft::from_vector<int>({1, 2, 3});
    weft::launch(twice, 3, a);
    EXPECT_EQ(a.to_vector(), (std::vector<int>{2, 4, 6}));
}

}  // namespace
