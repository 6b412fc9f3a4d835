// CUDA graphs: stream capture into a graph, its replay, conditional nodes whose condition a
// kernel reads from device memory, and allocations made outside stream order while capturing.
#pragma once

#include <functional>
#include <memory>

#include "runtime/cuda/context.hpp"
#include "runtime/graph_capture.hpp"

namespace weft::runtime::cuda {

// While alive, this thread may make calls that stream capture otherwise forbids (cuMemAlloc,
// loading a module): they are not stream-ordered, so no captured work depends on their replay.
class UnsafeCallsAllowed {
public:
    UnsafeCallsAllowed();
    ~UnsafeCallsAllowed();
    UnsafeCallsAllowed(const UnsafeCallsAllowed&) = delete;
    UnsafeCallsAllowed& operator=(const UnsafeCallsAllowed&) = delete;

private:
    int previous_ = 0;
};

// An executable graph and the graph it was instantiated from.
class CudaGraph {
public:
    CudaGraph(int ordinal, CUgraph graph, CUgraphExec exec) : ordinal_(ordinal), graph_(graph), exec_(exec) {}
    ~CudaGraph();
    CudaGraph(const CudaGraph&) = delete;
    CudaGraph& operator=(const CudaGraph&) = delete;
    // Queues a replay on `stream`.
    void launch(StreamState& stream) const;

private:
    int ordinal_;
    CUgraph graph_;
    CUgraphExec exec_;
};

// A capture of one stream, begun by the constructor; end() returns the instantiated graph,
// and a capture destroyed before end() is abandoned (the stream is usable again).
class StreamCapture {
public:
    explicit StreamCapture(std::shared_ptr<StreamState> stream);
    ~StreamCapture();
    StreamCapture(const StreamCapture&) = delete;
    StreamCapture& operator=(const StreamCapture&) = delete;
    std::unique_ptr<CudaGraph> end();

    // Records, at this point of the capture, a conditional node that runs what `body` queues
    // once if the int32 at `element` (device memory) is nonzero, or, with `loop`, as long as
    // it is nonzero, the element being read again after each run, at most `cap.runs` runs.
    void conditional(bool loop, const void* element, const IterationCap& cap,
                     const std::function<void()>& body);

private:
    std::shared_ptr<StreamState> stream_;
    CUgraph graph_ = nullptr;  // known once the capture was paused for a conditional body
    bool open_ = true;
};

// Begins capturing `stream` (the current one) into `capture` (weft::ScopedCapture): the graph
// keeps the stream, whose status area its kernels write; conditional bodies become conditional
// nodes. The recorder's graph replays on a stream of the same GPU.
std::unique_ptr<CaptureRecorder> capture_stream(std::shared_ptr<StreamState> stream, Capture& capture);

}  // namespace weft::runtime::cuda
