// weft::Graph, ScopedCapture, capture_while and capture_if: a CUDA graph on a GPU, recorded
// operations on the CPU (runtime/graph_capture.hpp keeps the captures in progress).
#include "weft/graph.hpp"

#include <cstdint>
#include <exception>
#include <string>

#include "runtime/cuda/cuda_graph.hpp"
#include "runtime/cuda/stream_handles.hpp"
#include "runtime/graph_capture.hpp"
#include "weft/error.hpp"
#include "weft/tape.hpp"

namespace weft::detail {

struct GraphState {
    Device device = Device::cpu();
    std::vector<std::shared_ptr<const void>> keep;
    std::vector<runtime::GraphOp> ops;  // CPU
    // Destroyed before what it uses (members are destroyed in reverse order).
    std::unique_ptr<runtime::cuda::CudaGraph> cuda;
};

struct CaptureState {
    runtime::Capture capture;
    std::shared_ptr<runtime::cuda::StreamState> stream;  // GPU
    std::unique_ptr<runtime::cuda::StreamCapture> cuda;  // GPU
    Loc loc;
};

}  // namespace weft::detail

namespace weft {

namespace cu = runtime::cuda;

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

// Runs recorded CPU operations in order.
void run_ops(const std::vector<runtime::GraphOp>& ops) {
    for (const runtime::GraphOp& op : ops) op();
}

int32_t read_condition(const AnyArray& condition) {
    int32_t value = 0;
    condition.copy_to_host(&value, sizeof value);
    return value;
}

void conditional(bool loop, const AnyArray& condition, const std::function<void()>& body,
                 const std::source_location& s) {
    const char* what = loop ? "capture_while" : "capture_if";
    if (!condition.valid() || condition.dtype() != DType::Int32 || condition.components() != 1 ||
        condition.size() != 1)
        fail(s, std::string(what) + ": the condition must be an int32 array (or view) of one element, got " +
                    (condition.valid() ? std::to_string(condition.size()) + " element(s) of " +
                                             dtype_name(condition.dtype())
                                       : std::string("an empty array")));
    const Device device = condition.device();
    runtime::Capture* capture = runtime::active_capture(device);
    if (!capture) {
        if (runtime::capturing(device))
            fail(s,
                 std::string(what) + ": the stream of " + device.name() +
                     " is being captured, but not by weft::ScopedCapture; capture with weft::ScopedCapture "
                     "or weft::capture");
        if (loop)
            while (read_condition(condition) != 0) body();
        else if (read_condition(condition) != 0)
            body();
        return;
    }
    capture->keep.push_back(std::make_shared<AnyArray>(condition));
    if (!device.is_cpu()) {
        const auto current = cu::current_stream(device.ordinal());
        if (current.get() != capture->stream)
            fail(s, std::string(what) + ": the current stream of " + device.name() +
                        " is not the one being captured; call it where the capture began");
        try {
            capture->conditional(loop, condition.data(), body);
        } catch (...) {
            capture->failed = handled_exception_text();
            throw;
        }
        return;
    }
    capture->bodies.emplace_back();
    try {
        body();
    } catch (...) {  // any exception: the body is half recorded, whatever its type
        capture->bodies.pop_back();
        capture->failed = handled_exception_text();
        throw;
    }
    std::vector<runtime::GraphOp> ops = std::move(capture->bodies.back());
    capture->bodies.pop_back();
    const auto* element = static_cast<const int32_t*>(condition.data());
    capture->bodies.back().push_back([loop, element, ops = std::move(ops)] {
        if (loop)
            while (*element != 0) run_ops(ops);
        else if (*element != 0)
            run_ops(ops);
    });
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
    if (state_->device.is_cpu()) return run_ops(state_->ops);
    state_->cuda->launch(*stream.handle()->state);
}

ScopedCapture::ScopedCapture(Device device, std::source_location s)
    : state_(std::make_unique<detail::CaptureState>()) {
    state_->loc = detail::Loc::from(s);
    state_->capture.device = device;
    if (runtime::active_capture(device))
        fail(s, "ScopedCapture: a capture of " + device.name() +
                    " is already in progress on this thread; end it first (captures do not nest)");
    if (!device.is_cpu()) {
        state_->stream = cu::current_stream(device.ordinal());
        state_->cuda = std::make_unique<cu::StreamCapture>(state_->stream);
        state_->capture.stream = state_->stream.get();
        // Its kernels write the stream's status area, which the graph keeps.
        state_->capture.keep.push_back(state_->stream);
        cu::StreamCapture* cuda = state_->cuda.get();
        state_->capture.conditional = [cuda](bool loop, const void* element,
                                             const std::function<void()>& body) {
            cuda->conditional(loop, element, body);
        };
    }
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
    if (capture->cuda) graph->cuda = capture->cuda->end();
    graph->keep = std::move(capture->capture.keep);
    graph->ops = std::move(capture->capture.bodies.front());
    return Graph(std::move(graph));
}

void capture_while(const AnyArray& condition, const std::function<void()>& body, std::source_location s) {
    conditional(true, condition, body, s);
}

void capture_if(const AnyArray& condition, const std::function<void()>& body, std::source_location s) {
    conditional(false, condition, body, s);
}

}  // namespace weft
