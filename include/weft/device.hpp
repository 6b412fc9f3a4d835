// Devices: the CPU and CUDA GPUs, named "cpu", "cuda:0", "cuda:1", ...
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

/// What a Device is: the CPU, or a CUDA GPU.
enum class DeviceKind : uint8_t {
    Cpu,  ///< The CPU: kernels compiled by the host compiler, run on worker threads.
    Cuda  ///< A CUDA GPU: kernels compiled by NVRTC.
};

/// A device by kind and ordinal: Device::cpu(), Device::cuda(0), ... A plain value: cheap to copy
/// and compare; building one checks nothing (weft::device(name) does).
class Device {
public:
    /// The CPU (one device, ordinal 0, however many threads run kernels on it).
    static Device cpu() { return Device(DeviceKind::Cpu, 0); }
    /// CUDA GPU number `ordinal`, as the driver numbers them (not checked until used).
    static Device cuda(int ordinal) { return Device(DeviceKind::Cuda, ordinal); }

    /// The CPU or CUDA.
    DeviceKind kind() const { return kind_; }
    /// The GPU's number (0 for the CPU).
    int ordinal() const { return ordinal_; }
    /// Whether this is the CPU.
    bool is_cpu() const { return kind_ == DeviceKind::Cpu; }
    /// Whether this is a CUDA GPU.
    bool is_cuda() const { return kind_ == DeviceKind::Cuda; }
    /// "cpu" or "cuda:N", as weft::device parses it.
    std::string name() const;

    /// Same kind and ordinal.
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

/// What device_info reports about a device.
struct DeviceInfo {
    /// The GPU's name as the driver gives it, or "cpu".
    std::string name;
    int compute_capability_major = 0;  ///< The GPU's compute capability (8 for an sm_80), 0 for the CPU.
    int compute_capability_minor = 0;  ///< The minor part (0 for an sm_80; 0 for the CPU).
    int multiprocessors = 0;           ///< SMs; for the CPU, hardware threads.
    uint64_t total_memory = 0;         ///< Bytes of GPU memory; 0 for the CPU.
};
/// Facts about `device` (weft::Error for a GPU that is absent or cannot be used).
DeviceInfo device_info(Device device);

/// Whether GPUs can be used, and if not, why (no driver, no GPU, WEFT_DISABLE_CUDA set).
bool cuda_available();
/// Empty when cuda_available(), else why GPUs cannot be used, for messages.
std::string cuda_unavailable_reason();

/// Waits for all work queued on `device` by this thread's current stream. Errors of earlier
/// asynchronous launches surface here as a weft::Error naming the kernels. Inside a graph capture
/// of the device it is a weft::Error naming the caller's line (a graph cannot wait for the host).
void synchronize(Device device, std::source_location s = std::source_location::current());

}  // namespace weft
