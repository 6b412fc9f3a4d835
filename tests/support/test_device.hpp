// The device a test run targets, chosen per ctest label (see tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <weft/weft.hpp>

namespace weft::test {

// The device under test: the CPU under label cpu, cuda:0 under label gpu (where the test main
// also sets WEFT_DEVICE, so default_device() agrees).
Device test_device();

// Whether launches of `module` on the device under test run their threads one after another, in
// thread order: on the CPU with one worker thread (its cpu_threads, else WEFT_CPU_THREADS).
bool in_thread_order(const Module& module);

}  // namespace weft::test

// For tests of CPU-only behaviour (host printf, shared objects, one worker's thread order).
#define WEFT_SKIP_UNLESS_CPU()                                                          \
    do {                                                                                \
        if (!::weft::test::test_device().is_cpu()) GTEST_SKIP() << "CPU-specific test"; \
    } while (0)
