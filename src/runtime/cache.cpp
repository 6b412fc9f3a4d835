// Cache entries: build to a temporary file, append a checksum footer, rename into place.
#include "runtime/cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include "base/hash.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFooterMagic = "WEFTSUM1";
constexpr size_t kFooterSize = 8 + 32;  // magic + hex hash

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string unique_suffix() {
    static std::atomic<uint64_t> counter{0};
    thread_local std::mt19937_64 rng(std::random_device{}());
    return std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
           std::to_string(rng() % 1000000);
}

}  // namespace

fs::path cache_dir() {
    fs::path dir;
    if (const char* d = std::getenv("WEFT_CACHE_DIR"); d && *d)
        dir = d;
    else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        dir = fs::path(x) / "weft";
    else if (const char* h = std::getenv("HOME"); h && *h)
        dir = fs::path(h) / ".cache" / "weft";
    else
        dir = fs::temp_directory_path() / "weft-cache";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw Error("cannot create the kernel cache directory " + dir.string() + ": " + ec.message() +
                    "; set WEFT_CACHE_DIR to a writable directory");
    return dir;
}

bool entry_is_valid(const fs::path& path) {
    const std::string bytes = read_file(path);
    if (bytes.size() < kFooterSize) return false;
    const std::string_view body(bytes.data(), bytes.size() - kFooterSize);
    const std::string_view footer(bytes.data() + body.size(), kFooterSize);
    return footer.substr(0, kFooterMagic.size()) == kFooterMagic &&
           footer.substr(kFooterMagic.size()) == base::hash_hex(body);
}

std::string read_entry(const fs::path& path) {
    std::string bytes = read_file(path);
    bytes.resize(bytes.size() >= kFooterSize ? bytes.size() - kFooterSize : 0);
    return bytes;
}

CacheEntry cached_build(const std::string& name, const std::function<void(const fs::path&)>& build) {
    const fs::path dir = cache_dir();
    const fs::path entry = dir / name;
    if (fs::exists(entry) && entry_is_valid(entry)) return {entry, true};

    const fs::path tmp = dir / (name + ".tmp." + unique_suffix());
    struct Cleanup {
        fs::path p;
        ~Cleanup() {
            std::error_code ec;
            fs::remove(p, ec);
        }
    } cleanup{tmp};
    build(tmp);
    const std::string body = read_file(tmp);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::app);
        out << kFooterMagic << base::hash_hex(body);
        if (!out) throw Error("cannot write the kernel cache entry " + tmp.string());
    }
    std::error_code ec;
    fs::rename(tmp, entry, ec);
    if (ec) throw Error("cannot publish the kernel cache entry " + entry.string() + ": " + ec.message());
    return {entry, false};
}

}  // namespace weft::runtime
