// The device a test run targets, chosen per ctest label (see tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <weft/weft.hpp>

namespace weft::test {

// The device under test: the CPU under label cpu, cuda:0 under label gpu (where the test main
// also sets WEFT_DEVICE, so default_device() agrees).
Device test_device();

}  // namespace weft::test

// For tests of CPU-only behaviour (threads run in order, host printf, shared objects).
#define WEFT_SKIP_UNLESS_CPU()                                                          \
    do {                                                                                \
        if (!::weft::test::test_device().is_cpu()) GTEST_SKIP() << "CPU-specific test"; \
    } while (0)
