// Device names, lookup and the default device.
#include <cstdlib>

#include "weft/device.hpp"
#include "weft/error.hpp"

namespace weft {

std::string Device::name() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(ordinal_); }

std::vector<Device> devices() { return {Device::cpu()}; }

Device device(std::string_view name) {
    for (const Device& d : devices())
        if (d.name() == name) return d;
    if (name.rfind("cuda", 0) == 0)
        throw Error("device '" + std::string(name) + "' is not available: this process has no CUDA device; use \"cpu\"");
    throw Error("unknown device '" + std::string(name) + "'; use \"cpu\" or \"cuda:N\"");
}

Device default_device() {
    if (const char* env = std::getenv("WEFT_DEVICE"); env && *env) return device(env);
    return devices().back();
}

}  // namespace weft
