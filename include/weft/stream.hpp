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
    explicit Stream(Device device);
    Device device() const { return device_; }
    /// Waits for the stream's work; reports failures of its launches as weft::Error.
    void synchronize() const;
    /// Makes later work on this stream wait for `event` (recorded on any stream of the device).
    void wait(const class Event& event) const;
    /// The stream this thread uses for `device` now.
    static Stream current(Device device);
    const std::shared_ptr<detail::StreamHandle>& handle() const { return handle_; }

private:
    Stream(Device device, std::shared_ptr<detail::StreamHandle> handle);
    Device device_;
    std::shared_ptr<detail::StreamHandle> handle_;
};

/// Makes `stream` the current stream of its device on this thread for the guard's lifetime.
class ScopedStream {
public:
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
    explicit Event(Device device);
    /// Records the event on `stream` (default: the current stream of the event's device).
    void record();
    void record(const Stream& stream);
    void synchronize() const;
    /// Milliseconds of GPU time between two recorded events (both must have completed).
    static float elapsed_ms(const Event& start, const Event& end);
    const std::shared_ptr<detail::EventHandle>& handle() const { return handle_; }

private:
    Device device_;
    std::shared_ptr<detail::EventHandle> handle_;
};

}  // namespace weft
