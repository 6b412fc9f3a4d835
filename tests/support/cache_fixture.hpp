// Shared by the cache tests: a fresh cache folder per test, a small kernel, and folder listings.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cache.hpp"
#include "support/test_device.hpp"

namespace weft::test {

inline int count_of(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// Published entries (*.so, *.cubin) and leftovers of unfinished builds (*.tmp.*) in `dir`.
inline std::vector<std::filesystem::path> entries_in(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        const auto ext = e.path().extension();
        if (name.find(".tmp.") == std::string::npos && (ext == ".so" || ext == ".cubin"))
            out.push_back(e.path());
    }
    return out;
}
inline std::vector<std::filesystem::path> temporaries_in(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path());
    return out;
}

// Whether this process has `path` mapped (a loaded shared object).
inline bool is_mapped(const std::filesystem::path& path) {
    return read_text("/proc/self/maps").find(path.filename().string()) != std::string::npos;
}

// The kernel used throughout: out[i] = in[i] * factor + i.
struct Scale {
    Module module;
    Kernel<Array<float>, Array<float>> kernel;
    float factor;

    explicit Scale(const std::string& name, bool verbose = true, float factor = 2.0f)
        : module(name, {.verbose = verbose}),
          kernel(module.kernel("scale", {"in", "out"},
                               [factor](Array<float> in, Array<float> out) {
                                   auto t = tid();
                                   out[t] = in[t] * factor + cast<float>(t);
                               })),
          factor(factor) {}

    // Launches on fresh arrays; true when every element is right.
    bool run_and_check(Device device = test_device(), int n = 257) const {
        std::vector<float> host(n);
        for (int i = 0; i < n; ++i) host[i] = 0.5f * static_cast<float>(i % 11);
        auto in = from_vector(host, device);
        auto out = zeros<float>(n, device);
        launch(kernel, n, in, out);
        const auto got = out.to_vector();
        for (int i = 0; i < n; ++i)
            if (got[i] != host[i] * factor + static_cast<float>(i)) return false;
        return true;
    }
};

// Each test gets an empty cache folder of its own (WEFT_CACHE_DIR is read at every compile), and
// every environment variable the cache and the host compiler read is restored afterwards.
class FreshCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* name : {"WEFT_CACHE_DIR", "WEFT_CXX", "TMPDIR", "HOME", "XDG_CACHE_HOME"})
            if (const char* v = std::getenv(name))
                saved_[name] = v;
            else
                saved_[name] = std::nullopt;
        cwd_ = std::filesystem::current_path();
        std::string pattern = (std::filesystem::temp_directory_path() / "weft-cache-test-XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        ASSERT_EQ(setenv("WEFT_CACHE_DIR", dir_.c_str(), 1), 0);
        ASSERT_EQ(runtime::cache_dir(), dir_);
    }
    void TearDown() override {
        for (const auto& [name, value] : saved_)
            if (value)
                setenv(name.c_str(), value->c_str(), 1);
            else
                unsetenv(name.c_str());
        std::error_code ec;
        std::filesystem::current_path(cwd_, ec);
        for (const auto& dir : {dir_, scratch_}) {
            if (dir.empty()) continue;
            std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
            std::filesystem::remove_all(dir, ec);
        }
    }

    // A folder outside the cache for a test's own files (fake compilers, planted files).
    const std::filesystem::path& scratch() {
        if (scratch_.empty()) {
            std::string pattern = (std::filesystem::temp_directory_path() / "weft-scratch-XXXXXX").string();
            if (mkdtemp(pattern.data())) scratch_ = pattern;
        }
        return scratch_;
    }

    std::filesystem::path dir_;
    std::filesystem::path scratch_;
    std::filesystem::path cwd_;
    std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace weft::test
