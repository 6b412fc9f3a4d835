// weft::Tape: launches recorded on a thread, their adjoints run in reverse order.
#include "weft/tape.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/adjoint_launch.hpp"
#include "api/module_state.hpp"
#include "runtime/backend.hpp"
#include "runtime/graph_capture.hpp"
#include "weft/error.hpp"

namespace weft {

namespace detail {

// A recorded launch's versions of the arrays it does not write (kUnchecked for the others and for
// scalars), taken before it ran: its backward replays them as they were then.
constexpr uint64_t kUnchecked = ~uint64_t{0};

struct TapeRecord {
    KernelState kernel;
    Dim dim;
    std::vector<LaunchArg> args;
    std::vector<AnyArray> grads;     // per argument, as the launch found them
    std::vector<bool> writes;        // per argument: whether the launch may write it
    std::vector<uint64_t> versions;  // per argument
};

struct TapeState {
    std::mutex mutex;  // guards what follows: the recording thread appends while others may read
    std::vector<TapeRecord> records;
    std::thread::id recorder;  // the thread that records (none: not recording)
    bool destroyed = false;    // the Tape is gone; its recording thread still holds this state
};

}  // namespace detail

namespace {

// The state of the tape recording on this thread, if any.
thread_local std::shared_ptr<detail::TapeState> recording_state;

[[noreturn]] void fail(std::source_location s, const std::string& message) {
    throw Error(message, "", s.file_name(), s.line());
}

}  // namespace

Tape::Tape() : state_(std::make_shared<detail::TapeState>()) {}

Tape::~Tape() {
    stop();
    const std::lock_guard lock(state_->mutex);
    state_->destroyed = true;
}

void Tape::start(std::source_location s) {
    if (recording_state == state_) return;
    if (recording_state)
        fail(s,
             "another weft::Tape is recording on this thread; stop() it first (one tape records at a time)");
    {
        const std::lock_guard lock(state_->mutex);
        if (state_->recorder != std::thread::id())
            fail(s,
                 "this weft::Tape is recording on another thread; a tape records on one thread at a time "
                 "(stop() it on that thread first, or give each thread its own tape)");
        state_->recorder = std::this_thread::get_id();
    }
    recording_state = state_;
}

TapeRecording::TapeRecording(Tape& tape, std::source_location s) : tape_(tape), started_(!tape.recording()) {
    if (started_) tape_.start(s);
}

TapeRecording::~TapeRecording() {
    if (started_) tape_.stop();
}

void Tape::stop() {
    if (recording_state != state_) return;
    recording_state.reset();
    const std::lock_guard lock(state_->mutex);
    state_->recorder = std::thread::id();
}

bool Tape::recording() const {
    return recording_state == state_;
}

size_t Tape::size() const {
    const std::lock_guard lock(state_->mutex);
    return state_->records.size();
}

void Tape::reset() {
    const std::lock_guard lock(state_->mutex);
    state_->records.clear();
}

void Tape::zero() {
    const std::lock_guard lock(state_->mutex);
    for (detail::TapeRecord& r : state_->records)
        for (AnyArray& g : r.grads)
            if (g.valid()) g.zero_();
}

namespace {

// Who wrote `read` after recorded launch `i` read it: the first recorded launch from `i` on that
// may have written its memory, else a write the tape does not see.
std::string writer_of(const detail::TapeState& state, size_t i, const AnyArray& read) {
    for (size_t j = i; j < state.records.size(); ++j) {
        const detail::TapeRecord& w = state.records[j];
        for (size_t b = 0; b < w.args.size(); ++b) {
            if (!w.writes[b] || !may_share_memory(std::get<AnyArray>(w.args[b]), read)) continue;
            const std::string argument = "its argument '" + w.kernel.body->param_names[b] + "'";
            if (j == i) return "that same launch, through " + argument;
            return "the launch of '" + w.kernel.body->name + "' at " + w.dim.loc.file + ":" +
                   std::to_string(w.dim.loc.line) + ", through " + argument;
        }
    }
    return "a host write (copy, fill_, zero_, copy_from_host) or a launch the tape did not record";
}

// weft::Error, before any gradient is written, when an array a recorded launch read was written
// since: naming it, that launch, and what wrote it.
void check_versions(const detail::TapeState& state) {
    for (size_t i = 0; i < state.records.size(); ++i) {
        const detail::TapeRecord& r = state.records[i];
        for (size_t a = 0; a < r.versions.size(); ++a) {
            if (r.versions[a] == detail::kUnchecked) continue;
            const AnyArray& read = std::get<AnyArray>(r.args[a]);
            if (detail::version(read) == r.versions[a]) continue;
            throw Error("backward: the launch of '" + r.kernel.body->name + "' read its argument '" +
                            r.kernel.body->param_names[a] + "', which was written after it read it, by " +
                            writer_of(state, i, read) +
                            "; its backward would replay the new values and give wrong gradients. Keep the "
                            "inputs of recorded launches unchanged until backward() (write new values into "
                            "another array, or record the launches again)",
                        "", r.dim.loc.file, r.dim.loc.line);
        }
    }
}

// Sets the one element of `grad` to `bits` on its device, as a graph can replay it: recorded into
// a CPU capture, queued on a GPU's stream (a copy from the host could be neither).
void seed(const AnyArray& grad, uint64_t bits) {
    detail::bump_version(grad);
    if (runtime::Capture* capture = runtime::active_capture(grad.device())) {
        capture->keep.push_back(std::make_shared<AnyArray>(grad));
        if (capture->records_operations) {
            capture->bodies.back().push_back([grad, bits] { seed(grad, bits); });
            return;
        }
    }
    runtime::backend(grad.device()).set_element(grad.data(), bits, dtype_size(grad.dtype()));
}

}  // namespace

void Tape::backward(const AnyArray& loss, std::source_location s) {
    if (!loss.valid() || !is_float(loss.dtype()) || loss.components() != 1 || loss.size() != 1 ||
        !loss.requires_grad())
        fail(s,
             "backward(loss) takes a one-element float array that has a gradient (weft::requires_grad); "
             "for other outputs set their gradients and call backward()");
    {
        const std::lock_guard lock(state_->mutex);
        check_versions(*state_);
    }
    uint64_t one = 0;
    switch (loss.dtype()) {
        case DType::Float64: one = 0x3FF0000000000000u; break;
        case DType::Float16: one = 0x3C00u; break;
        case DType::BFloat16: one = 0x3F80u; break;
        default: one = 0x3F800000u;
    }
    seed(loss.grad(), one);
    backward();
}

void Tape::backward(const std::vector<OutputGradient>& outputs, std::source_location s) {
    // Every pair is checked before any gradient is written.
    for (const OutputGradient& o : outputs) {
        if (!o.output.valid() || !o.output.requires_grad())
            fail(s,
                 "backward({{output, gradient}, ...}): an output has no gradient; give it one "
                 "(weft::requires_grad) before recording the launches that write it");
        if (!o.gradient.valid() || o.gradient.dtype() != o.output.dtype() ||
            o.gradient.components() != o.output.components() || !(o.gradient.shape() == o.output.shape()))
            fail(s,
                 "backward({{output, gradient}, ...}): a gradient differs from its output in element type "
                 "or shape; pass one of the output's type and shape (weft::ones_like(output), say)");
    }
    {
        const std::lock_guard lock(state_->mutex);
        check_versions(*state_);
    }
    for (const OutputGradient& o : outputs) copy(o.output.grad(s), o.gradient, s);
    backward();
}

void Tape::backward() {
    // Every launch is checked before any runs, so a rejected one leaves every gradient as it was.
    std::vector<detail::PreparedAdjoint> adjoints;
    {
        const std::lock_guard lock(state_->mutex);
        check_versions(*state_);
        adjoints.reserve(state_->records.size());
        for (size_t i = state_->records.size(); i-- > 0;) {
            const detail::TapeRecord& r = state_->records[i];
            adjoints.emplace_back(r.kernel, r.dim, r.args, r.grads);
        }
    }
    for (detail::PreparedAdjoint& a : adjoints) a.run();
}

namespace detail {

bool tape_recording() {
    return recording_state != nullptr;
}

std::vector<uint64_t> tape_ready(const std::vector<LaunchArg>& args, const std::vector<bool>& writes) {
    if (!recording_state) return {};
    bool destroyed = false;
    {
        const std::lock_guard lock(recording_state->mutex);
        destroyed = recording_state->destroyed;
    }
    if (!destroyed) {
        std::vector<uint64_t> versions;
        for (size_t i = 0; i < args.size(); ++i) {
            const auto* arr = std::get_if<AnyArray>(&args[i]);
            versions.push_back(arr && !writes[i] ? version(*arr) : kUnchecked);
        }
        return versions;
    }
    recording_state.reset();  // this thread records no more
    throw Error(
        "the weft::Tape recording on this thread was destroyed by another thread before stop(), so this "
        "launch was not made; stop() a tape on the thread that records before destroying it");
}

void tape_record(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args,
                 const std::vector<bool>& writes, const std::vector<uint64_t>& versions) {
    if (!recording_state) return;
    TapeRecord r{kernel, dim, args, {}, writes, versions};
    if (r.versions.size() != args.size()) r.versions.assign(args.size(), kUnchecked);
    for (const LaunchArg& a : args) {
        const auto* arr = std::get_if<AnyArray>(&a);
        r.grads.push_back(arr && arr->requires_grad() ? arr->grad() : AnyArray());
    }
    const std::lock_guard lock(recording_state->mutex);
    recording_state->records.push_back(std::move(r));
}

}  // namespace detail

}  // namespace weft
