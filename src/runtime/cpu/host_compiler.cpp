// Finding, probing and running the host compiler, and explaining its failures.
#include "runtime/cpu/host_compiler.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cpu/process.hpp"
#include "runtime/files.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cpu {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInstall = "install g++ or set WEFT_CXX to a C++17 compiler";

std::string configured_name() {
    if (const char* env = std::getenv("WEFT_CXX"); env && *env) return env;
#ifdef WEFT_DEFAULT_CXX
    if (::access(WEFT_DEFAULT_CXX, X_OK) == 0) return WEFT_DEFAULT_CXX;
#endif
    return "c++";
}

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// `name` as the absolute path that runs: itself when it holds a '/', else the first executable
// of that name in PATH (as a shell would find it), never a name resolved again by posix_spawnp.
std::string find_executable(const std::string& name) {
    if (name.find('/') != std::string::npos) {
        std::error_code ec;
        const fs::path p = fs::absolute(name, ec);
        if (!ec && is_executable_file(p.string())) return p.lexically_normal().string();
        throw Error("the host C++ compiler '" + name + "' is not an executable file; " + kInstall);
    }
    const char* env_path = std::getenv("PATH");
    const std::string search = env_path ? env_path : "/usr/local/bin:/usr/bin:/bin";
    for (size_t begin = 0;;) {
        const size_t end = std::min(search.find(':', begin), search.size());
        // An empty entry means the current folder.
        const fs::path dir = end > begin ? fs::path(search.substr(begin, end - begin)) : fs::path(".");
        std::error_code ec;
        const fs::path candidate = fs::absolute(dir / name, ec);
        if (!ec && is_executable_file(candidate.string())) return candidate.lexically_normal().string();
        if (end == search.size()) break;
        begin = end + 1;
    }
    throw Error("the host C++ compiler '" + name + "' was not found in PATH; " + kInstall);
}

std::string probe(const std::string& path, const char* option) {
    const ProcessResult r = run_process({path, option});
    if (r.spawn_error)
        throw Error("cannot run the host C++ compiler '" + path + "': " + os_error(r.spawn_error) + "; " +
                    kInstall);
    if (!r.succeeded())
        throw Error("the host C++ compiler '" + path + "' failed on `" + option + "`; " + kInstall + "\n" +
                    r.output);
    return r.output;
}

// What makes a compiler run differently without a change to its --version text: which file
// runs (a wrapper script adding flags is another file), and that file's contents.
std::string executable_stamp(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error("cannot inspect the host C++ compiler '" + path + "': " + os_error(errno));
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) +
           ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// The first line of `output` that reports an operating-system failure (a full disk, a folder
// that cannot be written, memory running out) rather than a problem with the code; "" if none.
// `full` says whether it is a full disk or file system, which building again cannot cure (a
// missing or unwritable file may be a cache folder deleted under the build).
std::string environment_failure(const std::string& output, bool& full) {
    static const std::vector<std::string> full_signs = {os_error(ENOSPC), os_error(EDQUOT), os_error(EFBIG)};
    static const std::vector<std::string> signs = [] {
        std::vector<std::string> s;
        for (int err : {EROFS, EACCES, EPERM, EIO, ENOENT, ENOMEM, EMFILE, ENFILE})
            s.push_back(os_error(err));
        s.insert(s.end(), {"out of memory", "virtual memory exhausted", "Killed signal terminated program"});
        return s;
    }();
    for (size_t begin = 0; begin < output.size();) {
        const size_t end = std::min(output.find('\n', begin), output.size());
        const std::string line = output.substr(begin, end - begin);
        for (const auto& sign : full_signs)
            if (line.find(sign) != std::string::npos) {
                full = true;
                return line;
            }
        for (const auto& sign : signs)
            if (line.find(sign) != std::string::npos) return line;
        begin = end + 1;
    }
    return {};
}

}  // namespace

const HostCompiler& host_compiler() {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<HostCompiler>> probed;
    const std::string name = configured_name();
    const std::string path = find_executable(name);
    const std::string stamp = executable_stamp(path);
    std::lock_guard lock(mutex);
    std::unique_ptr<HostCompiler>& c = probed[path + "\n" + stamp];
    if (!c) {
        HostCompiler found{name, path, probe(path, "--version"), probe(path, "-dumpmachine"), {}};
        found.key = base::Hasher().add(path).add(stamp).add(found.version).add(found.machine).hex();
        c = std::make_unique<HostCompiler>(std::move(found));
    }
    return *c;
}

std::vector<std::string> compile_flags(const HostCompiler& compiler, const Options& options) {
    std::vector<std::string> flags = {"-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden",
                                      "-fno-math-errno",
                                      // Signed overflow wraps, as it does on the GPU.
                                      "-fwrapv", "-O" + std::to_string(options.optimization_level)};
    // GCC's -O2 vectorizes only loops that need no remainder, which a chunk of a launch's threads
    // has; its -O3 cost model lets the chunk loop vectorize across threads (docs/design/0019).
    // Vectorizing changes no result: nothing is reassociated without -ffast-math.
    const bool gcc = compiler.version.find("Free Software Foundation") != std::string::npos &&
                     compiler.version.find("clang") == std::string::npos;
    if (gcc && options.optimization_level == 2) flags.push_back("-fvect-cost-model=dynamic");
    // Arithmetic must match across devices in GpuToGpu mode: no contraction into FMA.
    if (options.deterministic == Deterministic::GpuToGpu) flags.push_back("-ffp-contract=off");
    return flags;
}

void compile_shared_object(const HostCompiler& compiler, const fs::path& source, const fs::path& output,
                           const std::vector<std::string>& flags, const std::string& module) {
    std::vector<std::string> args = {compiler.path};
    args.insert(args.end(), flags.begin(), flags.end());
    // Both paths are absolute (the cache folder is), so neither can read as an option.
    args.insert(args.end(), {"-o", output.string(), source.string()});
    const ProcessResult r = run_process(args);
    const std::string who = "the host C++ compiler '" + compiler.path + "'";
    const std::string what = " while compiling module '" + module + "'";
    if (r.spawn_error) throw Error("cannot run " + who + ": " + os_error(r.spawn_error) + "; " + kInstall);
    if (r.signal)
        throw Error(who + " was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) +
                    ")" + what +
                    "; the generated code is not at fault: retry, and check that the machine has "
                    "memory to spare" +
                    (r.output.empty() ? "" : ". Its output:\n" + r.output));
    if (r.exit_code != 0) {
        bool full = false;
        if (const std::string line = environment_failure(r.output, full); !line.empty()) {
            const std::string text = who + " could not do its work" + what + ": " + line +
                                     "\n(check free disk space and memory, and that the cache folder " +
                                     output.parent_path().string() +
                                     " and TMPDIR can be written) Its output:\n" + r.output;
            if (full) throw DiskFull(text);
            throw Error(text);
        }
        throw Error("the host compiler failed on generated code for module '" + module +
                    "' (a Weft bug; please report it with this output):\n" + r.output);
    }
    struct stat st {};
    if (::stat(output.c_str(), &st) != 0 || st.st_size == 0)
        throw Error(who + " reported success" + what + " but wrote no output" +
                    "; check that WEFT_CXX names a working C++ compiler\n" + r.output);
}

}  // namespace weft::runtime::cpu
