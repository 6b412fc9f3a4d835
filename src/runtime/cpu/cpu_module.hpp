// A module compiled for the CPU: a shared object from the cache, loaded with dlopen.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "ir/ir.hpp"
#include "weft/options.hpp"

namespace weft::runtime::cpu {

struct LaunchGrid {
    int ndim = 1;
    int64_t dims[4] = {1, 1, 1, 1};
};

class CpuModule {
public:
    // Generates code for `lowered`, then loads it from the cache or compiles it.
    static std::shared_ptr<CpuModule> load(const ir::Program& lowered, const Options& options);
    ~CpuModule();
    CpuModule(const CpuModule&) = delete;
    CpuModule& operator=(const CpuModule&) = delete;

    // Runs kernel `function` over `grid`, threads in row-major order. `args` point at each
    // argument's value (an array descriptor or a scalar). Throws weft::Error for a fault the
    // kernel reported (an out-of-bounds index with bounds checking on).
    void launch(size_t function, const LaunchGrid& grid, void* const* args) const;

    const codegen::Generated& generated() const { return generated_; }
    bool loaded_from_cache() const { return from_cache_; }

private:
    CpuModule() = default;
    using Entry = void (*)(void* const*, const void*);
    std::string module_name_;
    std::vector<std::string> function_names_;
    codegen::Generated generated_;
    void* handle_ = nullptr;
    std::vector<Entry> entries_;
    bool from_cache_ = false;
};

}  // namespace weft::runtime::cpu
