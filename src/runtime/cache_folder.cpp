// Locating, creating and vetting the cache folder (see docs/design/0010).
#include "runtime/cache_folder.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/files.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWhatToDo = "; set WEFT_CACHE_DIR to a folder of your own that only you can write";
constexpr const char* kOrWhatToDo = ", or set WEFT_CACHE_DIR to a folder of your own that only you can write";

const char* non_empty_env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// The home directory the password database gives this user, or "" when it has none.
std::string home_from_password_database() {
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    if (getpwuid_r(geteuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found || !found->pw_dir)
        return {};
    return found->pw_dir;
}

std::string octal_mode(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// Creates `dir` (mode 0700) and any missing parents; returns 0 or the errno of the failure.
int create_folder(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir.parent_path(), ec);
    if (ec) return ec.value();
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno;
    return 0;
}

// Every folder above the cache folder, along the path as written and as resolved, must be owned
// by this user or root and writable by no one else (its group included: a root-owned mode-2775
// project folder lets every member of its group write) unless sticky: a user who can rename
// entries of a folder above could swap the cache folder (or a link on the way to it) between its
// check and the loading of a module from it. A symbolic link on the way is judged by the folder
// holding it (the next one up, checked in turn) and by where it leads (the resolved path), not
// by its own mode bits, which are always 0777 and mean nothing.
void check_ancestors(const fs::path& dir, const std::string& named) {
    std::error_code ec;
    const fs::path resolved = fs::canonical(dir, ec);
    for (const fs::path& path : {dir, ec ? dir : resolved}) {
        for (fs::path above = path.parent_path();; above = above.parent_path()) {
            struct stat st {};
            if (::lstat(above.c_str(), &st) != 0)
                throw Error("cannot check " + above.string() + ", a folder above " + named + ": " +
                            os_error(errno) + kWhatToDo);
            if (S_ISLNK(st.st_mode)) {
                if (above == above.parent_path()) break;
                continue;
            }
            const std::string what = above.string() + ", a folder above " + named + ",";
            if (st.st_uid != geteuid() && st.st_uid != 0)
                throw Error(what + " belongs to another user (uid " + std::to_string(st.st_uid) +
                            "), who could replace the cache folder" + kWhatToDo);
            if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
                throw Error(what + " can be written by other users and is not sticky (mode " +
                            octal_mode(st.st_mode) + "), so they could replace the cache folder" + kWhatToDo);
            if ((st.st_mode & S_IWGRP) && !(st.st_mode & S_ISVTX))
                throw Error(what + " can be written by its group (gid " + std::to_string(st.st_gid) +
                            ") and is not sticky (mode " + octal_mode(st.st_mode) +
                            "), so its members could replace the cache folder" + kWhatToDo);
            if (above == above.parent_path()) break;
        }
    }
}

}  // namespace

fs::path cache_folder_location() {
    fs::path dir;
    if (const char* d = non_empty_env("WEFT_CACHE_DIR"))
        dir = d;
    else if (const char* x = non_empty_env("XDG_CACHE_HOME"); x && fs::path(x).is_absolute())
        dir = fs::path(x) / "weft";  // the XDG spec says to ignore a relative XDG_CACHE_HOME
    else if (const char* h = non_empty_env("HOME"))
        dir = fs::path(h) / ".cache" / "weft";
    else if (const std::string home = home_from_password_database(); !home.empty())
        dir = fs::path(home) / ".cache" / "weft";
    else
        throw Error(std::string("no folder for the kernel cache: HOME is not set and this user has no home "
                                "directory") +
                    kWhatToDo);
    // Absolute, so that a folder named like a compiler option ("-c") never reaches a command line
    // as one.
    std::error_code ec;
    fs::path absolute = fs::absolute(dir, ec);
    if (ec)
        throw Error("cannot locate the kernel cache folder " + dir.string() + ": " + ec.message() +
                    kWhatToDo);
    absolute = absolute.lexically_normal();
    return absolute.has_filename() ? absolute : absolute.parent_path();  // no trailing separator
}

bool CacheFolder::replaced() const {
    struct stat st {};
    return ::stat(path.c_str(), &st) != 0 || st.st_dev != device || st.st_ino != inode;
}

CacheFolder open_cache_folder() {
    const fs::path dir = cache_folder_location();
    const std::string named = "the kernel cache folder " + dir.string();
    struct stat st {};
    // A few rounds, because another process may delete the folder between creating and checking.
    for (int round = 0; ::stat(dir.c_str(), &st) != 0; ++round) {
        if (errno != ENOENT || round == 3)
            throw Error("cannot use " + named + ": " + os_error(errno) + kWhatToDo);
        if (const int err = create_folder(dir))
            throw Error("cannot create " + named + ": " + os_error(err) + kWhatToDo);
    }
    if (!S_ISDIR(st.st_mode)) throw Error(named + " is not a folder" + kWhatToDo);
    // Weft loads and runs the code it finds here, so it must be the user's own, and another
    // user must not be able to place or rename files in it. Root is held to the same rule:
    // it must never run code from a folder a user controls.
    if (st.st_uid != geteuid())
        throw Error(named + " belongs to another user (uid " + std::to_string(st.st_uid) +
                    "), so its contents cannot be trusted" + kWhatToDo);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        throw Error(named + " can be written by other users (mode " + octal_mode(st.st_mode) +
                    "), so its contents cannot be trusted: run `chmod go-w` on it" + kOrWhatToDo);
    check_ancestors(dir, named);
    if (::eaccess(dir.c_str(), R_OK | X_OK) != 0)
        throw Error("cannot read " + named + ": " + os_error(errno) + "; run `chmod u+rwx` on it" +
                    kOrWhatToDo);
    return {dir, st.st_dev, st.st_ino};
}

fs::path cache_dir() {
    return open_cache_folder().path;
}

}  // namespace weft::runtime
