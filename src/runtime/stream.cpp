// weft::Stream, ScopedStream and Event over the CUDA driver (no-ops or errors on the CPU).
#include "weft/stream.hpp"

#include "runtime/cuda/context.hpp"
#include "weft/error.hpp"

namespace weft {

namespace cu = runtime::cuda;

namespace detail {

struct StreamHandle {
    std::shared_ptr<cu::StreamState> state;
};

struct EventHandle {
    int ordinal = 0;
    cu::CUevent event = nullptr;
    bool recorded = false;
    ~EventHandle() {
        if (event && cu::bind_for_release(ordinal)) cu::driver()->cuEventDestroy(event);
    }
};

}  // namespace detail

Stream::Stream(Device device) : device_(device) {
    if (device.is_cuda())
        handle_ =
            std::make_shared<detail::StreamHandle>(detail::StreamHandle{cu::create_stream(device.ordinal())});
}

Stream::Stream(Device device, std::shared_ptr<detail::StreamHandle> handle)
    : device_(device), handle_(std::move(handle)) {}

Stream Stream::current(Device device) {
    if (device.is_cpu()) return Stream(device, nullptr);
    return Stream(device, std::make_shared<detail::StreamHandle>(
                              detail::StreamHandle{cu::current_stream(device.ordinal())}));
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

Event::Event(Device device) : device_(device) {
    if (device.is_cpu())
        throw Error("events order and time GPU work; on the CPU every launch has finished when it returns");
    cu::context(device.ordinal());
    handle_ = std::make_shared<detail::EventHandle>();
    handle_->ordinal = device.ordinal();
    cu::check(cu::require_driver().cuEventCreate(&handle_->event, cu::CU_EVENT_DEFAULT), "cuEventCreate");
}

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
