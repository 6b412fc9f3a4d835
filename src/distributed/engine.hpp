// What a communicator needs from an engine (MPI, NCCL): a few element-wise collectives on host
// buffers, the engine's own float all-reduce, and a way to stop every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "weft/device_array.hpp"

namespace weft::distributed {

class Engine {
public:
    virtual ~Engine() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string name() const = 0;
    // In place, element by element over the ranks; `what` names the operation should it time out.
    virtual void max_i32(int32_t* data, size_t n, const char* what) const = 0;
    virtual void max_i64(int64_t* data, size_t n, const char* what) const = 0;
    virtual void sum_i64(int64_t* data, size_t n, const char* what) const = 0;
    // Why the engine cannot all-reduce `array` (with `plain`: its own float sum, in place), or
    // empty: checked on every rank before the collective, so that all fail together.
    virtual std::string unusable(const AnyArray& array, bool plain) const = 0;
    // Whether `array` lies where the engine sums exactly itself (NCCL: a dense array on its GPU);
    // every rank must answer the same (the communicator checks that).
    virtual bool on_device(const AnyArray&) const { return false; }
    // The exact all-reduce on the device for such an array; false, with `array` unchanged, when an
    // element needs the fallback (every rank returns the same), which the host protocol then does.
    virtual bool exact_on_device(const AnyArray&, const char*) const { return false; }
    // The engine's floating-point sum of a dense array in place (its order is the engine's).
    virtual void plain_sum(const AnyArray& array, const char* what) const = 0;
    // Copies `bytes` at `data` from rank `root` to every rank.
    virtual void broadcast(void* data, size_t bytes, int root, const char* what) const = 0;
    virtual void barrier() const = 0;
    // Collective: the ranks that pass the same `color` (0 or more) form a new engine, in rank
    // order; a rank passing -1 gets null.
    virtual std::shared_ptr<Engine> split(int color) const = 0;
    // Prints `message` and ends every rank of the job.
    [[noreturn]] virtual void abort(const std::string& message) const = 0;
};

// Seconds a collective may wait before the job is aborted (WEFT_DIST_TIMEOUT, default 300).
double collective_timeout();

// The message of a collective that waited past collective_timeout().
std::string timeout_message(const Engine& engine, const char* what);

}  // namespace weft::distributed
