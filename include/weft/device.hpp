// Devices: the CPU and CUDA GPUs, named "cpu", "cuda:0", "cuda:1", ...
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

enum class DeviceKind : uint8_t { Cpu, Cuda };

class Device {
public:
    static Device cpu() { return Device(DeviceKind::Cpu, 0); }
    static Device cuda(int ordinal) { return Device(DeviceKind::Cuda, ordinal); }

    DeviceKind kind() const { return kind_; }
    int ordinal() const { return ordinal_; }
    bool is_cpu() const { return kind_ == DeviceKind::Cpu; }
    bool is_cuda() const { return kind_ == DeviceKind::Cuda; }
    std::string name() const;

    friend bool operator==(const Device&, const Device&) = default;

private:
    Device(DeviceKind kind, int ordinal) : kind_(kind), ordinal_(ordinal) {}
    DeviceKind kind_;
    int ordinal_;
};

/// Parses "cpu" or "cuda:N"; throws weft::Error for anything else or a device that is absent.
Device device(std::string_view name);
/// The first CUDA GPU if there is one, else the CPU. The WEFT_DEVICE environment variable
/// ("cpu", "cuda:1") overrides it.
Device default_device();
/// Every device this process can use, the CPU first.
std::vector<Device> devices();

struct DeviceInfo {
    std::string name;
    int compute_capability_major = 0;  // 0 for the CPU
    int compute_capability_minor = 0;
    int multiprocessors = 0;    // SMs; for the CPU, hardware threads
    uint64_t total_memory = 0;  // bytes; 0 for the CPU
};
DeviceInfo device_info(Device device);

/// Whether GPUs can be used, and if not, why (no driver, no GPU, WEFT_DISABLE_CUDA set).
bool cuda_available();
std::string cuda_unavailable_reason();

/// Waits for all work queued on `device` by this thread's current stream. Errors of earlier
/// asynchronous launches surface here as a weft::Error naming the kernels.
void synchronize(Device device);

}  // namespace weft
