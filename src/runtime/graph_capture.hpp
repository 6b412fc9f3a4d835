// The graph captures in progress on this thread: what a graph keeps alive, the CPU's recorded
// operations, and the refusal of work that a graph cannot replay.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "weft/device.hpp"

namespace weft {
class Stream;
}

namespace weft::runtime {

// One operation of a CPU graph, run at each replay.
using GraphOp = std::function<void()>;

// A capture_while's iteration cap: the most runs of its body each time the loop is reached (0:
// no cap), and what throws the weft::Error (naming the loop's line) when the condition still
// holds after them.
struct IterationCap {
    int64_t runs = 0;
    std::function<void()> raise;
};

struct Capture {
    Device device = Device::cpu();
    // The GPU stream being captured (its StreamState), so that work on another stream is not
    // mistaken for captured work; null on the CPU.
    const void* stream = nullptr;
    // Held for the graph's whole life: the memory its work reads and writes, temporaries
    // included, the modules of its kernels, the stream whose status area its kernels write.
    std::vector<std::shared_ptr<const void>> keep;
    // Recording operations: those recorded so far; the back is the innermost body being recorded (a
    // capture_while or capture_if body), the front the graph itself.
    std::vector<std::vector<GraphOp>> bodies{1};
    // Whether the capture records the runtime's operations (`bodies`) to run them at each replay
    // (the CPU's), rather than the device recording the work queued on its stream (a GPU's).
    bool records_operations = false;
    // Records what `body` does as a step that runs it once if the int32 at `element` is nonzero,
    // or with `loop` as long as it is, within `cap` (set by the backend that began the capture).
    // Throws what `body` throws.
    std::function<void(bool loop, const void* element, const IterationCap& cap,
                       const std::function<void()>& body)>
        conditional;
    // Set when a conditional body threw: its work may be half recorded, so the capture cannot
    // end with a graph (end() reports this message).
    std::string failed;
};

// A captured graph as its backend replays it.
class GraphReplay {
public:
    virtual ~GraphReplay() = default;
    // Runs the graph's work on `stream` (on the CPU, done when it returns; on a GPU, queued).
    virtual void launch(const Stream& stream) const = 0;
};

// A capture in progress as its backend records it (Backend::begin_capture); destroyed before
// end(), it is abandoned.
class CaptureRecorder {
public:
    virtual ~CaptureRecorder() = default;
    // Ends the capture of `capture` (the one it was begun for) with its graph.
    virtual std::unique_ptr<GraphReplay> end(Capture& capture) = 0;
};

// Makes `capture` record the runtime's operations, replayed in order (the CPU backend's capture).
std::unique_ptr<CaptureRecorder> record_operations(Capture& capture);

// The innermost capture of `device` in progress on this thread, or null.
Capture* active_capture(Device device);
// The innermost capture of `device` on this thread if it records the runtime's operations (the
// work that would run now is to be added to its innermost body instead), else null.
Capture* recording_capture(Device device);
// Makes `capture` the innermost capture of its device on this thread, until pop_capture.
void push_capture(Capture& capture);
void pop_capture(Capture& capture) noexcept;

// Whether work queued now on `device`'s current stream is being captured into a graph (by
// weft::ScopedCapture, or on a GPU by any CUDA stream capture).
bool capturing(Device device);
// Throws a weft::Error when capturing(device): `what` waits for the device or moves data between
// it and the host, which a graph cannot replay. The capture stays open and usable. With `at`,
// the error names the caller's line.
void refuse_in_capture(Device device, const std::string& what, const std::source_location* at = nullptr);

}  // namespace weft::runtime
