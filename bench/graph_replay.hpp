// Shared by the GPU benchmarks: CUDA-graph replay timing with events, and medians.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>
#include <weft/weft.hpp>

#include "runtime/cuda/context.hpp"

namespace weft::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Captures the work `enqueue` queues on GPU `gpu`'s current stream into a graph and returns the
// median milliseconds of 50 replays (after 5 warm-ups; 3 after 1 for a replay slower than
// 0.1 s, 1 after 1 for one slower than 1 s), timed with CUDA events.
inline double graph_replay_ms(Device gpu, const std::function<void()>& enqueue) {
    namespace cu = weft::runtime::cuda;
    const cu::Driver& d = cu::require_driver();
    const auto stream = cu::current_stream(gpu.ordinal())->stream;
    cu::check(d.cuStreamBeginCapture(stream, cu::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
    enqueue();
    cu::CUgraph graph = nullptr;
    cu::check(d.cuStreamEndCapture(stream, &graph), "end capture");
    cu::CUgraphExec exec = nullptr;
    cu::check(d.cuGraphInstantiateWithFlags(&exec, graph, 0), "instantiate");
    Event start(gpu), end(gpu);
    std::vector<double> ms;
    int warmups = 5, timed = 50;
    for (int r = 0; r < warmups + timed; ++r) {
        start.record();
        cu::check(d.cuGraphLaunch(exec, stream), "graph launch");
        end.record();
        end.synchronize();
        const double t = Event::elapsed_ms(start, end);
        // A replay slower than 0.1 s (a pathological baseline: plain float16 atomics into one
        // element take 7 s) is timed 3 times after one warm-up, or once if slower than 1 s, so
        // that a whole benchmark run stays within minutes.
        if (r == 0 && t > 100.0) {
            warmups = 1;
            timed = t > 1000.0 ? 1 : 3;
        }
        if (r >= warmups) ms.push_back(t);
    }
    synchronize(gpu);
    d.cuGraphExecDestroy(exec);
    d.cuGraphDestroy(graph);
    return median(ms);
}

}  // namespace weft::bench
