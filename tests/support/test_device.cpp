// The test programs' main: selects the device under test and skips a GPU run without a GPU.
#include "support/test_device.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/cpu/worker_pool.hpp"

namespace weft::test {

namespace {

// WEFT_TEST_DEVICE is set per label by tests/CMakeLists.txt: "cpu" or "gpu".
bool gpu_run() {
    const char* v = std::getenv("WEFT_TEST_DEVICE");
    return v && std::string(v) == "gpu";
}

}  // namespace

Device test_device() {
    return gpu_run() ? Device::cuda(0) : Device::cpu();
}

bool in_thread_order(const Module& module) {
    return test_device().is_cpu() && runtime::cpu::cpu_workers(module.options()) == 1;
}

}  // namespace weft::test

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    setenv("WEFT_CACHE_DIR", WEFT_TEST_CACHE_DIR, 0);
    setenv("WEFT_DEVICE", weft::test::gpu_run() ? "cuda:0" : "cpu", 1);
    if (!testing::GTEST_FLAG(list_tests) && weft::test::gpu_run() && !weft::cuda_available()) {
        // ctest's gtest discovery marks a test whose output has this line as skipped.
        std::printf("[  SKIPPED ] no GPU: %s\n", weft::cuda_unavailable_reason().c_str());
        return 0;
    }
    return RUN_ALL_TESTS();
}
