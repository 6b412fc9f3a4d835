// The on-disk module cache: hits, concurrent processes and threads, and rebuilding corrupt entries.
#include "runtime/cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "support/cache_fixture.hpp"

namespace {

namespace fs = std::filesystem;

using weft::test::count_of;
using weft::test::entries_in;
using weft::test::is_mapped;
using weft::test::read_text;
using weft::test::Scale;
using weft::test::temporaries_in;

const weft::Device cpu = weft::Device::cpu();

// These tests are about the CPU backend's shared objects, so the "gpu" run skips them.
class CacheTest : public weft::test::FreshCacheTest {
protected:
    void SetUp() override {
        WEFT_SKIP_UNLESS_CPU();
        FreshCacheTest::SetUp();
    }

    // Compiles `name` in a scope of its own, so the entry is unloaded again afterwards.
    fs::path build_entry(const std::string& name) {
        {
            Scale s(name, false);
            s.module.compile(cpu);
        }
        const auto entries = entries_in(dir_);
        if (entries.size() != 1) return {};
        return entries[0];
    }
};

TEST_F(CacheTest, IdenticalModuleLoadsFromCache) {
    testing::internal::CaptureStderr();
    {
        Scale first("cache_hit");
        first.module.compile(cpu);
        EXPECT_TRUE(first.run_and_check());
    }
    const std::string first_log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count_of(first_log, "weft: module 'cache_hit' for cpu compiled in"), 1) << first_log;
    EXPECT_EQ(count_of(first_log, "loaded from cache"), 0) << first_log;

    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_TRUE(weft::runtime::entry_is_valid(entries[0]));
    struct stat before {};
    ASSERT_EQ(::stat(entries[0].c_str(), &before), 0);
    const auto mtime = fs::last_write_time(entries[0]);

    testing::internal::CaptureStderr();
    Scale second("cache_hit");
    const bool ok = second.run_and_check();
    const std::string second_log = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(ok);
    EXPECT_EQ(count_of(second_log, "weft: module 'cache_hit' for cpu loaded from cache in"), 1) << second_log;
    EXPECT_EQ(count_of(second_log, "compiled"), 0) << second_log;

    const auto entries_after = entries_in(dir_);
    ASSERT_EQ(entries_after.size(), 1u) << "a hit adds no entry";
    ASSERT_EQ(entries_after[0].string(), entries[0].string());
    struct stat after {};
    ASSERT_EQ(::stat(entries[0].c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino) << "a hit does not rewrite the entry";
    EXPECT_EQ(fs::last_write_time(entries[0]), mtime);
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

TEST_F(CacheTest, DifferentSourceOrFlagsMakeNewEntries) {
    Scale a("cache_key");
    a.module.compile(cpu);
    ASSERT_EQ(entries_in(dir_).size(), 1u);

    // Another kernel body: other source, another entry.
    weft::Module b{"cache_key"};
    b.kernel("scale", {"in", "out"}, [](weft::Array<float> in, weft::Array<float> out) {
        auto tid = weft::tid();
        out[tid] = in[tid] * 3.0f;
    });
    b.compile(cpu);
    EXPECT_EQ(entries_in(dir_).size(), 2u);

    // The same source with another optimisation level: other compiler flags, another entry.
    a.module.set_options({.optimization_level = 0});
    testing::internal::CaptureStderr();
    const bool ok = a.run_and_check();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(ok);
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    EXPECT_EQ(entries_in(dir_).size(), 3u);
}

// Several processes compile the same module into one empty cache at the same moment.
TEST_F(CacheTest, ConcurrentProcessesShareOneEntry) {
    constexpr int kChildren = 4;
    int gate[2];
    ASSERT_EQ(pipe(gate), 0);
    std::vector<pid_t> children;
    for (int c = 0; c < kChildren; ++c) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0) << "fork failed";
        if (pid == 0) {
            // Child: wait until every sibling exists, then compile, run and check (verbose, so a
            // failure's output shows which children compiled). _Exit skips gtest and static
            // destructors.
            ::close(gate[1]);
            char byte;
            while (::read(gate[0], &byte, 1) < 0 && errno == EINTR) {
            }
            int code = 0;
            try {
                Scale s("cache_race", true);
                code = s.run_and_check() ? 0 : 1;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "child %d: %s\n", c, e.what());
                code = 2;
            }
            std::_Exit(code);
        }
        children.push_back(pid);
    }
    ::close(gate[0]);
    ::close(gate[1]);  // releases every child at once

    for (size_t c = 0; c < children.size(); ++c) {
        int status = 0;
        ASSERT_EQ(waitpid(children[c], &status, 0), children[c]);
        ASSERT_TRUE(WIFEXITED(status)) << "child " << c << " did not exit normally";
        EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << c << " failed";
    }

    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_TRUE(weft::runtime::entry_is_valid(entries[0]));
    EXPECT_TRUE(temporaries_in(dir_).empty()) << "a build left temporary files behind";
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir_)) (void)e, ++files;
    EXPECT_EQ(files, 1u) << "only the entry remains";

    // And this process loads that entry.
    testing::internal::CaptureStderr();
    Scale s("cache_race");
    const bool ok = s.run_and_check();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(ok);
    EXPECT_EQ(count_of(log, "loaded from cache"), 1) << log;
}

enum class Damage { Truncate, OverwriteMiddle, Empty };

const char* damage_name(Damage d) {
    switch (d) {
        case Damage::Truncate: return "Truncate";
        case Damage::OverwriteMiddle: return "OverwriteMiddle";
        case Damage::Empty: return "Empty";
    }
    return "Unknown";
}
void PrintTo(Damage d, std::ostream* os) {
    *os << damage_name(d);
}

class CorruptEntryTest : public CacheTest, public ::testing::WithParamInterface<Damage> {};

TEST_P(CorruptEntryTest, IsRebuiltNotTrusted) {
    const fs::path entry = build_entry("cache_corrupt");
    ASSERT_FALSE(entry.empty()) << "expected exactly one entry";
    ASSERT_TRUE(weft::runtime::entry_is_valid(entry));
    ASSERT_FALSE(is_mapped(entry)) << "the entry is still loaded; damaging it could crash this process";
    const std::string good = read_text(entry);
    ASSERT_GT(good.size(), 1000u);

    switch (GetParam()) {
        case Damage::Truncate: fs::resize_file(entry, good.size() / 2); break;
        case Damage::OverwriteMiddle: {
            std::fstream f(entry, std::ios::binary | std::ios::in | std::ios::out);
            f.seekp(static_cast<std::streamoff>(good.size() / 2));
            const std::string junk(64, '\x5a');
            f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
            ASSERT_TRUE(f.good());
            break;
        }
        case Damage::Empty: fs::resize_file(entry, 0); break;
    }
    ASSERT_NE(read_text(entry), good);
    ASSERT_FALSE(weft::runtime::entry_is_valid(entry)) << "the damage must be detected";

    testing::internal::CaptureStderr();
    Scale s("cache_corrupt");
    bool ok = false;
    std::string error;
    try {
        ok = s.run_and_check();
    } catch (const std::exception& e) {
        error = e.what();
    }
    const std::string log = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_TRUE(ok);
    EXPECT_EQ(count_of(log, "weft: module 'cache_corrupt' for cpu compiled in"), 1)
        << "the damaged entry must be rebuilt, not loaded\n"
        << log;

    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].string(), entry.string());
    EXPECT_TRUE(weft::runtime::entry_is_valid(entry));
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

INSTANTIATE_TEST_SUITE_P(CacheTest, CorruptEntryTest,
                         ::testing::Values(Damage::Truncate, Damage::OverwriteMiddle, Damage::Empty),
                         [](const auto& info) { return std::string(damage_name(info.param)); });

TEST_F(CacheTest, EntryValidityDetectsFooterDamage) {
    const fs::path entry = build_entry("cache_footer");
    ASSERT_FALSE(entry.empty());
    ASSERT_FALSE(is_mapped(entry));
    const std::string good = read_text(entry);
    // Flip the last byte: the footer's hash no longer matches.
    std::string bad = good;
    bad.back() = bad.back() == '0' ? '1' : '0';
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
    EXPECT_FALSE(weft::runtime::entry_is_valid(entry));
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << good;
    EXPECT_TRUE(weft::runtime::entry_is_valid(entry));
    EXPECT_FALSE(weft::runtime::entry_is_valid(dir_ / "no-such-entry.so"));
}

// A build killed midway leaves its temporary files; a later build removes them once they are old.
TEST_F(CacheTest, AbandonedTemporariesAreRemoved) {
    const fs::path abandoned = dir_ / "cpu-0123.so.tmp.AbCdEf";
    const fs::path in_progress = dir_ / "cpu-4567.so.tmp.GhIjKl.MnOpQr.cpp";
    weft::test::write_text(abandoned, "half a shared object");
    weft::test::write_text(in_progress, "a build running now");
    const timespec two_hours_ago[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, abandoned.c_str(), two_hours_ago, 0), 0);

    Scale s("cache_abandoned", false);
    EXPECT_TRUE(s.run_and_check());
    EXPECT_FALSE(fs::exists(abandoned));
    EXPECT_TRUE(fs::exists(in_progress));
    EXPECT_EQ(entries_in(dir_).size(), 1u);
}

// The names the dynamic loader knows loaded objects by (what debuggers and profilers look up).
std::vector<std::string> loaded_object_names() {
    std::vector<std::string> names;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name ? info->dlpi_name : "");
            return 0;
        },
        &names);
    return names;
}

// A module runs from a copy of the bytes the cache checked, named for its entry (what debuggers
// and profilers see), a new name at every load (docs/design/0010).
TEST_F(CacheTest, ModuleRunsUnderANameOfItsEntryNewAtEveryLoad) {
    Scale built("cache_loaded_name", false);
    built.module.compile(cpu);
    Scale cached("cache_loaded_name", false);
    cached.module.compile(cpu);
    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    std::vector<std::string> ours;
    for (const auto& n : loaded_object_names())
        if (n.rfind(dir_.string(), 0) == 0) ours.push_back(n);
    ASSERT_EQ(ours.size(), 2u);
    for (const auto& n : ours) EXPECT_EQ(n.rfind(entries[0].string() + ".tmp.load.", 0), 0u) << n;
    EXPECT_NE(ours[0], ours[1]);
}

// Eight host threads launch one module's kernel at once: it compiles exactly once.
TEST_F(CacheTest, ConcurrentThreadsCompileOnce) {
    constexpr int kThreads = 8;
    Scale s("cache_threads");
    std::vector<int> ok(kThreads, -1);
    std::vector<std::string> errors(kThreads);
    std::latch start(kThreads);

    testing::internal::CaptureStderr();
    {
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                start.arrive_and_wait();
                try {
                    ok[t] = s.run_and_check(cpu, 100 + 37 * t) ? 1 : 0;
                } catch (const std::exception& e) {
                    errors[t] = e.what();
                }
            });
        }
        for (auto& th : threads) th.join();
    }
    const std::string log = testing::internal::GetCapturedStderr();

    for (int t = 0; t < kThreads; ++t) {
        EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
        EXPECT_EQ(ok[t], 1) << "thread " << t << " got wrong results";
    }
    EXPECT_EQ(count_of(log, "weft: module 'cache_threads'"), 1) << log;
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    EXPECT_EQ(entries_in(dir_).size(), 1u);
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

}  // namespace
