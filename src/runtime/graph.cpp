// weft::Graph, ScopedCapture, capture_while and capture_if: the device's backend begins, records
// and ends a capture and replays its graph (a CUDA graph on a GPU, recorded operations on the
// CPU); runtime/graph_capture.hpp keeps the captures in progress.
#include "weft/graph.hpp"

#include <cstdint>
#include <exception>
#include <string>

#include "runtime/backend.hpp"
#include "runtime/cuda/stream_handles.hpp"
#include "runtime/graph_capture.hpp"
#include "weft/error.hpp"
#include "weft/tape.hpp"

namespace weft::detail {

struct GraphState {
    Device device = Device::cpu();
    std::vector<std::shared_ptr<const void>> keep;
    // Destroyed before what it uses (members are destroyed in reverse order).
    std::unique_ptr<runtime::GraphReplay> replay;
};

struct CaptureState {
    runtime::Capture capture;
    std::unique_ptr<runtime::CaptureRecorder> recorder;
    Loc loc;
};

}  // namespace weft::detail

namespace weft {

namespace {

// The message of the exception being handled (in a catch block), for Capture::failed.
std::string handled_exception_text() {
    try {
        throw;
    } catch (const Error& e) {
        return e.message();
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "an exception of a type that is not a std::exception";
    }
}

[[noreturn]] void fail(const std::source_location& s, const std::string& message) {
    throw Error(message, "", s.file_name(), s.line());
}

int32_t read_condition(const AnyArray& condition) {
    int32_t value = 0;
    condition.copy_to_host(&value, sizeof value);
    return value;
}

// With `cap` (capture_while's max_iterations; 0: none), a loop stops after that many runs of
// `body` with the condition still set, and that is an error.
void conditional(bool loop, const AnyArray& condition, const std::function<void()>& body,
                 const std::source_location& s, int64_t cap = 0) {
    const char* what = loop ? "capture_while" : "capture_if";
    if (!condition.valid() || condition.dtype() != DType::Int32 || condition.components() != 1 ||
        condition.size() != 1)
        fail(s, std::string(what) + ": the condition must be an int32 array (or view) of one element, got " +
                    (condition.valid() ? std::to_string(condition.size()) + " element(s) of " +
                                             dtype_name(condition.dtype())
                                       : std::string("an empty array")));
    const runtime::IterationCap limit{
        cap, [cap, file = std::string(s.file_name()), line = s.line()] {
            throw Error(
                "capture_while: the condition still held after " + std::to_string(cap) +
                    " runs of the body (its max_iterations), so the loop stopped there; make the body "
                    "clear the condition, or raise max_iterations if the loop needs more runs",
                "", file, line);
        }};
    const Device device = condition.device();
    runtime::Capture* capture = runtime::active_capture(device);
    if (!capture) {
        if (runtime::capturing(device))
            fail(s,
                 std::string(what) + ": the stream of " + device.name() +
                     " is being captured, but not by weft::ScopedCapture; capture with weft::ScopedCapture "
                     "or weft::capture");
        if (!loop) {
            if (read_condition(condition) != 0) body();
            return;
        }
        for (int64_t runs = 0; read_condition(condition) != 0; ++runs) {
            if (cap > 0 && runs == cap) limit.raise();
            body();
        }
        return;
    }
    capture->keep.push_back(std::make_shared<AnyArray>(condition));
    // The stream being captured (none on the CPU, whose current stream is null too).
    const auto current = runtime::backend(device).current_stream();
    if ((current ? current->state.get() : nullptr) != capture->stream)
        fail(s, std::string(what) + ": the current stream of " + device.name() +
                    " is not the one being captured; call it where the capture began");
    try {
        capture->conditional(loop, condition.data(), limit, body);
    } catch (...) {  // any exception: the body is half recorded, whatever its type
        capture->failed = handled_exception_text();
        throw;
    }
}

}  // namespace

Device Graph::device() const {
    if (!state_) throw Error("Graph::device: the graph is empty (default-constructed)");
    return state_->device;
}

void Graph::launch() const {
    launch(Stream::current(device()));
}

void Graph::launch(const Stream& stream) const {
    if (!state_) throw Error("Graph::launch: the graph is empty (default-constructed); capture one first");
    if (stream.device() != state_->device)
        throw Error("Graph::launch: the graph was captured on " + state_->device.name() +
                    " but the stream is on " + stream.device().name());
    if (runtime::capturing(state_->device))
        throw Error("Graph::launch: a graph cannot be launched while work on " + state_->device.name() +
                    " is being captured; launch it before or after the capture");
    if (detail::tape_recording())
        throw Error(
            "Graph::launch while a weft::Tape records on this thread: the tape cannot see a graph's "
            "launches, so its backward would miss them; stop() the tape first, or make the launches "
            "directly (weft::launch, RecordedLaunch::launch) while it records");
    state_->replay->launch(stream);
}

ScopedCapture::ScopedCapture(Device device, std::source_location s)
    : state_(std::make_unique<detail::CaptureState>()) {
    state_->loc = detail::Loc::from(s);
    state_->capture.device = device;
    if (runtime::active_capture(device))
        fail(s, "ScopedCapture: a capture of " + device.name() +
                    " is already in progress on this thread; end it first (captures do not nest)");
    state_->recorder = runtime::backend(device).begin_capture(state_->capture);
    runtime::push_capture(state_->capture);
}

ScopedCapture::~ScopedCapture() {
    if (state_) runtime::pop_capture(state_->capture);
}

Graph ScopedCapture::end() {
    if (!state_) throw Error("ScopedCapture::end: the capture has already ended");
    std::unique_ptr<detail::CaptureState> capture = std::move(state_);
    runtime::pop_capture(capture->capture);
    if (!capture->capture.failed.empty())  // (abandoned when `capture` goes)
        throw Error(
            "ScopedCapture::end: the capture cannot make a graph, since a capture_while or capture_if "
            "body failed while it was recorded (" +
                capture->capture.failed + "); capture again without what failed",
            "", capture->loc.file, capture->loc.line);
    auto graph = std::make_shared<detail::GraphState>();
    graph->device = capture->capture.device;
    graph->replay = capture->recorder->end(capture->capture);
    graph->keep = std::move(capture->capture.keep);
    return Graph(std::move(graph));
}

void capture_while(const AnyArray& condition, const std::function<void()>& body, std::source_location s) {
    conditional(true, condition, body, s);
}

void capture_while(const AnyArray& condition, int64_t max_iterations, const std::function<void()>& body,
                   std::source_location s) {
    if (max_iterations < 1)
        fail(s, "capture_while: max_iterations is " + std::to_string(max_iterations) +
                    "; give at least 1 (or call capture_while without it for no cap)");
    conditional(true, condition, body, s, max_iterations);
}

void capture_if(const AnyArray& condition, const std::function<void()>& body, std::source_location s) {
    conditional(false, condition, body, s);
}

}  // namespace weft
