// weft::Stream, ScopedStream and Event: made by the device's backend, used through the CUDA driver
// (a CPU stream has no handle, and the CPU makes no events).
#include "weft/stream.hpp"

#include "runtime/backend.hpp"
#include "runtime/cuda/stream_handles.hpp"
#include "weft/error.hpp"

namespace weft {

namespace cu = runtime::cuda;

Stream::Stream(Device device) : device_(device), handle_(runtime::backend(device).create_stream()) {}

Stream::Stream(Device device, std::shared_ptr<detail::StreamHandle> handle)
    : device_(device), handle_(std::move(handle)) {}

Stream Stream::current(Device device) {
    return Stream(device, runtime::backend(device).current_stream());
}

void Stream::synchronize() const {
    if (handle_) cu::synchronize(*handle_->state);
}

void Stream::wait(const Event& event) const {
    if (!handle_) return;
    if (!event.handle() || !event.handle()->recorded)
        throw Error("Stream::wait: the event has not been recorded; call Event::record first");
    cu::context(device_.ordinal());
    cu::check(cu::require_driver().cuStreamWaitEvent(handle_->state->stream, event.handle()->event, 0),
              "cuStreamWaitEvent");
}

ScopedStream::ScopedStream(const Stream& stream) : device_(stream.device()) {
    if (stream.handle()) {
        auto previous = cu::exchange_current_stream(device_.ordinal(), stream.handle()->state);
        previous_ = std::make_shared<detail::StreamHandle>(detail::StreamHandle{std::move(previous)});
    }
}

ScopedStream::~ScopedStream() {
    if (previous_) cu::exchange_current_stream(device_.ordinal(), previous_->state);
}

Event::Event(Device device) : device_(device), handle_(runtime::backend(device).create_event()) {}

void Event::record() {
    record(Stream::current(device_));
}

void Event::record(const Stream& stream) {
    if (stream.device() != device_)
        throw Error("Event::record: the event belongs to " + device_.name() + " but the stream to " +
                    stream.device().name());
    cu::context(device_.ordinal());
    cu::check(cu::require_driver().cuEventRecord(handle_->event, stream.handle()->state->stream),
              "cuEventRecord");
    handle_->recorded = true;
}

void Event::synchronize() const {
    cu::context(device_.ordinal());
    cu::check(cu::require_driver().cuEventSynchronize(handle_->event), "cuEventSynchronize");
}

float Event::elapsed_ms(const Event& start, const Event& end) {
    float ms = 0;
    cu::context(start.device_.ordinal());
    cu::check(cu::require_driver().cuEventElapsedTime(&ms, start.handle_->event, end.handle_->event),
              "cuEventElapsedTime");
    return ms;
}

}  // namespace weft
