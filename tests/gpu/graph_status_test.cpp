// Failures found on the GPU by work replayed from a captured CUDA graph (a records overflow, a
// slot divergence, a bounds fault) are reported at the stream's next synchronization, as for
// direct launches. The graphs here are captured with CUDA's own stream capture, as a program
// that captures its stream itself (or through another library) would; the public weft::capture
// is tested in graph_api_gpu_test.cpp and cpu/graph_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

namespace cu = weft::runtime::cuda;
using weft::Array;
using weft::Int;
using weft::test::has;

const weft::Device gpu = weft::Device::cuda(0);

// The work `enqueue` queues on the GPU's current stream, captured into an executable graph.
class CapturedGraph {
public:
    template <class Enqueue>
    explicit CapturedGraph(Enqueue enqueue) {
        const cu::Driver& d = cu::require_driver();
        stream_ = cu::current_stream(gpu.ordinal())->stream;
        cu::check(d.cuStreamBeginCapture(stream_, cu::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture");
        try {
            enqueue();
        } catch (...) {
            cu::CUgraph abandoned = nullptr;
            d.cuStreamEndCapture(stream_, &abandoned);
            if (abandoned) d.cuGraphDestroy(abandoned);
            throw;
        }
        cu::check(d.cuStreamEndCapture(stream_, &graph_), "end capture");
        cu::check(d.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "instantiate");
    }
    ~CapturedGraph() {
        const cu::Driver& d = cu::require_driver();
        if (exec_) d.cuGraphExecDestroy(exec_);
        if (graph_) d.cuGraphDestroy(graph_);
    }
    CapturedGraph(const CapturedGraph&) = delete;
    CapturedGraph& operator=(const CapturedGraph&) = delete;

    void replay() const { cu::check(cu::require_driver().cuGraphLaunch(exec_, stream_), "graph launch"); }

private:
    cu::CUstream stream_ = nullptr;
    cu::CUgraph graph_ = nullptr;
    cu::CUgraphExec exec_ = nullptr;
};

// The error the next synchronization reports (blaming `kernel`), or "" when there is none.
std::string synchronize_error(const std::string& kernel = "graph_records") {
    try {
        weft::synchronize(gpu);
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), kernel);
        EXPECT_TRUE(has(e.file(), "graph_status_test.cpp")) << e.what();
        return e.message();
    }
    return "";
}

TEST(GraphStatus, ACapturedRecordsOverflowIsReportedAtTheNextSynchronization) {
    weft::Module m{"graph_records",
                   {.deterministic = weft::Deterministic::RunToRun,
                    .deterministic_strategy = weft::DeterministicStrategy::Records,
                    .deterministic_max_records = 1}};
    // Each thread adds its value to sums[t % 4] trips[t] times: more than one record per thread
    // overflows the buffer.
    auto kernel = m.kernel("graph_records", {"values", "trips", "sums"},
                           [](Array<float> values, Array<int> trips, Array<float> sums) {
                               auto t = weft::tid();
                               weft::for_(trips[t], [&](Int) { weft::atomic_add(sums, t % 4, values[t]); });
                           });
    const int n = 4096;
    auto values = weft::ones<float>(n, gpu);
    auto trips = weft::full<int>(n, 1, gpu);
    auto sums = weft::zeros<float>(4, gpu);
    weft::launch(kernel, n, values, trips, sums);  // compiled and loaded before the capture
    ASSERT_EQ(synchronize_error(), "");
    ASSERT_EQ(sums.to_vector(), std::vector<float>(4, 1024.0f));

    const CapturedGraph graph([&] { weft::launch(kernel, n, values, trips, sums); });
    graph.replay();
    EXPECT_EQ(synchronize_error(), "") << "a replay that fits reports nothing";
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 2048.0f));

    weft::copy(trips, weft::full<int>(n, 3, gpu));  // the graph reads trips when it runs
    graph.replay();
    const std::string overflow = synchronize_error();
    EXPECT_TRUE(has(overflow, "deterministic records for array 'sums' overflowed")) << overflow;
    EXPECT_TRUE(has(overflow, "emitted 12288 records")) << overflow;
    EXPECT_TRUE(has(overflow, "deterministic_max_records")) << overflow;
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 2048.0f)) << "the overflowing target keeps its value";
    EXPECT_EQ(synchronize_error(), "") << "reported once";

    weft::copy(trips, weft::full<int>(n, 1, gpu));
    graph.replay();
    EXPECT_EQ(synchronize_error(), "") << "the status word was cleared";
    EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 3072.0f));
}

// The second reservation depends on the first one's slot, so the execution pass reserves
// differently from the counting pass: every run diverges, found on the device.
TEST(GraphStatus, ACapturedSlotDivergenceIsReportedAfterEveryReplay) {
    weft::Module m{"graph_diverge", {.deterministic = weft::Deterministic::RunToRun}};
    auto kernel = m.kernel("graph_diverge", {"count", "out"}, [](Array<int> count, Array<int> out) {
        auto t = weft::tid();
        auto a = weft::atomic_add(count, 0, 1);
        out[a] = t;
        weft::if_(a % 2 == 0, [&] { out[weft::atomic_add(count, 0, 1)] = t; });
    });
    const int n = 1024;
    auto count = weft::full<int>(1, 7, gpu);
    auto out = weft::full<int>(3 * n, -1, gpu);
    const auto expect_divergence = [&](const std::string& when) {
        const std::string error = synchronize_error("graph_diverge");
        EXPECT_TRUE(has(error, "reserved slots differently")) << when << ": " << error;
        EXPECT_TRUE(has(error, "'count'")) << when << ": " << error;
        EXPECT_EQ(count.to_vector(), std::vector<int>{7}) << when << ": the counter keeps its value";
        EXPECT_EQ(synchronize_error("graph_diverge"), "") << when << ": reported once";
    };
    weft::launch(kernel, n, count, out);  // compiled and loaded before the capture
    expect_divergence("a direct launch");

    const CapturedGraph graph([&] { weft::launch(kernel, n, count, out); });
    graph.replay();
    expect_divergence("the first replay");
    graph.replay();
    expect_divergence("the second replay");
}

TEST(GraphStatus, ABoundsFaultInACapturedGraphIsReportedAtTheNextSynchronization) {
    weft::Module m{"graph_faults", {.bounds_check = true}};
    auto scatter = m.kernel("graph_scatter", {"where", "out"},
                            [](Array<int> where, Array<float> out) { out[where[weft::tid()]] = 1.0f; });
    const int n = 256;
    std::vector<int> in_bounds(n);
    for (int i = 0; i < n; ++i) in_bounds[i] = i;
    auto where = weft::from_vector(in_bounds, gpu);
    auto out = weft::zeros<float>(n, gpu);
    weft::launch(scatter, n, where, out);
    weft::synchronize(gpu);

    const CapturedGraph graph([&] { weft::launch(scatter, n, where, out); });
    graph.replay();
    EXPECT_NO_THROW(weft::synchronize(gpu));

    std::vector<int> one_outside = in_bounds;
    one_outside[100] = 5000;
    weft::copy(where, weft::from_vector(one_outside, gpu));
    graph.replay();
    try {
        weft::synchronize(gpu);
        ADD_FAILURE() << "the replay's out-of-bounds store was not reported";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "graph_scatter");
        EXPECT_TRUE(has(e.message(), "index 5000")) << e.message();
        EXPECT_TRUE(has(e.message(), "'out'")) << e.message();
        EXPECT_TRUE(has(e.message(), "replay of a captured graph")) << e.message();
    }
    EXPECT_NO_THROW(weft::synchronize(gpu)) << "reported once";
}

}  // namespace
