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

    // Runs the launch's threads one after another, in row-major order, on the calling thread.
    void launch(size_t function, const LaunchGrid& grid, void* const* args,
                const Options& options) const override;

private:
    CpuModule() = default;
    // dlopens the shared object at `path` and finds every entry; throws weft::Error, loading
    // nothing, when it cannot.
    void open(const std::filesystem::path& path);
    void unload();
    using Entry = void (*)(void* const*, const LaunchRecord*);
    void* handle_ = nullptr;
    std::vector<Entry> entries_;
};

}  // namespace weft::runtime::cpu
