// Runs the host compiler as a child process.
#include "runtime/cpu/host_compiler.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "weft/error.hpp"

extern char** environ;

namespace weft::runtime::cpu {

namespace fs = std::filesystem;

namespace {

// Runs `argv`, sending stdout and stderr to `log`; returns the exit status.
int run(const std::vector<std::string>& args, const fs::path& log) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path temp_log() {
    static std::atomic<uint64_t> counter{0};
    return fs::temp_directory_path() /
           ("weft-cc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".log");
}

}  // namespace

const std::string& host_compiler() {
    static const std::string cxx = [] {
        if (const char* env = std::getenv("WEFT_CXX"); env && *env) return std::string(env);
#ifdef WEFT_DEFAULT_CXX
        if (fs::exists(WEFT_DEFAULT_CXX)) return std::string(WEFT_DEFAULT_CXX);
#endif
        return std::string("c++");
    }();
    return cxx;
}

const std::string& host_compiler_identity() {
    static const std::string identity = [] {
        const fs::path log = temp_log();
        const int rc = run({host_compiler(), "--version"}, log);
        std::string text = read_file(log);
        std::error_code ec;
        fs::remove(log, ec);
        if (rc != 0)
            throw Error("cannot run the host C++ compiler '" + host_compiler() +
                        "' to build CPU kernels; install g++ or set WEFT_CXX to a C++17 compiler");
        return text;
    }();
    return identity;
}

std::vector<std::string> compile_flags(const Options& options) {
    std::vector<std::string> flags = {"-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden",
                                      "-fno-math-errno",
                                      // Signed overflow wraps, as it does on the GPU.
                                      "-fwrapv", "-O" + std::to_string(options.optimization_level)};
    // Arithmetic must match across devices in GpuToGpu mode: no contraction into FMA.
    if (options.deterministic == Deterministic::GpuToGpu) flags.push_back("-ffp-contract=off");
    return flags;
}

void compile_shared_object(const fs::path& source, const fs::path& output,
                           const std::vector<std::string>& flags) {
    std::vector<std::string> args = {host_compiler()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"-o", output.string(), source.string()});
    const fs::path log = temp_log();
    const int rc = run(args, log);
    const std::string text = read_file(log);
    std::error_code ec;
    fs::remove(log, ec);
    if (rc != 0)
        throw Error(
            "the host compiler failed on generated code (a Weft bug; please report it with this "
            "output):\n" +
            text);
}

}  // namespace weft::runtime::cpu
