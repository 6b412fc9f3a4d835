// The per-thread registry of graph captures, and the refusal of work that cannot be captured.
#include "runtime/graph_capture.hpp"

#include <algorithm>

#include "runtime/cuda/context.hpp"
#include "weft/error.hpp"

namespace weft::runtime {

namespace {

thread_local std::vector<Capture*> captures;  // innermost last

}  // namespace

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

bool capturing(Device device) {
    if (device.is_cpu()) return active_capture(device) != nullptr;
    return cuda::capturing(*cuda::current_stream(device.ordinal()));
}

void refuse_in_capture(Device device, const std::string& what) {
    if (!capturing(device)) return;
    throw Error(what + " cannot be part of a graph: work on " + device.name() + " is being captured, and " +
                what +
                " waits for the device or moves data between it and the host, which a graph cannot "
                "replay. Do it before the capture begins or after Graph::launch (the capture stays open)");
}

}  // namespace weft::runtime
