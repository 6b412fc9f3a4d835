// The on-disk cache of compiled modules: content-addressed, verified, safe across processes.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace weft::runtime {

// WEFT_CACHE_DIR, else $XDG_CACHE_HOME/weft, else $HOME/.cache/weft; created on demand.
std::filesystem::path cache_dir();

// An entry is the built file with a footer holding the hash of its contents, so a truncated or
// overwritten entry is detected (and rebuilt) rather than loaded.
struct CacheEntry {
    std::filesystem::path path;
    bool hit;  // false: built now
};

// Returns the verified entry `name`, building it with `build(output_path)` when it is missing or
// corrupt. Concurrent processes may build the same entry: each builds into its own temporary
// file and renames it into place, so readers only ever see complete entries.
CacheEntry cached_build(const std::string& name,
                        const std::function<void(const std::filesystem::path&)>& build);

// Whether the entry at `path` is complete and intact.
bool entry_is_valid(const std::filesystem::path& path);
// The built file's contents, without the footer.
std::string read_entry(const std::filesystem::path& path);

}  // namespace weft::runtime
