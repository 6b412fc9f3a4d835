// weft::Tape: launches recorded on a thread, their adjoints run in reverse order.
#include "weft/tape.hpp"

#include "api/adjoint_launch.hpp"
#include "api/module_state.hpp"
#include "weft/error.hpp"

namespace weft {

namespace {

struct Record {
    detail::KernelState kernel;
    Dim dim;
    std::vector<LaunchArg> args;
    std::vector<AnyArray> grads;  // per argument, as the launch found them
};

thread_local Tape* recording_tape = nullptr;

[[noreturn]] void fail(std::source_location s, const std::string& message) {
    throw Error(message, "", s.file_name(), s.line());
}

}  // namespace

struct Tape::State {
    std::vector<Record> records;
};

Tape::Tape() : state_(std::make_unique<State>()) {}

Tape::~Tape() {
    stop();
}

void Tape::start(std::source_location s) {
    if (recording_tape == this) return;
    if (recording_tape)
        fail(s,
             "another weft::Tape is recording on this thread; stop() it first (one tape records at a time)");
    recording_tape = this;
}

void Tape::stop() {
    if (recording_tape == this) recording_tape = nullptr;
}

bool Tape::recording() const {
    return recording_tape == this;
}

size_t Tape::size() const {
    return state_->records.size();
}

void Tape::reset() {
    state_->records.clear();
}

void Tape::zero() {
    for (Record& r : state_->records)
        for (AnyArray& g : r.grads)
            if (g.valid()) g.zero_();
}

void Tape::backward(const AnyArray& loss, std::source_location s) {
    if (!loss.valid() || !is_float(loss.dtype()) || loss.components() != 1 || loss.size() != 1 ||
        !loss.requires_grad())
        fail(s,
             "backward(loss) takes a one-element float array that has a gradient (weft::requires_grad); "
             "for other outputs set their gradients and call backward()");
    uint64_t one = 0;
    switch (loss.dtype()) {
        case DType::Float64: one = 0x3FF0000000000000u; break;
        case DType::Float16: one = 0x3C00u; break;
        case DType::BFloat16: one = 0x3F80u; break;
        default: one = 0x3F800000u;
    }
    loss.grad().copy_from_host(&one, dtype_size(loss.dtype()));  // (little-endian hosts)
    backward();
}

void Tape::backward() {
    // Every launch is checked before any runs, so a rejected one leaves every gradient as it was.
    std::vector<detail::PreparedAdjoint> adjoints;
    adjoints.reserve(state_->records.size());
    for (size_t i = state_->records.size(); i-- > 0;) {
        const Record& r = state_->records[i];
        adjoints.emplace_back(r.kernel, r.dim, r.args, r.grads);
    }
    for (detail::PreparedAdjoint& a : adjoints) a.run();
}

namespace detail {

bool tape_recording() {
    return recording_tape != nullptr;
}

void tape_record(const KernelState& kernel, const Dim& dim, const std::vector<LaunchArg>& args) {
    if (!recording_tape) return;
    Record r{kernel, dim, args, {}};
    for (const LaunchArg& a : args) {
        const auto* arr = std::get_if<AnyArray>(&a);
        r.grads.push_back(arr && arr->requires_grad() ? arr->grad() : AnyArray());
    }
    recording_tape->state_->records.push_back(std::move(r));
}

}  // namespace detail

}  // namespace weft
