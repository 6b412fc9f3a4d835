// Module::compile's report: compiled now or loaded from the disk cache, on the device under test.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

namespace fs = std::filesystem;

// An empty cache directory of the test's own, so the first compile cannot be a cache hit.
class CompileReportTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (const char* old = std::getenv("WEFT_CACHE_DIR")) saved_ = old;
        std::string pattern = (fs::temp_directory_path() / "weft-report-test-XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        ASSERT_EQ(setenv("WEFT_CACHE_DIR", dir_.c_str(), 1), 0);
    }
    void TearDown() override {
        if (saved_)
            setenv("WEFT_CACHE_DIR", saved_->c_str(), 1);
        else
            unsetenv("WEFT_CACHE_DIR");
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    fs::path dir_;
    std::optional<std::string> saved_;
};

void define_double(weft::Module& m) {
    m.kernel("double_it", {"a"}, [](weft::Array<float> a) {
        auto tid = weft::tid();
        a[tid] = a[tid] * 2.0f;
    });
}

TEST_F(CompileReportTest, SaysCompiledThenLoadedFromCache) {
    const weft::Device dev = weft::test::test_device();
    weft::Module first("compile_report");
    define_double(first);
    const weft::CompileReport compiled = first.compile(dev);
    EXPECT_EQ(compiled.device, dev.name());
    EXPECT_FALSE(compiled.loaded_from_cache);
    EXPECT_GT(compiled.milliseconds, 0.0);

    // The module keeps its code: asking again reports the same compile, not a new one.
    const weft::CompileReport again = first.compile(dev);
    EXPECT_FALSE(again.loaded_from_cache);
    EXPECT_EQ(again.milliseconds, compiled.milliseconds);

    // An identical module in this process (or any other) finds the entry the first one wrote.
    weft::Module second("compile_report");
    define_double(second);
    const weft::CompileReport loaded = second.compile(dev);
    EXPECT_EQ(loaded.device, dev.name());
    EXPECT_TRUE(loaded.loaded_from_cache);
    EXPECT_GT(loaded.milliseconds, 0.0);
}

TEST_F(CompileReportTest, NewOptionsReportTheirOwnCompile) {
    const weft::Device dev = weft::test::test_device();
    weft::Module m("compile_report_options");
    define_double(m);
    EXPECT_FALSE(m.compile(dev).loaded_from_cache);
    // Bounds checking changes the generated code, so it is a new cache entry, compiled now.
    m.set_options({.bounds_check = true});
    EXPECT_FALSE(m.compile(dev).loaded_from_cache);
    // Back to the first options: that code is in the cache already.
    m.set_options({.bounds_check = false});
    EXPECT_TRUE(m.compile(dev).loaded_from_cache);
}

}  // namespace
