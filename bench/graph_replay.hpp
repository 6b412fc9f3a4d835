// Shared by the GPU benchmarks: CUDA-graph replay timing with events, and medians.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>
#include <weft/weft.hpp>

namespace weft::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Captures the work `enqueue` queues on GPU `gpu`'s current stream into a graph (the public
// weft::capture) and returns the median milliseconds of 50 replays (after 5 warm-ups; 3 after 1
// for a replay slower than 0.1 s, 1 after 1 for one slower than 1 s), timed with CUDA events.
inline double graph_replay_ms(Device gpu, const std::function<void()>& enqueue) {
    const Graph graph = capture(gpu, enqueue);
    Event start(gpu), end(gpu);
    std::vector<double> ms;
    int warmups = 5, timed = 50;
    for (int r = 0; r < warmups + timed; ++r) {
        start.record();
        graph.launch();
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
    return median(ms);
}

}  // namespace weft::bench
