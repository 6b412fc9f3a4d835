// The cache against a hostile or broken environment: other users, planted files, lying compilers,
// and folders that vanish, fill up or cannot be written. Each failure must be a weft::Error that
// names its real cause.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cache.hpp"
#include "runtime/cpu/host_compiler.hpp"
#include "support/cache_fixture.hpp"

namespace {

namespace fs = std::filesystem;

using weft::test::count_of;
using weft::test::entries_in;
using weft::test::is_mapped;
using weft::test::read_text;
using weft::test::Scale;
using weft::test::temporaries_in;
using weft::test::write_text;

constexpr uid_t kNobody = 65534;
const weft::Device cpu = weft::Device::cpu();

// "ok", or the type and text of what compiling and running `name` threw. Verbose output is
// captured and returned in `log` when given.
std::string compile_and_run(const std::string& name, weft::Device device, std::string* log = nullptr,
                            float factor = 2.0f) {
    testing::internal::CaptureStderr();
    std::string outcome;
    try {
        Scale s(name, true, factor);
        outcome = s.run_and_check(device) ? "ok" : "wrong results";
    } catch (const weft::Error& e) {
        outcome = std::string("weft::Error: ") + e.what();
    } catch (const std::exception& e) {
        outcome = std::string("not a weft::Error (") + typeid(e).name() + "): " + e.what();
    }
    const std::string captured = testing::internal::GetCapturedStderr();
    if (log) *log = captured;
    return outcome;
}

// Runs `body` in a child process and returns what it returned (or how the child died). When
// `as_nobody` is set and this process is root, the child first becomes user nobody, so that
// permission checks apply to it as they would to any user.
std::string in_child(const std::function<std::string()>& body, bool as_nobody = false) {
    int out[2];
    if (pipe(out) != 0) return "pipe failed";
    const pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        ::close(out[0]);
        std::string result;
        if (as_nobody && geteuid() == 0 &&
            (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0))
            result = "cannot become nobody";
        else
            result = body();
        (void)!::write(out[1], result.data(), result.size());
        std::_Exit(0);
    }
    ::close(out[1]);
    std::string result;
    char buffer[4096];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) result.append(buffer, n);
    ::close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) return "child died: " + result;
    return result;
}

// An executable shell script at `path`.
void write_script(const fs::path& path, const std::string& body) {
    write_text(path, "#!/bin/sh\n" + body);
    fs::permissions(path, fs::perms::owner_all);
}

// The compiler Weft uses when WEFT_CXX is unset.
std::string default_compiler() {
    unsetenv("WEFT_CXX");
    return weft::runtime::cpu::host_compiler().path;
}

// Shell text that answers the compiler probes as `real` does and otherwise runs `compile`.
std::string fake_compiler(const std::string& real, const std::string& compile) {
    return "case \"$1\" in --version|-dumpmachine) exec '" + real + "' \"$1\";; esac\n" + compile + "\n";
}

class CacheSecurityTest : public weft::test::FreshCacheTest {};

// Tests of the host compiler and of shared objects; the "gpu" run skips them.
class HostCompilerTest : public weft::test::FreshCacheTest {
protected:
    void SetUp() override {
        WEFT_SKIP_UNLESS_CPU();
        FreshCacheTest::SetUp();
    }
};

// --- The cache folder (issue 9, item 2) ---

TEST_F(CacheSecurityTest, DefaultFolderIsTheUsersNeverAShared) {
    unsetenv("WEFT_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    if (const passwd* me = getpwuid(geteuid()); me && me->pw_dir && *me->pw_dir) {
        const fs::path location = weft::runtime::cache_folder_location();
        EXPECT_EQ(location, fs::path(me->pw_dir) / ".cache" / "weft");
        const std::string tmp = fs::temp_directory_path().string();
        EXPECT_NE(location.string().rfind(tmp, 0), 0u) << location << " is in the shared " << tmp;
    } else {
        // A user without a home directory (a bare container uid) must name a folder.
        EXPECT_THROW(weft::runtime::cache_folder_location(), weft::Error);
    }

    ASSERT_EQ(setenv("HOME", "/home/someone", 1), 0);
    EXPECT_EQ(weft::runtime::cache_folder_location(), fs::path("/home/someone/.cache/weft"));
    // The XDG spec says a relative XDG_CACHE_HOME is to be ignored.
    ASSERT_EQ(setenv("XDG_CACHE_HOME", "relative/cache", 1), 0);
    EXPECT_EQ(weft::runtime::cache_folder_location(), fs::path("/home/someone/.cache/weft"));
    ASSERT_EQ(setenv("XDG_CACHE_HOME", "/xdg", 1), 0);
    EXPECT_EQ(weft::runtime::cache_folder_location(), fs::path("/xdg/weft"));
}

TEST_F(CacheSecurityTest, FolderOfAnotherUserIsRefused) {
    fs::path foreign = dir_;
    if (geteuid() == 0)
        ASSERT_EQ(chown(dir_.c_str(), kNobody, kNobody), 0);
    else
        foreign = "/";  // root's
    ASSERT_EQ(setenv("WEFT_CACHE_DIR", foreign.c_str(), 1), 0);
    const std::string outcome = compile_and_run("cache_foreign", weft::test::test_device());
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("belongs to another user"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("WEFT_CACHE_DIR"), std::string::npos) << outcome;
    EXPECT_TRUE(entries_in(dir_).empty());
}

TEST_F(CacheSecurityTest, FolderOthersCanWriteIsRefused) {
    for (const mode_t mode : {0777, 0770, 0703, 01777}) {
        SCOPED_TRACE(mode);
        ASSERT_EQ(chmod(dir_.c_str(), mode), 0);
        const std::string outcome = compile_and_run("cache_writable", weft::test::test_device());
        EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
        EXPECT_NE(outcome.find("can be written by other users"), std::string::npos) << outcome;
        EXPECT_NE(outcome.find("chmod go-w"), std::string::npos) << outcome;
        EXPECT_TRUE(entries_in(dir_).empty());
    }
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
    EXPECT_EQ(compile_and_run("cache_writable", weft::test::test_device()), "ok");
}

// A folder above the cache folder that others can write (and is not sticky), or that another
// user owns, is refused: they could swap the cache folder between its check and a load (issue
// 25, item 1: a non-sticky parent let a user get their library loaded into a root process).
TEST_F(CacheSecurityTest, FoldersAboveOthersCanWriteAreRefused) {
    const fs::path above = dir_ / "shared";
    const fs::path cache = above / "weft";
    fs::create_directories(cache);
    ASSERT_EQ(chmod(cache.c_str(), 0700), 0);
    ASSERT_EQ(setenv("WEFT_CACHE_DIR", cache.c_str(), 1), 0);
    ASSERT_EQ(chmod(above.c_str(), 0777), 0);
    std::string outcome = compile_and_run("cache_above_writable", weft::test::test_device());
    EXPECT_NE(outcome.find("a folder above the kernel cache folder"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("can be written by other users and is not sticky"), std::string::npos) << outcome;
    EXPECT_TRUE(entries_in(cache).empty());
    // Through a link in a safe folder to a cache under the unsafe one: refused too.
    const fs::path link = dir_ / "link";
    fs::create_directory_symlink(cache, link);
    ASSERT_EQ(setenv("WEFT_CACHE_DIR", link.c_str(), 1), 0);
    outcome = compile_and_run("cache_above_linked", weft::test::test_device());
    EXPECT_NE(outcome.find("can be written by other users and is not sticky"), std::string::npos) << outcome;
    // Writable by its group, as a shared project folder (mode 2775) is: its members could swap
    // the cache folder (issue 32, item 1).
    for (const mode_t mode : {02775, 0770, 0730}) {
        SCOPED_TRACE(mode);
        ASSERT_EQ(chmod(above.c_str(), mode), 0);
        ASSERT_EQ(setenv("WEFT_CACHE_DIR", cache.c_str(), 1), 0);
        outcome = compile_and_run("cache_above_group_writable", weft::test::test_device());
        EXPECT_NE(outcome.find("can be written by its group"), std::string::npos) << outcome;
        EXPECT_TRUE(entries_in(cache).empty());
    }
    ASSERT_EQ(chmod(above.c_str(), 01777), 0);  // sticky, as /tmp: fine
    EXPECT_EQ(compile_and_run("cache_above_sticky", weft::test::test_device()), "ok");
    ASSERT_EQ(chmod(above.c_str(), 03775), 0);  // group-writable and sticky: fine too
    EXPECT_EQ(compile_and_run("cache_above_group_sticky", weft::test::test_device()), "ok");
    if (geteuid() == 0) {
        ASSERT_EQ(chmod(above.c_str(), 0755), 0);
        ASSERT_EQ(chown(above.c_str(), kNobody, kNobody), 0);
        outcome = compile_and_run("cache_above_foreign", weft::test::test_device());
        EXPECT_NE(outcome.find("belongs to another user"), std::string::npos) << outcome;
        ASSERT_EQ(chown(above.c_str(), 0, 0), 0);
    }
}

// A link on the way to the cache folder (a HOME reached through a symbolic link) is judged by
// the folder holding it and by where it leads, not by its own mode bits (always 0777): the
// default cache under such a HOME works (issue 32, item 2), and a link to an unsafe place is
// still refused.
TEST_F(CacheSecurityTest, LinkAboveTheCacheIsJudgedByWhereItLeads) {
    const fs::path home = dir_ / "real_home";
    fs::create_directories(home);
    ASSERT_EQ(chmod(home.c_str(), 0755), 0);
    const fs::path link = dir_ / "home";
    fs::create_directory_symlink(home, link);
    unsetenv("WEFT_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    ASSERT_EQ(setenv("HOME", link.c_str(), 1), 0);
    EXPECT_EQ(compile_and_run("cache_linked_home", weft::test::test_device()), "ok");
    EXPECT_FALSE(entries_in(home / ".cache" / "weft").empty());
    ASSERT_EQ(chmod(home.c_str(), 0777), 0);  // where it leads, anyone may write: refused
    const std::string outcome = compile_and_run("cache_linked_unsafe_home", weft::test::test_device());
    EXPECT_NE(outcome.find("can be written by other users and is not sticky"), std::string::npos) << outcome;
    ASSERT_EQ(chmod(home.c_str(), 0755), 0);
}

TEST_F(CacheSecurityTest, CreatedFolderIsPrivate) {
    const fs::path nested = dir_ / "a" / "weft";
    ASSERT_EQ(setenv("WEFT_CACHE_DIR", nested.c_str(), 1), 0);
    ASSERT_EQ(weft::runtime::cache_dir(), nested);
    struct stat st {};
    ASSERT_EQ(stat(nested.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A valid entry renamed over another entry's name must not be loaded under that name.
TEST_F(CacheSecurityTest, EntryCopiedOverAnotherKeyIsRebuilt) {
    const weft::Device device = weft::test::test_device();
    ASSERT_EQ(compile_and_run("cache_swap", device, nullptr, 2.0f), "ok");
    const auto first = entries_in(dir_);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(compile_and_run("cache_swap", device, nullptr, 3.0f), "ok");
    auto both = entries_in(dir_);
    ASSERT_EQ(both.size(), 2u);
    const fs::path victim = both[0] == first[0] ? both[1] : both[0];
    ASSERT_FALSE(is_mapped(victim));
    // Same module, kernel and entry symbols: only the key tells the two apart.
    fs::copy_file(first[0], victim, fs::copy_options::overwrite_existing);
    EXPECT_FALSE(weft::runtime::entry_is_valid(victim));

    std::string log;
    EXPECT_EQ(compile_and_run("cache_swap", device, &log, 3.0f), "ok") << "the factor-2 code was run";
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    EXPECT_TRUE(weft::runtime::entry_is_valid(victim));
}

TEST_F(HostCompilerTest, EntryOfAnotherOwnerIsRebuilt) {
    if (geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user";
    ASSERT_EQ(compile_and_run("cache_owner", cpu), "ok");
    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_FALSE(is_mapped(entries[0]));
    ASSERT_EQ(chown(entries[0].c_str(), kNobody, kNobody), 0);
    std::string log;
    EXPECT_EQ(compile_and_run("cache_owner", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    struct stat st {};
    ASSERT_EQ(stat(entries[0].c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, geteuid());
}

// What runs is the bytes the cache checked, loaded from a file of their own that is gone once
// loaded, never the entry itself, which could change between its check and a dlopen of it (issue
// 32, item 1); and each load's file has a new name, so a module loaded again is the new bytes.
TEST_F(HostCompilerTest, WhatRunsIsTheCheckedBytesNotTheEntry) {
    Scale built("cache_checked_bytes");
    ASSERT_TRUE(built.run_and_check(cpu));  // built, checked and loaded
    Scale cached("cache_checked_bytes");
    ASSERT_TRUE(cached.run_and_check(cpu));  // verified in the cache and loaded
    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    const std::string maps = weft::test::read_text("/proc/self/maps");
    const std::string name = entries[0].filename().string();
    int copies = 0, entry = 0;
    for (size_t at = maps.find(name); at != std::string::npos; at = maps.find(name, at + 1)) {
        const std::string rest = maps.substr(at + name.size(), maps.find('\n', at) - at - name.size());
        if (rest.empty()) ++entry;
        if (rest.rfind(".tmp.load.", 0) == 0 && rest.find("(deleted)") != std::string::npos) ++copies;
    }
    EXPECT_EQ(entry, 0) << "the entry itself is mapped:\n" << maps;
    EXPECT_GT(copies, 0) << maps;
    EXPECT_TRUE(temporaries_in(dir_).empty()) << "a loaded copy was left in the cache folder";
}

// --- Temporary files (item 3) ---

// The old log name was TMPDIR/weft-cc-<pid>-<n>.log. Planted symlinks and folders at such names
// must neither be written through nor break compiles, and nothing may be left in TMPDIR.
TEST_F(HostCompilerTest, NothingIsWrittenThroughPlantedTemporaries) {
    const fs::path tmp = scratch() / "tmp";
    fs::create_directories(tmp);
    const fs::path victim = scratch() / "victim.txt";
    write_text(victim, "precious");
    std::vector<std::string> planted;
    for (int n = 0; n < 256; ++n) {
        const fs::path p = tmp / ("weft-cc-" + std::to_string(getpid()) + "-" + std::to_string(n) + ".log");
        if (n % 2)
            fs::create_directory(p);
        else
            fs::create_symlink(victim, p);
        planted.push_back(p.filename().string());
    }
    ASSERT_EQ(setenv("TMPDIR", tmp.c_str(), 1), 0);

    EXPECT_EQ(compile_and_run("cache_planted", cpu), "ok");
    EXPECT_EQ(read_text(victim), "precious");
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(tmp)) {
        ++files;
        EXPECT_NE(std::find(planted.begin(), planted.end(), e.path().filename().string()), planted.end())
            << "left behind: " << e.path();
    }
    EXPECT_EQ(files, planted.size());
}

// Item 18: a TMPDIR that is missing or a file is not Weft's business.
TEST_F(HostCompilerTest, UnusableTmpdirDoesNotMatter) {
    const fs::path file = scratch() / "a-file";
    write_text(file, "x");
    int round = 0;
    for (const fs::path& tmpdir : {scratch() / "missing", file}) {
        SCOPED_TRACE(tmpdir);
        ASSERT_EQ(setenv("TMPDIR", tmpdir.c_str(), 1), 0);
        EXPECT_EQ(compile_and_run("cache_tmpdir_" + std::to_string(round++), cpu), "ok");
    }
}

// --- The cache key (item 4) ---

TEST_F(HostCompilerTest, WrapperWithTheSameVersionTextHasItsOwnEntries) {
    const std::string real = default_compiler();
    const auto& plain = weft::runtime::cpu::host_compiler();
    const fs::path wrapper = scratch() / "fast-math-c++";
    write_script(wrapper, fake_compiler(real, "exec '" + real + "' -ffast-math \"$@\""));

    ASSERT_EQ(setenv("WEFT_CXX", wrapper.c_str(), 1), 0);
    const auto& wrapped = weft::runtime::cpu::host_compiler();
    EXPECT_EQ(wrapped.version, plain.version) << "the wrapper should be indistinguishable by --version";
    EXPECT_EQ(wrapped.machine, plain.machine);
    EXPECT_FALSE(plain.machine.empty());
    EXPECT_NE(wrapped.key, plain.key);

    std::string log;
    EXPECT_EQ(compile_and_run("cache_wrapper", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    unsetenv("WEFT_CXX");
    EXPECT_EQ(compile_and_run("cache_wrapper", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "compiled in"), 1) << "the wrapper's entry was loaded for the plain compiler\n"
                                               << log;
    EXPECT_EQ(entries_in(dir_).size(), 2u);
    EXPECT_EQ(compile_and_run("cache_wrapper", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "loaded from cache"), 1) << log;

    // Editing the wrapper in place is another compiler too.
    ASSERT_EQ(setenv("WEFT_CXX", wrapper.c_str(), 1), 0);
    write_script(wrapper,
                 fake_compiler(real, "exec '" + real + "' -ffast-math -fno-finite-math-only \"$@\""));
    EXPECT_EQ(compile_and_run("cache_wrapper", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    EXPECT_EQ(entries_in(dir_).size(), 3u);
}

TEST_F(HostCompilerTest, MissingCompilerIsNamed) {
    ASSERT_EQ(setenv("WEFT_CXX", "no-such-compiler-anywhere", 1), 0);
    const std::string outcome = compile_and_run("cache_no_cxx", cpu);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("'no-such-compiler-anywhere' was not found in PATH"), std::string::npos)
        << outcome;
}

// --- Output that does not load (item 5) ---

TEST_F(HostCompilerTest, CompilerThatWritesNothingIsReported) {
    const fs::path fake = scratch() / "silent-c++";
    write_script(fake, fake_compiler(default_compiler(), "exit 0"));
    ASSERT_EQ(setenv("WEFT_CXX", fake.c_str(), 1), 0);
    const std::string outcome = compile_and_run("cache_silent", cpu);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("reported success"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("wrote no output"), std::string::npos) << outcome;
    EXPECT_EQ(outcome.find("Weft bug"), std::string::npos) << outcome;
    EXPECT_TRUE(entries_in(dir_).empty());
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

TEST_F(HostCompilerTest, CompilerThatWritesGarbageIsNotPublished) {
    const fs::path fake = scratch() / "garbage-c++";
    write_script(fake, fake_compiler(default_compiler(),
                                     "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                                     "printf 'not a shared object' > \"$out\""));
    ASSERT_EQ(setenv("WEFT_CXX", fake.c_str(), 1), 0);
    for (int run = 0; run < 2; ++run) {
        const std::string outcome = compile_and_run("cache_garbage", cpu);
        EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
        EXPECT_NE(outcome.find("reported success"), std::string::npos) << outcome;
        EXPECT_NE(outcome.find("cannot be loaded"), std::string::npos) << outcome;
        EXPECT_TRUE(entries_in(dir_).empty()) << "a module that does not load was published";
        EXPECT_TRUE(temporaries_in(dir_).empty());
    }
}

// An entry with a valid footer whose contents do not load is rebuilt, not reported forever.
TEST_F(HostCompilerTest, IntactEntryThatDoesNotLoadIsRebuilt) {
    ASSERT_EQ(compile_and_run("cache_unloadable", cpu), "ok");
    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_FALSE(is_mapped(entries[0]));
    const std::string body = "not a shared object";
    write_text(entries[0], body + weft::runtime::entry_footer(entries[0].filename().string(), body));
    ASSERT_TRUE(weft::runtime::entry_is_valid(entries[0]));

    std::string log;
    EXPECT_EQ(compile_and_run("cache_unloadable", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    EXPECT_GT(fs::file_size(entries[0]), 1000u);
}

// --- Errors that are weft::Errors and say their cause (items 18, 19) ---

TEST_F(HostCompilerTest, EntryReplacedByAFolderIsAWeftError) {
    ASSERT_EQ(compile_and_run("cache_folder_entry", cpu), "ok");
    const auto entries = entries_in(dir_);
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_FALSE(is_mapped(entries[0]));
    fs::remove(entries[0]);
    fs::create_directories(entries[0] / "inside");
    const std::string outcome = compile_and_run("cache_folder_entry", cpu);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("a folder is in its place"), std::string::npos) << outcome;
    fs::remove_all(entries[0]);
    EXPECT_EQ(compile_and_run("cache_folder_entry", cpu), "ok");
}

// The permission tests run as user nobody when the tests run as root, who ignores file modes.
class UnwritableCacheTest : public HostCompilerTest {
protected:
    void SetUp() override {
        HostCompilerTest::SetUp();
        if (IsSkipped()) return;
        // nobody must be able to reach the cache folder, and to own it.
        base_ = scratch() / "base";
        fs::create_directories(base_);
        ASSERT_EQ(chmod(scratch().c_str(), 0755), 0);
        ASSERT_EQ(chmod(base_.c_str(), 0755), 0);
        cache_ = base_ / "cache";
        fs::create_directory(cache_);
        if (geteuid() == 0) ASSERT_EQ(chown(cache_.c_str(), kNobody, kNobody), 0);
        ASSERT_EQ(setenv("WEFT_CACHE_DIR", cache_.c_str(), 1), 0);
    }
    void TearDown() override {
        if (!cache_.empty()) chmod(cache_.c_str(), 0700);
        HostCompilerTest::TearDown();
    }
    fs::path base_, cache_;
};

TEST_F(UnwritableCacheTest, ReadOnlyFolderSaysSo) {
    ASSERT_EQ(chmod(cache_.c_str(), 0500), 0);
    const std::string outcome = in_child([] { return compile_and_run("cache_read_only", cpu); }, true);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("cache folder cannot be written"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("Permission denied"), std::string::npos) << outcome;
    EXPECT_EQ(outcome.find("Weft bug"), std::string::npos) << outcome;
}

TEST_F(UnwritableCacheTest, UnreadableFolderSaysSo) {
    ASSERT_EQ(chmod(cache_.c_str(), 0), 0);
    const std::string outcome = in_child([] { return compile_and_run("cache_mode_000", cpu); }, true);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("cannot read the kernel cache folder"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("Permission denied"), std::string::npos) << outcome;
}

// A full disk, as far as a writer can tell: writes fail with EFBIG past a file size limit.
TEST_F(HostCompilerTest, FullDiskSaysSo) {
    // Weft's own write of the generated source.
    const std::string ours = in_child([] {
        signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{1024, 1024};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::string("setrlimit failed");
        return compile_and_run("cache_full_ours", cpu);
    });
    EXPECT_NE(ours.find("weft::Error"), std::string::npos) << ours;
    EXPECT_NE(ours.find("cannot write the generated source of module 'cache_full_ours'"), std::string::npos)
        << ours;
    EXPECT_NE(ours.find("File too large"), std::string::npos) << ours;
    EXPECT_EQ(ours.find("Weft bug"), std::string::npos) << ours;

    // The compiler's writes.
    const std::string real = default_compiler();
    const fs::path limited = scratch() / "limited-c++";
    write_script(limited, fake_compiler(real, "trap '' XFSZ\nulimit -f 1\nexec '" + real + "' \"$@\""));
    ASSERT_EQ(setenv("WEFT_CXX", limited.c_str(), 1), 0);
    const std::string theirs = compile_and_run("cache_full_theirs", cpu);
    EXPECT_NE(theirs.find("weft::Error"), std::string::npos) << theirs;
    EXPECT_NE(theirs.find("could not do its work"), std::string::npos) << theirs;
    EXPECT_NE(theirs.find("File too large"), std::string::npos) << theirs;
    EXPECT_EQ(theirs.find("Weft bug"), std::string::npos) << theirs;
    EXPECT_TRUE(entries_in(dir_).empty());
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

// A linker that runs out of disk removes its output: reported at once as a full disk, not taken
// for a deleted cache folder and built again seven times (issue 32, item 18).
TEST_F(HostCompilerTest, FullDiskWhileLinkingIsReportedAtOnce) {
    const fs::path calls = scratch() / "calls";
    const fs::path linker = scratch() / "full-disk-c++";
    write_script(
        linker,
        fake_compiler(default_compiler(),
                      "echo x >> '" + calls.string() +
                          "'\nwhile [ \"$#\" -gt 1 ]; do [ \"$1\" = -o ] && rm -f \"$2\"; shift; done\n"
                          "echo 'ld: final link failed: No space left on device' >&2\nexit 1"));
    ASSERT_EQ(setenv("WEFT_CXX", linker.c_str(), 1), 0);
    const std::string outcome = compile_and_run("cache_full_link", cpu);
    EXPECT_NE(outcome.find("could not do its work"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("No space left on device"), std::string::npos) << outcome;
    EXPECT_EQ(outcome.find("deleted during each"), std::string::npos) << outcome;
    EXPECT_EQ(count_of(read_text(calls), "x"), 1) << "the compiler ran more than once";
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

TEST_F(HostCompilerTest, CompilerKilledBySignalSaysSo) {
    const fs::path fake = scratch() / "killed-c++";
    write_script(fake, fake_compiler(default_compiler(), "kill -KILL $$"));
    ASSERT_EQ(setenv("WEFT_CXX", fake.c_str(), 1), 0);
    const std::string outcome = compile_and_run("cache_killed", cpu);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("killed by signal 9"), std::string::npos) << outcome;
    EXPECT_EQ(outcome.find("Weft bug"), std::string::npos) << outcome;
    EXPECT_TRUE(temporaries_in(dir_).empty());
}

// Folder names that look like options or hold shell syntax are just names.
TEST_F(HostCompilerTest, HostileFolderNamesWork) {
    ASSERT_EQ(chdir(dir_.c_str()), 0);
    const std::vector<std::string> names = {
        "-c", "--help", "-o", "a b", "quote\"s'", "new\nline", "$(touch pwned)", "; rm -rf x", "back\\slash"};
    for (const std::string& name : names) {
        SCOPED_TRACE(name);
        ASSERT_EQ(setenv("WEFT_CACHE_DIR", name.c_str(), 1), 0);
        EXPECT_EQ(compile_and_run("cache_hostile_name", cpu), "ok");
        EXPECT_EQ(entries_in(dir_ / name).size(), 1u);
    }
    EXPECT_FALSE(fs::exists(dir_ / "pwned"));
}

// Deleting the cache folder is always safe, even in the middle of a compile.
TEST_F(HostCompilerTest, FolderDeletedDuringCompileIsRecreated) {
    const std::string real = default_compiler();
    const fs::path marker = scratch() / "deleted-once";
    const fs::path fake = scratch() / "deleting-c++";
    write_script(
        fake, fake_compiler(real, "if [ ! -e '" + marker.string() + "' ]; then touch '" + marker.string() +
                                      "'; rm -rf \"$WEFT_CACHE_DIR\"; fi\n" + "exec '" + real + "' \"$@\""));
    ASSERT_EQ(setenv("WEFT_CXX", fake.c_str(), 1), 0);
    std::string log;
    EXPECT_EQ(compile_and_run("cache_deleted", cpu, &log), "ok");
    EXPECT_TRUE(fs::exists(marker)) << "the folder was not deleted; the test proves nothing";
    EXPECT_EQ(count_of(log, "compiled in"), 1) << log;
    EXPECT_EQ(entries_in(dir_).size(), 1u);
    EXPECT_EQ(compile_and_run("cache_deleted", cpu, &log), "ok");
    EXPECT_EQ(count_of(log, "loaded from cache"), 1) << log;
}

TEST_F(HostCompilerTest, FolderDeletedAtEveryAttemptSaysSo) {
    const std::string real = default_compiler();
    const fs::path fake = scratch() / "always-deleting-c++";
    write_script(fake, fake_compiler(real, "rm -rf \"$WEFT_CACHE_DIR\"\nexec '" + real + "' \"$@\""));
    ASSERT_EQ(setenv("WEFT_CXX", fake.c_str(), 1), 0);
    const std::string outcome = compile_and_run("cache_always_deleted", cpu);
    EXPECT_NE(outcome.find("weft::Error"), std::string::npos) << outcome;
    EXPECT_NE(outcome.find("was deleted during each of"), std::string::npos) << outcome;
    EXPECT_EQ(outcome.find("Weft bug"), std::string::npos) << outcome;
}

TEST_F(HostCompilerTest, FolderDeletedWhileProcessesCompile) {
    constexpr int kChildren = 8;
    constexpr int kModules = 3;
    std::vector<pid_t> children;
    for (int c = 0; c < kChildren; ++c) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            int failures = 0;
            for (int m = 0; m < kModules; ++m) {
                const std::string outcome =
                    compile_and_run("cache_deleted_" + std::to_string(m), cpu, nullptr, 2.0f + c);
                if (outcome != "ok") {
                    std::fprintf(stderr, "child %d, module %d: %s\n", c, m, outcome.c_str());
                    ++failures;
                }
            }
            std::_Exit(failures);
        }
        children.push_back(pid);
    }
    for (int d = 0; d < 3; ++d) {
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    for (size_t c = 0; c < children.size(); ++c) {
        int status = 0;
        ASSERT_EQ(waitpid(children[c], &status, 0), children[c]);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << c << ": modules that failed";
    }
}

}  // namespace
