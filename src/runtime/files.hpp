// Files read and written through plain descriptors: never through a symlink, every failure a weft::Error.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "weft/error.hpp"

namespace weft::runtime {

// The operating system's text for errno value `err` ("No space left on device").
std::string os_error(int err);

// A failed file operation; `code` is its errno.
class FileError : public Error {
public:
    FileError(std::string message, int code) : Error(std::move(message)), code(code) {}
    int code;
};

// Creates a new file named `stem` + six random characters + `suffix` (O_EXCL, mode 0600, so
// nothing planted at a guessed name is ever opened), writes `contents` and returns its path.
// Throws FileError when the file cannot be created or written.
std::filesystem::path create_unique_file(const std::string& stem, std::string_view suffix,
                                         std::string_view contents);

// Appends `bytes` to the regular file at `path`; throws FileError when that fails.
void append_to_file(const std::filesystem::path& path, std::string_view bytes);

struct FileContents {
    std::string bytes;
    uid_t owner;
};
// The contents of the regular file at `path`; nullopt when it is missing, a symlink, not a
// regular file, or cannot be read.
std::optional<FileContents> read_regular_file(const std::filesystem::path& path);

// Removes the file at `path` when it goes out of scope, unless released.
class RemovedOnExit {
public:
    explicit RemovedOnExit(std::filesystem::path path) : path_(std::move(path)) {}
    ~RemovedOnExit();
    RemovedOnExit(const RemovedOnExit&) = delete;
    RemovedOnExit& operator=(const RemovedOnExit&) = delete;
    void release() { path_.clear(); }

private:
    std::filesystem::path path_;
};

}  // namespace weft::runtime
