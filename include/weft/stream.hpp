// Streams and events: ordering and timing GPU work (on the CPU, work is synchronous).
#pragma once

#include <memory>

#include "weft/device.hpp"

namespace weft {

namespace detail {
struct StreamHandle;
struct EventHandle;
}  // namespace detail

/// An in-order queue of GPU work. Launches and copies go to the thread's current stream for
/// their device: the device's default stream unless a ScopedStream says otherwise.
class Stream {
public:
    /// A new stream on `device`. On the CPU a stream orders nothing (every launch has finished when it
    /// returns) and its functions do nothing.
    explicit Stream(Device device);
    /// The stream's device.
    Device device() const { return device_; }
    /// Waits for the stream's work; reports failures of its launches as weft::Error.
    void synchronize() const;
    /// Makes later work on this stream wait for `event` (recorded on any stream of the device).
    void wait(const class Event& event) const;
    /// The stream this thread uses for `device` now.
    static Stream current(Device device);
    /// The stream's handle (for Weft's own code; null on the CPU; not a stable interface).
    const std::shared_ptr<detail::StreamHandle>& handle() const { return handle_; }

private:
    Stream(Device device, std::shared_ptr<detail::StreamHandle> handle);
    Device device_;
    std::shared_ptr<detail::StreamHandle> handle_;
};

/// Makes `stream` the current stream of its device on this thread for the guard's lifetime.
class ScopedStream {
public:
    /// Makes `stream` current (on the CPU it changes nothing).
    explicit ScopedStream(const Stream& stream);
    ~ScopedStream();
    ScopedStream(const ScopedStream&) = delete;
    ScopedStream& operator=(const ScopedStream&) = delete;

private:
    Device device_;
    std::shared_ptr<detail::StreamHandle> previous_;
};

/// A point in a stream's work, for ordering and timing.
class Event {
public:
    /// An event of GPU `device`; on the CPU, a weft::Error (CPU work has finished when it returns).
    explicit Event(Device device);
    /// Records the event on `stream` (default: the current stream of the event's device).
    ///@{
    void record();
    void record(const Stream& stream);
    ///@}
    /// Waits until the work before the event's last record has finished.
    void synchronize() const;
    /// Milliseconds of GPU time between two recorded events (both must have completed).
    static float elapsed_ms(const Event& start, const Event& end);
    /// The event's handle (for Weft's own code; not a stable interface).
    const std::shared_ptr<detail::EventHandle>& handle() const { return handle_; }

private:
    Device device_;
    std::shared_ptr<detail::EventHandle> handle_;
};

}  // namespace weft
