// Loading NCCL at run time: a library that cannot be loaded is a weft::Error naming where it was
// looked for and what to install.
#include <gtest/gtest.h>

#include <cstdlib>
#include <weft/distributed.hpp>

namespace {

TEST(NcclLoader, AMissingLibraryNamesWhereItWasLookedFor) {
    setenv("WEFT_NCCL", "/nonexistent/weft-test/libnccl.so.2", 1);
    try {
        weft::Communicator::nccl_all({weft::Device::cuda(0)});
        FAIL() << "no error";
    } catch (const weft::Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("NCCL could not be loaded"), std::string::npos) << m;
        EXPECT_NE(m.find("/nonexistent/weft-test/libnccl.so.2"), std::string::npos) << m;
        EXPECT_NE(m.find("WEFT_NCCL"), std::string::npos) << m;
    }
    unsetenv("WEFT_NCCL");
}

}  // namespace
