// Cache entries: build to a temporary file, append a checksum footer, load, rename into place.
#include "runtime/cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

#include "base/hash.hpp"
#include "runtime/files.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFooterMagic = "WEFTSUM2";
constexpr size_t kFooterSize = 8 + 32;  // magic + hex hash
// Rounds of building when the cache folder keeps being deleted under a build.
constexpr int kRounds = 8;
// A temporary file older than this was left by a build that was killed: no build takes so long.
constexpr time_t kAbandonedAfterSeconds = 3600;

// The contents of the entry at `path` without its footer, when it is a regular file of this
// user's whose footer matches its name and contents.
std::optional<std::string> verified_body(const fs::path& path) {
    std::optional<FileContents> file = read_regular_file(path);
    if (!file || file->owner != ::geteuid() || file->bytes.size() < kFooterSize) return std::nullopt;
    const std::string_view bytes = file->bytes;
    const std::string_view body = bytes.substr(0, bytes.size() - kFooterSize);
    if (bytes.substr(body.size()) != entry_footer(path.filename().string(), body)) return std::nullopt;
    file->bytes.resize(body.size());
    return std::move(file->bytes);
}

// Removes the temporary files that killed builds of this user's left in `dir` long ago.
void remove_abandoned_temporaries(const fs::path& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    const time_t cutoff = ::time(nullptr) - kAbandonedAfterSeconds;
    while (const dirent* e = ::readdir(d)) {
        struct stat st {};
        if (std::strstr(e->d_name, ".tmp.") &&
            ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == ::geteuid() && st.st_mtime < cutoff)
            ::unlinkat(::dirfd(d), e->d_name, 0);
    }
    ::closedir(d);
}

// Sets `vanished` when it fails after its temporary file disappeared: the cache folder was
// deleted (and perhaps recreated, possibly with the same inode number), or, once the file was
// renamed into place, the entry was.
CacheEntry load_or_build(const fs::path& dir, const std::string& name, const EntryBuilder& build,
                         const EntryLoader& load, bool& vanished) {
    const fs::path entry = dir / name;
    if (const std::optional<std::string> body = verified_body(entry)) {
        try {
            load(entry, *body, EntryLoad::Cached);
            return {entry, true};
        } catch (const Error&) {
            // An intact entry that does not load is rebuilt, as a corrupt one is.
        }
    }

    remove_abandoned_temporaries(dir);
    fs::path tmp;
    try {
        tmp = create_unique_file((dir / (name + ".tmp.")).string(), "", "");
    } catch (const FileError& e) {
        vanished = e.code == ENOENT;  // deleted since it was opened
        throw Error("the kernel cache folder cannot be written: " + e.message() +
                    "; make it writable, or set WEFT_CACHE_DIR to a folder you can write");
    }
    RemovedOnExit cleanup(tmp);
    try {
        build(tmp);
        std::optional<FileContents> built = read_regular_file(tmp);
        if (!built || built->bytes.empty())
            throw Error("building the kernel cache entry " + name + " left no output in " + tmp.string());
        append_to_file(tmp, entry_footer(name, built->bytes));
        load(tmp, built->bytes, EntryLoad::Check);
        if (::rename(tmp.c_str(), entry.c_str()) != 0) {
            const int err = errno;
            throw Error("cannot store the kernel cache entry " + entry.string() + ": " + os_error(err) +
                        (err == EISDIR || err == ENOTEMPTY || err == EEXIST
                             ? "; a folder is in its place: remove it (deleting anything in the cache "
                               "folder is safe)"
                             : ""));
        }
        cleanup.release();
    } catch (const Error&) {
        struct stat st {};
        vanished = ::lstat(tmp.c_str(), &st) != 0 && errno == ENOENT;
        throw;
    }
    return {entry, false};
}

}  // namespace

std::string entry_footer(const std::string& name, std::string_view body) {
    return std::string(kFooterMagic) + base::Hasher().add(name).add(body).hex();
}

bool entry_is_valid(const fs::path& path) {
    return verified_body(path).has_value();
}

CacheEntry cached_build(const std::string& name, const EntryBuilder& build, const EntryLoader& load) {
    for (int round = 1;; ++round) {
        const CacheFolder folder = open_cache_folder();
        bool vanished = false;
        try {
            return load_or_build(folder.path, name, build, load, vanished);
        } catch (const Error& e) {
            // Deleting the cache folder is always safe: when it vanished (or was replaced) under
            // this build, whatever failed failed because of that, so start again in a new one. A
            // full disk says so unless the folder went: a linker removes its output when the
            // disk is full, which is no sign of a deleted folder.
            const bool full = dynamic_cast<const DiskFull*>(&e) != nullptr;
            if ((full || !vanished) && !folder.replaced()) throw;
            if (round < kRounds) continue;
            throw Error("the kernel cache folder " + folder.path.string() + " was deleted during each of " +
                        std::to_string(kRounds) + " attempts to build " + name +
                        "; stop what keeps deleting it, or set WEFT_CACHE_DIR to another folder. The last "
                        "attempt failed with: " +
                        e.message());
        }
    }
}

}  // namespace weft::runtime
