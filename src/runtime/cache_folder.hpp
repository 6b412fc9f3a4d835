// Where the module cache lives, and the checks that make it safe to load code from it.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace weft::runtime {

// WEFT_CACHE_DIR, else $XDG_CACHE_HOME/weft, else $HOME/.cache/weft, else <home directory in
// the password database>/.cache/weft, as an absolute path; never a shared folder such as /tmp.
// Throws weft::Error when no such folder can be named. Creates nothing.
std::filesystem::path cache_folder_location();

// The cache folder, created (mode 0700) when missing and checked: a folder that belongs to this
// user and that no other user can write, so that every entry in it was written by this user.
struct CacheFolder {
    std::filesystem::path path;
    dev_t device;
    ino_t inode;
    // Whether the folder was removed or replaced since it was opened.
    bool replaced() const;
};
// Throws weft::Error saying what is wrong and what to do when the folder is unusable.
CacheFolder open_cache_folder();

// open_cache_folder().path: the folder cache entries are read from and written to.
std::filesystem::path cache_dir();

}  // namespace weft::runtime
