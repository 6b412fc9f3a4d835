// Stream capture, graph replay and conditional nodes through the CUDA driver.
#include "runtime/cuda/cuda_graph.hpp"

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <type_traits>

#include "base/hash.hpp"
#include "runtime/cache.hpp"
#include "runtime/cuda/device_link.hpp"
#include "runtime/cuda/device_sources.hpp"
#include "runtime/cuda/nvrtc.hpp"
#include "runtime/cuda/stream_handles.hpp"
#include "runtime/files.hpp"
#include "runtime/memory.hpp"
#include "weft/error.hpp"
#include "weft/stream.hpp"

namespace weft::runtime::cuda {

namespace {

using CUgraphNode = struct CUgraphNode_st*;
using CUgraphConditionalHandle = unsigned long long;
struct CUgraphEdgeData;

// CUgraphNodeParams of cuda.h (CUDA 12.4 and later) as far as a conditional node needs it.
struct ConditionalParams {
    CUgraphConditionalHandle handle;
    int type;  // CU_GRAPH_COND_TYPE_IF (0) or _WHILE (1)
    unsigned size;
    CUgraph* body_out;
    CUcontext ctx;
};
struct NodeParams {
    int type;  // CU_GRAPH_NODE_TYPE_CONDITIONAL (13)
    int reserved0[3];
    union {
        long long reserved1[29];
        ConditionalParams conditional;
    };
    long long reserved2;
};
static_assert(sizeof(NodeParams) == 256, "the layout of CUgraphNodeParams");
static_assert(offsetof(NodeParams, conditional) == 16, "the layout of CUgraphNodeParams");

constexpr int kNodeEmpty = 5;
constexpr int kNodeConditional = 13;
constexpr int kCondIf = 0;
constexpr int kCondWhile = 1;
constexpr unsigned kSetDependencies = 1;
constexpr int kCaptureActive = 1;

// The entry points of conditional nodes (CUDA 12.4 ABI), looked up at first use.
struct GraphDriver {
    CUresult (*cuStreamGetCaptureInfo)(CUstream, int*, unsigned long long*, CUgraph*, const CUgraphNode**,
                                       const CUgraphEdgeData**, size_t*) = nullptr;
    CUresult (*cuStreamUpdateCaptureDependencies)(CUstream, CUgraphNode*, const CUgraphEdgeData*, size_t,
                                                  unsigned) = nullptr;
    CUresult (*cuStreamBeginCaptureToGraph)(CUstream, CUgraph, const CUgraphNode*, const CUgraphEdgeData*,
                                            size_t, int) = nullptr;
    CUresult (*cuGraphAddNode)(CUgraphNode*, CUgraph, const CUgraphNode*, const CUgraphEdgeData*, size_t,
                               NodeParams*) = nullptr;
    CUresult (*cuGraphConditionalHandleCreate)(CUgraphConditionalHandle*, CUgraph, CUcontext, unsigned,
                                               unsigned) = nullptr;
};

const GraphDriver& graph_driver() {
    static const GraphDriver g = [] {
        GraphDriver g;
        const auto get = [](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(driver_symbol(name, 12040));
            return fn != nullptr;
        };
        if (!(get(g.cuStreamGetCaptureInfo, "cuStreamGetCaptureInfo") &&
              get(g.cuStreamUpdateCaptureDependencies, "cuStreamUpdateCaptureDependencies") &&
              get(g.cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph") &&
              get(g.cuGraphAddNode, "cuGraphAddNode") &&
              get(g.cuGraphConditionalHandleCreate, "cuGraphConditionalHandleCreate")))
            g = {};
        return g;
    }();
    if (!g.cuGraphAddNode)
        throw Error(
            "capture_while and capture_if need conditional graph nodes, which this CUDA driver lacks; "
            "install a driver for CUDA 12.4 or newer");
    return g;
}

CUfunction condition_kernel(int ordinal) {
    static std::mutex mutex;
    static std::map<int, CUmodule> loaded;
    const DeviceContext& c = context(ordinal);
    std::lock_guard lock(mutex);
    CUmodule& m = loaded[ordinal];
    const Driver& d = require_driver();
    if (!m) {
        const int arch = c.cc_major * 10 + c.cc_minor;
        const std::string& source = library_source(LibraryModule::GraphCondition);
        const std::string key = base::Hasher()
                                    .add(source)
                                    .add(nvrtc_version())
                                    .add(static_cast<uint64_t>(arch))
                                    .add("linked with libcudadevrt")
                                    .hex();
        const UnsafeCallsAllowed unsafe;  // loading a module is not stream-ordered
        cached_build(
            "cuda-lib-graph-sm" + std::to_string(arch) + "-" + key + ".cubin",
            [&](const std::filesystem::path& out) {
                append_to_file(
                    out, link_with_device_runtime(
                             compile_cubin(source, library_module_name(LibraryModule::GraphCondition), arch,
                                           library_options(LibraryModule::GraphCondition)),
                             arch));
            },
            [&](const std::filesystem::path&, const std::string& image, EntryLoad) {
                if (m) d.cuModuleUnload(m);
                m = nullptr;
                check(d.cuModuleLoadData(&m, image.data()), "loading Weft's graph kernels");
            });
    }
    static std::map<int, CUfunction> functions;
    CUfunction& f = functions[ordinal];
    if (!f) {
        const UnsafeCallsAllowed unsafe;  // with lazy loading, finding the function loads it
        check(d.cuModuleGetFunction(&f, m, "weft_set_condition"), "finding the graph condition kernel");
    }
    return f;
}

// What weft_set_condition counts for a capped capture_while: the body's runs (device memory),
// the cap (0: none, and no counting) and the status word it sets when the cap is reached.
struct LoopCount {
    long long* runs = nullptr;
    long long cap = 0;
    unsigned long long* exceeded = nullptr;
};

// Queues weft_set_condition: `first` where the replay reaches the node, else at the body's end.
void set_condition(StreamState& s, CUgraphConditionalHandle handle, const void* element,
                   const LoopCount& count, bool first) {
    const CUfunction f = condition_kernel(s.ordinal);
    const void* at = element;
    long long* runs = count.runs;
    long long cap = count.cap;
    unsigned long long* exceeded = count.exceeded;
    int is_first = first ? 1 : 0;
    void* params[] = {&handle, &at, &runs, &cap, &exceeded, &is_first};
    check(require_driver().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s.stream, params, nullptr),
          "launching the graph condition kernel");
}

}  // namespace

UnsafeCallsAllowed::UnsafeCallsAllowed() : previous_(CU_STREAM_CAPTURE_MODE_RELAXED) {
    check(require_driver().cuThreadExchangeStreamCaptureMode(&previous_),
          "cuThreadExchangeStreamCaptureMode");
}

UnsafeCallsAllowed::~UnsafeCallsAllowed() {
    if (const Driver* d = driver()) d->cuThreadExchangeStreamCaptureMode(&previous_);
}

CudaGraph::~CudaGraph() {
    if (!bind_for_release(ordinal_)) return;
    if (exec_) driver()->cuGraphExecDestroy(exec_);
    if (graph_) driver()->cuGraphDestroy(graph_);
}

void CudaGraph::launch(StreamState& stream) const {
    context(ordinal_);
    check(require_driver().cuGraphLaunch(exec_, stream.stream), "cuGraphLaunch");
    note_launch(stream, "a replayed graph");
}

StreamCapture::StreamCapture(std::shared_ptr<StreamState> stream) : stream_(std::move(stream)) {
    context(stream_->ordinal);
    if (capturing(*stream_))
        throw Error(
            "a capture is already in progress on this stream of cuda:" + std::to_string(stream_->ordinal) +
            "; end it first, or capture on another stream (weft::Stream, weft::ScopedStream)");
    check(require_driver().cuStreamBeginCapture(stream_->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
}

StreamCapture::~StreamCapture() {
    if (!open_ || !bind_for_release(stream_->ordinal)) return;
    const Driver& d = *driver();
    int status = 0;
    CUgraph abandoned = nullptr;
    if (d.cuStreamIsCapturing(stream_->stream, &status) == CUDA_SUCCESS && status != 0)
        d.cuStreamEndCapture(stream_->stream, &abandoned);
    if (abandoned && abandoned != graph_) d.cuGraphDestroy(abandoned);
    if (graph_) d.cuGraphDestroy(graph_);
}

std::unique_ptr<CudaGraph> StreamCapture::end() {
    context(stream_->ordinal);
    const Driver& d = require_driver();
    open_ = false;
    CUgraph graph = nullptr;
    const CUresult r = d.cuStreamEndCapture(stream_->stream, &graph);
    if (r != CUDA_SUCCESS) {
        if (graph) d.cuGraphDestroy(graph);
        if (graph_ && graph_ != graph) d.cuGraphDestroy(graph_);
        check(r, "ending the graph capture (cuStreamEndCapture)");
    }
    CUgraphExec exec = nullptr;
    const CUresult ri = d.cuGraphInstantiateWithFlags(&exec, graph, 0);
    if (ri != CUDA_SUCCESS) {
        d.cuGraphDestroy(graph);
        check(ri, "instantiating the captured graph");
    }
    return std::make_unique<CudaGraph>(stream_->ordinal, graph, exec);
}

// The node goes after what the capture has queued; the body is captured into the node's body
// graph by pausing the stream's capture (ending it, then capturing into the body graph, then
// resuming into the graph after the node), so that the body's work is queued on the same
// stream and reports its failures in that stream's status area.
void StreamCapture::conditional(bool loop, const void* element, const IterationCap& cap,
                                const std::function<void()>& body) {
    // A capped loop counts its runs in memory the graph keeps (allocated while capturing), and
    // reports reaching the cap in a status word claimed for the stream's lifetime.
    LoopCount counted;
    StatusTicket exceeded;
    if (loop && cap.runs > 0) {
        const auto runs = detail::allocate(Device::cuda(stream_->ordinal), sizeof(long long));
        counted.runs = static_cast<long long*>(runs->ptr);
        counted.cap = cap.runs;
        exceeded = status_word(stream_,
                               "capture_while cap\n" + std::to_string(reinterpret_cast<uintptr_t>(runs->ptr)),
                               [raise = cap.raise](uint64_t) { raise(); });
        counted.exceeded = exceeded.word();
    }
    const GraphDriver& g = graph_driver();
    const Driver& d = require_driver();
    const DeviceContext& c = context(stream_->ordinal);
    CUstream s = stream_->stream;
    const auto info = [&](const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* count) {
        int status = 0;
        unsigned long long id = 0;
        CUgraph graph = nullptr;
        check(g.cuStreamGetCaptureInfo(s, &status, &id, &graph, deps, edges, count),
              "cuStreamGetCaptureInfo");
        if (status != kCaptureActive)
            throw Error("the graph capture on cuda:" + std::to_string(stream_->ordinal) +
                        " was invalidated by an operation CUDA cannot capture; end it and capture again");
        return graph;
    };
    const CUgraphNode* deps = nullptr;
    const CUgraphEdgeData* edges = nullptr;
    size_t count = 0;
    const CUgraph graph = info(&deps, &edges, &count);
    CUgraphConditionalHandle handle = 0;
    check(g.cuGraphConditionalHandleCreate(&handle, graph, c.context, 0, 0),
          "cuGraphConditionalHandleCreate");
    set_condition(*stream_, handle, element, counted, true);
    info(&deps, &edges, &count);
    NodeParams params{};
    params.type = kNodeConditional;
    params.conditional = {handle, loop ? kCondWhile : kCondIf, 1, nullptr, c.context};
    CUgraphNode node = nullptr;
    check(g.cuGraphAddNode(&node, graph, deps, edges, count, &params), "adding a conditional graph node");
    check(g.cuStreamUpdateCaptureDependencies(s, &node, nullptr, 1, kSetDependencies),
          "cuStreamUpdateCaptureDependencies");
    const CUgraph body_graph = params.conditional.body_out[0];

    // Paused is the graph being captured into: the capture's own graph, or the body of an
    // enclosing conditional node. The first pause hands the capture's graph to this object.
    CUgraph paused = nullptr;
    check(d.cuStreamEndCapture(s, &paused), "pausing the graph capture");
    if (!graph_) graph_ = paused;
    const auto resume = [&] {
        check(
            g.cuStreamBeginCaptureToGraph(s, paused, &node, nullptr, 1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "resuming the graph capture");
    };
    if (!loop) {
        // An empty body hangs conditional nodes on drivers before CUDA 12.8; an empty node keeps
        // the body of an if from being empty (a loop's body always sets its condition).
        NodeParams empty{};
        empty.type = kNodeEmpty;
        CUgraphNode root = nullptr;
        check(g.cuGraphAddNode(&root, body_graph, nullptr, nullptr, 0, &empty), "adding an empty graph node");
    }
    check(g.cuStreamBeginCaptureToGraph(s, body_graph, nullptr, nullptr, 0,
                                        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "capturing a conditional body");
    try {
        struct InBody {
            std::atomic<int>& depth;
            explicit InBody(std::atomic<int>& d) : depth(d) { ++depth; }
            ~InBody() { --depth; }
        } in_body{stream_->conditional_bodies};
        body();
        if (loop) set_condition(*stream_, handle, element, counted, false);  // the condition for the next run
    } catch (...) {
        // The body's work is half captured: the capture ends without a graph (ScopedCapture::end
        // says why), but the stream goes back to capturing the graph, so it is abandoned cleanly.
        CUgraph ended = nullptr;
        d.cuStreamEndCapture(s, &ended);
        resume();
        throw;
    }
    CUgraph ended = nullptr;
    check(d.cuStreamEndCapture(s, &ended), "ending a conditional body's capture");
    resume();
}

namespace {

class StreamGraph final : public GraphReplay {
public:
    explicit StreamGraph(std::unique_ptr<CudaGraph> graph) : graph_(std::move(graph)) {}
    void launch(const Stream& stream) const override { graph_->launch(*stream.handle()->state); }

private:
    std::unique_ptr<CudaGraph> graph_;
};

class StreamRecorder final : public CaptureRecorder {
public:
    explicit StreamRecorder(std::shared_ptr<StreamState> stream) : capture_(std::move(stream)) {}
    std::unique_ptr<GraphReplay> end(Capture&) override {
        return std::make_unique<StreamGraph>(capture_.end());
    }
    StreamCapture& capture() { return capture_; }

private:
    StreamCapture capture_;
};

}  // namespace

std::unique_ptr<CaptureRecorder> capture_stream(std::shared_ptr<StreamState> stream, Capture& capture) {
    const StreamState* state = stream.get();
    auto recorder = std::make_unique<StreamRecorder>(stream);
    capture.stream = state;
    capture.keep.push_back(std::move(stream));
    StreamCapture* cuda = &recorder->capture();
    capture.conditional = [cuda](bool loop, const void* element, const IterationCap& cap,
                                 const std::function<void()>& body) {
        cuda->conditional(loop, element, cap, body);
    };
    return recorder;
}

}  // namespace weft::runtime::cuda
