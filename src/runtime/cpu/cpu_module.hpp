// A module compiled for the CPU: a shared object from the cache, loaded with dlopen.
#pragma once

#include <filesystem>
#include <memory>

#include "runtime/device_module.hpp"

namespace weft::runtime::cpu {

class CpuModule final : public DeviceModule {
public:
    static std::shared_ptr<CpuModule> load(codegen::Generated generated, const plan::ProgramPlan& plan,
                                           const Options& options);
    ~CpuModule() override;
    CpuModule(const CpuModule&) = delete;
    CpuModule& operator=(const CpuModule&) = delete;

    // Runs the launch's threads in chunks on the CPU's workers (docs/design/0019); returns when
    // all have run. A fault is the first in (row-major) thread order. A launch of one chunk with
    // exclusive atomics runs serial (wf::Launch::serial): its atomics are plain loads and stores.
    void launch(size_t function, const LaunchGrid& grid, void* const* args, const Options& options,
                bool exclusive_atomics) const override;

private:
    CpuModule() = default;
    // dlopens shared object `image` (the checked bytes of the cache entry at `path`) and finds
    // every entry; throws weft::Error, loading nothing, when it cannot.
    void open(const std::string& image, const std::filesystem::path& path);
    void unload();
    // Runs threads [begin, end) of the launch; records the chunk's first fault in the last argument.
    using Entry = void (*)(void* const*, const LaunchRecord*, int64_t, int64_t, FaultRecord*, int32_t);
    void* handle_ = nullptr;
    std::vector<Entry> entries_;
};

}  // namespace weft::runtime::cpu
