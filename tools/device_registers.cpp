// Compiles each of Weft's library modules as the runtime does (the embedded source, NVRTC, the
// runtime's options) for one GPU architecture with ptxas's report, and prints each kernel's
// registers and spills as "kernel registers spill_bytes": tools/check-device-sources.sh sets
// them beside nvcc's. Needs NVRTC, no GPU.
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cuda/device_sources.hpp"
#include "runtime/cuda/nvrtc.hpp"

namespace cu = weft::runtime::cuda;

namespace {

// Prints one line per entry function of ptxas's report `log`; false where it has none.
bool print_registers(const std::string& log) {
    std::istringstream lines(log);
    std::string line, entry;
    long long spill = 0;
    bool any = false;
    while (std::getline(lines, line)) {
        const auto quoted = line.find("Compiling entry function '");
        if (quoted != std::string::npos) {
            const size_t from = quoted + 26;
            entry = line.substr(from, line.find('\'', from) - from);
            spill = 0;
            continue;
        }
        const auto stores = line.find(" bytes spill stores");
        if (stores != std::string::npos) {
            const auto comma = line.rfind(',', stores);
            spill += std::atoll(line.c_str() + (comma == std::string::npos ? 0 : comma + 1));
        }
        const auto used = line.find("Used ");
        if (used != std::string::npos && line.find(" registers", used) != std::string::npos &&
            !entry.empty()) {
            std::printf("%s %lld %lld\n", entry.c_str(), std::atoll(line.c_str() + used + 5), spill);
            entry.clear();
            any = true;
        }
    }
    return any;
}

}  // namespace

int main(int argc, char** argv) {
    const int arch = argc > 1 ? std::atoi(argv[1]) : 90;
    if (arch <= 0) {
        std::fprintf(stderr, "usage: %s [architecture, e.g. 90]\n", argv[0]);
        return 2;
    }
    int failures = 0;
    for (const cu::LibraryModule module : cu::library_modules()) {
        const std::string& source = cu::library_source(module);
        const char* name = cu::library_module_name(module);
        std::vector<std::string> extra = cu::library_options(module);
        extra.push_back("--ptxas-options=-v");
        const std::vector<std::string> options = cu::nvrtc_options(arch, extra);
        std::vector<const char*> argv_options;
        for (const std::string& o : options) argv_options.push_back(o.c_str());
        nvrtcProgram program = nullptr;
        if (nvrtcCreateProgram(&program, source.c_str(), name, 0, nullptr, nullptr) != NVRTC_SUCCESS) {
            std::fprintf(stderr, "%s: nvrtcCreateProgram failed\n", name);
            ++failures;
            continue;
        }
        const nvrtcResult compiled =
            nvrtcCompileProgram(program, static_cast<int>(argv_options.size()), argv_options.data());
        size_t size = 0;
        nvrtcGetProgramLogSize(program, &size);
        std::string log(size, '\0');
        nvrtcGetProgramLog(program, log.data());
        nvrtcDestroyProgram(&program);
        if (compiled != NVRTC_SUCCESS) {
            std::fprintf(stderr, "%s: NVRTC failed:\n%s\n", name, log.c_str());
            ++failures;
            continue;
        }
        if (!print_registers(log)) {
            std::fprintf(stderr, "%s: no register report in NVRTC's log:\n%s\n", name, log.c_str());
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
