// File helpers on POSIX descriptors, so errors carry errno's text and never escape as iostream or
// filesystem exceptions.
#include "runtime/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace weft::runtime {

namespace fs = std::filesystem;

namespace {

// Closes a descriptor on every path out of a function.
struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// Writes all of `bytes` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
}

}  // namespace

std::string os_error(int err) {
    return std::strerror(err);
}

fs::path create_unique_file(const std::string& stem, std::string_view suffix, std::string_view contents) {
    std::string name = stem + "XXXXXX" + std::string(suffix);
    const Descriptor file{::mkostemps(name.data(), static_cast<int>(suffix.size()), O_CLOEXEC)};
    if (file.fd < 0) {
        const int err = errno;
        throw FileError(
            "cannot create a file in " + fs::path(stem).parent_path().string() + ": " + os_error(err), err);
    }
    if (const int err = write_all(file.fd, contents)) {
        ::unlink(name.c_str());
        throw FileError("cannot write " + name + ": " + os_error(err), err);
    }
    return name;
}

void append_to_file(const fs::path& path, std::string_view bytes) {
    const Descriptor file{::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)};
    if (file.fd < 0) {
        const int err = errno;
        throw FileError("cannot open " + path.string() + ": " + os_error(err), err);
    }
    if (const int err = write_all(file.fd, bytes))
        throw FileError("cannot write " + path.string() + ": " + os_error(err), err);
}

std::optional<FileContents> read_regular_file(const fs::path& path) {
    const Descriptor file{::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
    struct stat st {};
    if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    FileContents out{std::string(static_cast<size_t>(st.st_size), '\0'), st.st_uid};
    size_t done = 0;
    while (done < out.bytes.size()) {
        const ssize_t n = ::read(file.fd, out.bytes.data() + done, out.bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) break;  // shrank while being read: the check of its footer fails
        done += static_cast<size_t>(n);
    }
    out.bytes.resize(done);
    return out;
}

RemovedOnExit::~RemovedOnExit() {
    if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace weft::runtime
