// Weft's own GPU modules and the source text NVRTC compiles for each: the kernel sources of
// src/device/kernels, embedded at build time, after the prelude and the library ABI they use.
#pragma once

#include <string>
#include <vector>

namespace weft::runtime::cuda {

enum class LibraryModule {
    Scan,
    Slots,
    SlotBins,
    SlotGroups,
    Deterministic,
    GraphCondition,
    DistributedWindow,  // the NCCL engine's (weft_distributed)
};

// Every module, for tools that compile them all (tools/device_registers.cpp).
const std::vector<LibraryModule>& library_modules();

// The module's name: the program name NVRTC reports and part of its disk cache entry's.
const char* library_module_name(LibraryModule module);

// The whole text NVRTC compiles for the module (built once).
const std::string& library_source(LibraryModule module);

// The NVRTC options the module needs beyond the architecture and language level.
std::vector<std::string> library_options(LibraryModule module);

}  // namespace weft::runtime::cuda
