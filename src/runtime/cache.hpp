// The on-disk cache of compiled modules: content-addressed, verified, safe across processes.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "runtime/cache_folder.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

// An entry is the built file with a footer holding a hash of its name and its contents, so a
// truncated, overwritten or renamed entry is detected (and rebuilt) rather than loaded.
struct CacheEntry {
    std::filesystem::path path;
    bool hit;  // false: built now
};

// Builds an entry's contents into the (already created, empty) file `output`.
using EntryBuilder = std::function<void(const std::filesystem::path& output)>;
// Why an entry is loaded: found in the cache, or built now and loaded to check it before it is
// published (the loaded module is then the one published).
enum class EntryLoad { Cached, Check };
// Loads the verified contents `body` of the file at `path` (from `body`: the file may change
// after its check); throws weft::Error when they cannot be loaded.
using EntryLoader =
    std::function<void(const std::filesystem::path& path, const std::string& body, EntryLoad why)>;

// A build that failed because a disk or file system is full (no space left, a quota, a file size
// limit): building again in a new cache folder cannot cure it, so cached_build reports it at once.
class DiskFull : public Error {
public:
    using Error::Error;
};

// Loads the entry `name`, building it first when it is missing, corrupt, or does not load.
// Concurrent processes may build the same entry: each builds into its own temporary file, loads
// it, and renames it into place, so readers only ever see complete entries that load. When the
// cache folder is deleted while this runs, it starts again in a new one.
CacheEntry cached_build(const std::string& name, const EntryBuilder& build, const EntryLoader& load);

// Whether the entry at `path` is complete, intact, and was built under its file name.
bool entry_is_valid(const std::filesystem::path& path);
// The footer that makes `body` a valid entry named `name`.
std::string entry_footer(const std::string& name, std::string_view body);

}  // namespace weft::runtime
