// The per-thread registry of graph captures, and the refusal of work that cannot be captured.
#include "runtime/graph_capture.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/backend.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

namespace {

thread_local std::vector<Capture*> captures;  // innermost last

void run_ops(const std::vector<GraphOp>& ops) {
    for (const GraphOp& op : ops) op();
}

class RecordedGraph final : public GraphReplay {
public:
    explicit RecordedGraph(std::vector<GraphOp> ops) : ops_(std::move(ops)) {}
    void launch(const Stream&) const override { run_ops(ops_); }

private:
    std::vector<GraphOp> ops_;
};

class OperationRecorder final : public CaptureRecorder {
public:
    std::unique_ptr<GraphReplay> end(Capture& capture) override {
        return std::make_unique<RecordedGraph>(std::move(capture.bodies.front()));
    }
};

}  // namespace

std::unique_ptr<CaptureRecorder> record_operations(Capture& capture) {
    capture.records_operations = true;
    // A conditional body is recorded as a body of its own, then added as one operation that
    // runs it while (or if) the element is nonzero at replay.
    capture.conditional = [&capture](bool loop, const void* element, const IterationCap& cap,
                                     const std::function<void()>& body) {
        capture.bodies.emplace_back();
        try {
            body();
        } catch (...) {  // any exception: the body is half recorded, whatever its type
            capture.bodies.pop_back();
            throw;
        }
        std::vector<GraphOp> ops = std::move(capture.bodies.back());
        capture.bodies.pop_back();
        const auto* flag = static_cast<const int32_t*>(element);
        capture.bodies.back().push_back([loop, flag, cap, ops = std::move(ops)] {
            if (!loop) {
                if (*flag != 0) run_ops(ops);
                return;
            }
            for (int64_t runs = 0; *flag != 0; ++runs) {
                if (cap.runs > 0 && runs == cap.runs) cap.raise();
                run_ops(ops);
            }
        });
    };
    return std::make_unique<OperationRecorder>();
}

Capture* active_capture(Device device) {
    for (auto it = captures.rbegin(); it != captures.rend(); ++it)
        if ((*it)->device == device) return *it;
    return nullptr;
}

void push_capture(Capture& capture) {
    captures.push_back(&capture);
}

void pop_capture(Capture& capture) noexcept {
    const auto it = std::find(captures.begin(), captures.end(), &capture);
    if (it != captures.end()) captures.erase(it);
}

Capture* recording_capture(Device device) {
    Capture* capture = active_capture(device);
    return capture && capture->records_operations ? capture : nullptr;
}

bool capturing(Device device) {
    return backend(device).capturing();
}

void refuse_in_capture(Device device, const std::string& what, const std::source_location* at) {
    if (!capturing(device)) return;
    throw Error(what + " cannot be part of a graph: work on " + device.name() + " is being captured, and " +
                    what +
                    " waits for the device or moves data between it and the host, which a graph cannot "
                    "replay. Do it before the capture begins or after Graph::launch (the capture stays open)",
                "", at ? at->file_name() : "", at ? at->line() : 0);
}

}  // namespace weft::runtime
