// Graphs: the work queued on a device's stream captured once and replayed many times, with
// conditional bodies; and recorded launches, checked once and issued many times.
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "weft/launch.hpp"
#include "weft/stream.hpp"
#include "weft/struct.hpp"

namespace weft {

namespace detail {
struct GraphState;
struct CaptureState;
struct PreparedLaunch;
}  // namespace detail

/// Work captured by a ScopedCapture (or capture()): on a GPU a CUDA graph, on the CPU the
/// recorded operations, replayed in order. A graph holds everything its work uses (arrays,
/// deterministic state, modules) for its whole life, whatever happens to the handles that made
/// them. Failures found by a replay on a GPU (a records overflow, a slot divergence, a bounds
/// fault) are reported at the next synchronization of the stream the graph was captured on.
class Graph {
public:
    /// An empty handle (valid() is false); ScopedCapture::end and capture make graphs.
    Graph() = default;
    /// Whether this handle holds a graph.
    bool valid() const { return state_ != nullptr; }
    /// The device the graph was captured on.
    Device device() const;
    /// Replays the graph on the current stream of its device, or on `stream` (same device).
    ///@{
    void launch() const;
    void launch(const Stream& stream) const;
    ///@}

private:
    friend class ScopedCapture;
    explicit Graph(std::shared_ptr<const detail::GraphState> state) : state_(std::move(state)) {}
    std::shared_ptr<const detail::GraphState> state_;
};

/// Captures the work this thread queues on `device`'s current stream from construction to end():
/// launches (deterministic ones included), zeroing and copies between arrays of the device, and
/// capture_while / capture_if bodies. Work a graph cannot replay (a copy to or from the host, a
/// synchronization, a launch the host must finish) is a weft::Error naming it; the capture stays
/// usable. Destroyed before end() (an exception), the capture is abandoned.
class ScopedCapture {
public:
    /// Starts capturing on `device`: weft::Error, naming the caller's line, if a capture of the device
    /// is already open on this thread.
    explicit ScopedCapture(Device device = default_device(),
                           std::source_location s = std::source_location::current());
    ~ScopedCapture();
    ScopedCapture(const ScopedCapture&) = delete;
    ScopedCapture& operator=(const ScopedCapture&) = delete;
    /// Ends the capture and returns its graph (once).
    Graph end();

private:
    std::unique_ptr<detail::CaptureState> state_;
};

/// The graph of the work `work()` queues on `device`.
template <class F>
Graph capture(Device device, F&& work, std::source_location s = std::source_location::current()) {
    ScopedCapture scope(device, s);
    std::forward<F>(work)();
    return scope.end();
}

/// Inside a capture: `body`'s work, replayed as long as (capture_while) or once if (capture_if)
/// the int32 element `condition` holds (an array or view of one element, on the capture's device)
/// is nonzero when the replay reaches it; on a GPU a conditional graph node, the condition read
/// on the device. capture_while reads the element again after each run of the body. Outside a
/// capture, the body runs now, the element read on the host (a GPU synchronizes for each read).
///@{
void capture_while(const AnyArray& condition, const std::function<void()>& body,
                   std::source_location s = std::source_location::current());
void capture_if(const AnyArray& condition, const std::function<void()>& body,
                std::source_location s = std::source_location::current());
///@}

/// capture_while with an iteration cap, for a loop whose condition might never clear: each time
/// the loop is reached, `body` runs at most `max_iterations` (at least 1) times. A condition still
/// nonzero after that many runs ends the loop, and is a weft::Error naming this line: on the CPU
/// thrown at once (by Graph::launch, whose replay stops there, or here outside a capture); on a
/// GPU by the stream's next synchronization, the replay going on after the loop.
void capture_while(const AnyArray& condition, int64_t max_iterations, const std::function<void()>& body,
                   std::source_location s = std::source_location::current());

/// A launch whose arguments are checked and whose kernel is compiled once, issued by launch()
/// any number of times (inside a capture too); set() replaces an argument by name between
/// issues. A replacement keeps the argument's kind, dtype and shape class (its number of
/// dimensions and whether it is contiguous); extents, data and scalar values may change.
class RecordedLaunch {
public:
    /// Checks the arguments against `kernel`'s parameters (at compile time, then their values) and
    /// compiles the kernel, now.
    template <class... P, class... A>
    RecordedLaunch(const Kernel<P...>& kernel, const Dim& dim, const A&... args)
        : RecordedLaunch(*kernel.state(), dim, arguments<P...>(*kernel.state(), dim, args...)) {}
    /// The same, with arguments checked at run time only (as the run-time weft::launch).
    RecordedLaunch(const detail::KernelState& kernel, const Dim& dim, std::vector<LaunchArg> args);

    /// Replaces array parameter `name` (or a struct's array leaf, "model.grid"): it keeps the array's
    /// dtype and shape class; otherwise a weft::Error naming the caller's line, and nothing changes.
    void set(const std::string& name, const AnyArray& array,
             std::source_location s = std::source_location::current());
    /// Replaces scalar parameter `name`'s value by weft::launch's rule: any C++ number whose value
    /// the parameter's type holds (2 or 2.0 for a float32, 3.0 for an int32; not 1.5 for an
    /// int32, nor 1e300 for a float32); otherwise a weft::Error naming the caller's line.
    template <class A>
    requires std::is_arithmetic_v<A> || ElementType<A>
    void set(const std::string& name, A value, std::source_location s = std::source_location::current()) {
        if constexpr (!std::is_arithmetic_v<A>) {
            set(name, static_cast<float>(value), s);  // float16 and bfloat16 are exact as float
        } else {
            const std::optional<ScalarArg> arg = detail::scalar_as(scalar_dtype(name, s), value);
            if (!arg) reject_value(name, detail::number_text(value), s);
            set_scalar(name, *arg, s);
        }
    }
    /// Replaces every leaf of a struct parameter (or of a struct field: "model.grid") with the
    /// host struct's: `name.field`, `name.nested.field`, `name.vector[0]`, ..., flattened as a
    /// launch flattens it. The struct's type names the kernel-side type (Model<> is
    /// Model<weft::kernel_side>): every leaf of `name` must exist and fit (an array its shape
    /// class, a scalar its dtype), and the value must cover all of `name`'s leaves; otherwise a
    /// weft::Error naming the caller's line, and no leaf changes.
    template <template <class> class S>
    requires detail::RegisteredStruct<S<kernel_side>>
    void set(const std::string& name, const S<host_side>& value,
             std::source_location s = std::source_location::current()) {
        set_param<S<kernel_side>>(name, value, s);
    }
    /// Replaces a composite parameter's components (`name[0]`, `name[1]`, ...) with those of the
    /// host value (weft::host::vec3f for a vec3 parameter, mat33d for a mat33d, ...), all or none.
    template <HostComposite H>
    void set(const std::string& name, const H& value,
             std::source_location s = std::source_location::current()) {
        set_param<traced_t<H>>(name, value, s);
    }
    /// Replaces the launch's thread grid.
    void set_dim(const Dim& dim);
    /// Runs (CPU) or queues (GPU) the launch with its current arguments.
    void launch() const;

private:
    template <class... P, class... A>
    static std::vector<LaunchArg> arguments(const detail::KernelState& kernel, const Dim& dim,
                                            const A&... args) {
        static_assert(detail::Parameters<P...>::template fit<A...>());
        return detail::launch_args<P...>(kernel, dim, args...);
    }
    template <class P, class H>
    void set_param(const std::string& name, const H& value, std::source_location s) {
        std::vector<detail::ParamSpec> specs;
        std::vector<std::string> leaves;
        detail::ParamTraits<P>::leaves(name, specs, leaves);
        std::vector<LaunchArg> values;
        size_t leaf = 0;
        detail::HostArgs<P>::append(kernel_state(), dim(), leaf, value, values);
        set_leaves(name, leaves, std::move(values), s);
    }
    /// Replaces the arguments of leaves `leaves` (every leaf of parameter or field `name`) with
    /// `values`, checked as set() checks one: all of them or none.
    void set_leaves(const std::string& name, const std::vector<std::string>& leaves,
                    std::vector<LaunchArg> values, std::source_location s);
    const detail::KernelState& kernel_state() const;
    const Dim& dim() const;
    void set_scalar(const std::string& name, ScalarArg value, std::source_location s);
    /// The dtype of scalar parameter `name` (a weft::Error if it is an array or unknown).
    DType scalar_dtype(const std::string& name, std::source_location s);
    [[noreturn]] void reject_value(const std::string& name, const std::string& value, std::source_location s);
    size_t find(const std::string& name, std::source_location s);
    std::shared_ptr<detail::PreparedLaunch> prepared_;
};

}  // namespace weft
