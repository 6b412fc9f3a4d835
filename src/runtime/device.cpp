// Device names, lookup, properties and the default device.
#include "weft/device.hpp"

#include <cstdlib>

#include "runtime/backend.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/graph_capture.hpp"
#include "weft/error.hpp"

namespace weft {

namespace cu = runtime::cuda;

std::string Device::name() const {
    return is_cpu() ? "cpu" : "cuda:" + std::to_string(ordinal_);
}

std::vector<Device> devices() {
    std::vector<Device> all = {Device::cpu()};
    for (int i = 0; i < cu::device_count(); ++i) all.push_back(Device::cuda(i));
    return all;
}

bool cuda_available() {
    return cu::device_count() > 0;
}

std::string cuda_unavailable_reason() {
    return cuda_available() ? "" : cu::unavailable_reason();
}

Device device(std::string_view name) {
    for (const Device& d : devices())
        if (d.name() == name) return d;
    if (name.rfind("cuda", 0) == 0)
        throw Error("device '" + std::string(name) + "' is not available" +
                    (cuda_available() ? "; this machine has " + std::to_string(cu::device_count()) + " GPU(s)"
                                      : ": " + cu::unavailable_reason()) +
                    "; use \"cpu\" or an existing \"cuda:N\"");
    throw Error("unknown device '" + std::string(name) + "'; use \"cpu\" or \"cuda:N\"");
}

Device default_device() {
    if (const char* env = std::getenv("WEFT_DEVICE"); env && *env) {
        try {
            return device(env);
        } catch (const Error& e) {
            // The program named no device: say where the name came from.
            throw Error("WEFT_DEVICE is '" + std::string(env) + "': " + e.message() +
                        "; or unset WEFT_DEVICE for the first GPU, else the CPU");
        }
    }
    return cuda_available() ? Device::cuda(0) : Device::cpu();
}

DeviceInfo device_info(Device device) {
    return runtime::backend(device).info();
}

void synchronize(Device device, std::source_location s) {
    runtime::refuse_in_capture(device, "synchronize()", &s);
    runtime::backend(device).synchronize();
}

}  // namespace weft
