// Reverse-mode autodiff: a tape of launches run backwards, and manual adjoint launches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <source_location>
#include <vector>

#include "weft/launch.hpp"

namespace weft {

namespace detail {
struct TapeState;
/// Called by weft::launch before each launch: weft::Error when the tape recording on this thread
/// was destroyed (by another thread) before it stopped, so nothing runs unrecorded. While a tape
/// records, the versions (detail::version) of the array arguments the launch does not write
/// (`writes`, per argument), which its backward reads as they are now; else nothing.
std::vector<uint64_t> tape_ready(const std::vector<LaunchArg>& args, const std::vector<bool>& writes);
/// Called by weft::launch after each launch: records it, with tape_ready's versions, on this
/// thread's recording tape, if any.
void tape_record(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                 const std::vector<bool>& writes, const std::vector<uint64_t>& versions);
/// Whether a tape records on this thread.
bool tape_recording();
}  // namespace detail

/// In a custom adjoint (Module::func_grad): the gradient of the function's float array parameter
/// `a`, as in `weft::adjoint(values)[i] += adj_ret` (an atomic add, deterministic in RunToRun and
/// GpuToGpu modules).
template <ArrayElement T, int N>
Array<T, N> adjoint(const Array<T, N>& a, std::source_location s = std::source_location::current()) {
    return detail::Access::wrap<Array<T, N>>(
        detail::emit_adjoint(detail::Access::ref(a), detail::Loc::from(s)));
}

/// Launches the generated adjoint of `kernel` (the spec's `adjoint=True` launch), for users who
/// manage their own tape. `args` are the forward launch's arguments; `grads` has one entry per
/// argument: the gradient of that argument (an array of its type and shape, on its device), or an
/// empty AnyArray for none. The adjoint reads the gradients of the arrays the kernel writes and
/// accumulates into the gradients of the arrays it reads (deterministically in RunToRun and
/// GpuToGpu modules); a missing gradient reads as zero and receives nothing, and a launch with no
/// gradient at all does nothing. weft::Error, before
/// anything runs, when the kernel's backward cannot be generated (naming the line that prevents
/// it) or its module has enable_backward = false. See docs/autodiff.md.
void launch_adjoint(const detail::KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                    const std::vector<AnyArray>& grads);

/// launch_adjoint with the forward launch's arguments checked as weft::launch checks them.
template <class... P, class... A>
void launch_adjoint(const Kernel<P...>& kernel, const Dim& dim, const std::vector<AnyArray>& grads,
                    const A&... args) {
    static_assert(detail::Parameters<P...>::template fit<A...>());
    launch_adjoint(*kernel.state(), dim, detail::launch_args<P...>(*kernel.state(), dim, args...), grads);
}

class Tape;

/// An output and the gradient to start a backward pass from (Tape::backward's list): `gradient`
/// has the output's element type and shape.
struct OutputGradient {
    /// The output (an array that has a gradient).
    AnyArray output;
    /// The gradient to start from.
    AnyArray gradient;
};

/// Records this thread's launches on `tape` while it is in scope: the counterpart of the spec's
/// `with tape:`. It starts the tape (unless it already records on this thread) and stops it again
/// when it goes out of scope, an exception included; a tape that already recorded keeps recording.
class [[nodiscard]] TapeRecording {
public:
    /// Starts `tape` on this thread unless it records here already (a weft::Error as Tape::start).
    explicit TapeRecording(Tape& tape, std::source_location s = std::source_location::current());
    ~TapeRecording();
    TapeRecording(const TapeRecording&) = delete;
    TapeRecording& operator=(const TapeRecording&) = delete;

private:
    Tape& tape_;
    bool started_;  // whether this scope started the tape (and so stops it)
};

/// Records the launches this thread makes while the tape is recording (kernels of modules with
/// enable_backward = false are left out), with the gradients their array arguments have at that
/// time (AnyArray::grad). backward() runs their adjoints in reverse order of the launches. The
/// tape keeps the recorded arrays alive until reset() or its end; stop it on the thread that
/// started it before it ends.
class Tape {
public:
    Tape();
    ~Tape();
    Tape(const Tape&) = delete;
    Tape& operator=(const Tape&) = delete;

    /// Starts or stops recording this thread's launches; one tape records on a thread at a time,
    /// and a tape records on one thread at a time (start() on a second thread is a weft::Error;
    /// stop() it on the first). A tape destroyed while another thread records makes that
    /// thread's next launch a weft::Error (stop a tape on its thread before destroying it).
    ///@{
    void start(std::source_location s = std::source_location::current());
    void stop();
    ///@}
    /// Whether the tape is recording.
    bool recording() const;
    /// Records while the result is in scope: `{ auto recording = tape.record(); ... }`.
    TapeRecording record(std::source_location s = std::source_location::current()) {
        return TapeRecording(*this, s);
    }

    /// Sets the gradient of `loss` (a one-element float array that has one) to 1, then runs
    /// backward().
    void backward(const AnyArray& loss, std::source_location s = std::source_location::current());
    /// Copies each given gradient into its output's gradient (`tape.backward({{out, out_grad}})`,
    /// the spec's `tape.backward(grads={out: out_grad})`), then runs backward(). weft::Error,
    /// naming the caller's line and changing nothing, for an output without a gradient or a
    /// gradient of another element type or shape.
    void backward(const std::vector<OutputGradient>& outputs,
                  std::source_location s = std::source_location::current());
    /// Runs the adjoint of each recorded launch, the last first, from the output gradients the
    /// caller has set. Every launch is checked first: an error (naming the recorded launch's line)
    /// leaves every gradient as it was. That includes the arrays each launch read: one written
    /// since (by a later launch, a host copy or fill, or by the launch itself through another
    /// argument) would be replayed with its new values, so backward refuses, naming the array,
    /// the launch that read it and, where the tape recorded it, the launch that wrote it.
    void backward();
    /// Sets every gradient of the recorded launches' arrays to zero. Gradients accumulate: call it
    /// between two backward passes. (Unlike the spec framework's `tape.reset()`, reset() below does
    /// not zero gradients: a loop that only resets adds each pass's gradients to the last's.)
    void zero();
    /// Forgets the recorded launches (recording, if on, goes on); gradients keep their values.
    void reset();
    /// The number of recorded launches.
    size_t size() const;

private:
    std::shared_ptr<detail::TapeState> state_;  // shared with the thread that records
};

}  // namespace weft
