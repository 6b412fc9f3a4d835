// Per-GPU state: the primary context, device properties, streams and the current stream.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/abi.h"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/status_claims.hpp"

namespace weft::runtime::cuda {

// The names of the last 16 kernels launched on a stream, oldest first: a ring whose strings keep
// their capacity, so that noting a launch allocates nothing once it has gone round.
class RecentKernels {
public:
    void note(const std::string& kernel);
    // The names noted since the last take, oldest first.
    std::vector<std::string> names() const;
    // The same names; the ring is then empty.
    std::vector<std::string> take();

private:
    std::array<std::string, 16> names_;
    size_t next_ = 0, count_ = 0;
};

// A CUDA stream, the kernels launched on it since its last synchronization (so that an
// asynchronous failure can be reported with the kernels that may have caused it), and its
// status area: failures found on the device, read at the next synchronization.
struct StreamState {
    int ordinal = 0;
    CUstream stream = nullptr;
    CUdeviceptr status = 0;  // a wf::StatusArea in device memory
    std::mutex mutex;
    RecentKernels unsynchronized;
    StatusClaims words{wf::kStatusWords};
    StatusClaims faults{wf::kStatusFaults};
    // How many conditional bodies (capture_if, capture_while) the stream's capture is inside:
    // launches that a body's capture may refuse (cooperative ones) are kept out of them.
    std::atomic<int> conditional_bodies{0};
    ~StreamState();
};

struct DeviceContext {
    int ordinal = 0;
    CUdevice device = 0;
    CUcontext context = nullptr;
    std::string name;
    int cc_major = 0;
    int cc_minor = 0;
    int sm_count = 0;
    bool cooperative = false;  // takes cooperative launches (all blocks of a grid resident at once)
    size_t total_memory = 0;
    std::shared_ptr<StreamState> default_stream;
};

// The number of GPUs; 0 when CUDA is unavailable.
int device_count();
// The context of GPU `ordinal`, created on first use and made current on the calling thread.
DeviceContext& context(int ordinal);

// For destructors: makes GPU `ordinal`'s context current if it exists and the driver still
// answers; never throws.
bool bind_for_release(int ordinal) noexcept;

// The stream that launches and copies on GPU `ordinal` use on this thread.
std::shared_ptr<StreamState> current_stream(int ordinal);
// Makes `stream` current on this thread (nullptr: the device's default stream); returns the
// previous one.
std::shared_ptr<StreamState> exchange_current_stream(int ordinal, std::shared_ptr<StreamState> stream);
std::shared_ptr<StreamState> create_stream(int ordinal);

// How launches report errors found on the GPU without waiting for it: a kernel leaves the
// failure in an entry of the stream's status area, and the next successful synchronization of the
// stream that began after the kernel was queued reads the entry, zeroes it and throws the first
// failure's weft::Error. status_word() and status_fault() claim an entry for `key` (or share the entry
// already claimed for it): a status word (a count, largest wins, or bits) or a fault record. The
// ticket they return gives its device address and must live until the kernels that write it
// are queued, so that no synchronization in between reads the entry too early.
class StatusTicket {
public:
    StatusTicket() = default;
    StatusTicket(std::shared_ptr<StreamState> stream, StatusClaims StreamState::*claims, int entry,
                 CUdeviceptr address);
    StatusTicket(StatusTicket&& other) noexcept { *this = std::move(other); }
    StatusTicket& operator=(StatusTicket&& other) noexcept;
    StatusTicket(const StatusTicket&) = delete;
    StatusTicket& operator=(const StatusTicket&) = delete;
    ~StatusTicket() { finish(); }

    wf::u64* word() const { return reinterpret_cast<wf::u64*>(address_); }
    wf::Error* fault() const { return reinterpret_cast<wf::Error*>(address_); }

private:
    void finish() noexcept;
    std::shared_ptr<StreamState> stream_;
    StatusClaims StreamState::*claims_ = nullptr;
    int entry_ = -1;
    CUdeviceptr address_ = 0;
};

StatusTicket status_word(const std::shared_ptr<StreamState>& s, const std::string& key,
                         std::function<void(uint64_t)> raise);
StatusTicket status_fault(const std::shared_ptr<StreamState>& s, const std::string& key,
                          std::function<void(const wf::Error&)> raise);

// Whether work queued on `s` now is being captured into a CUDA graph.
bool capturing(const StreamState& s);

// Records that `kernel` was launched on `s`.
void note_launch(StreamState& s, const std::string& kernel);
// Waits for `s`; a failure becomes a weft::Error naming the kernels launched since the last
// synchronization.
void synchronize(StreamState& s);

}  // namespace weft::runtime::cuda
