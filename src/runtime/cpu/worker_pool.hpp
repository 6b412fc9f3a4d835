// The CPU backend's worker threads: a launch's threads split into chunks, run by several workers.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "weft/options.hpp"

namespace weft::runtime::cpu {

// The number of workers a CPU launch of a module with `options` uses: options.cpu_threads when
// set, else the environment variable WEFT_CPU_THREADS (read at each call), else every hardware
// thread.
// Throws weft::Error when WEFT_CPU_THREADS is not a whole number from 1 to kMaxCpuThreads.
int cpu_workers(const Options& options);
// The worker count WEFT_CPU_THREADS gives as `text`; throws weft::Error that says what to set.
int parse_cpu_threads(std::string_view text);

// Runs `chunk(worker, index, begin, end)` for consecutive chunks of [0, total) that cover it, on
// up to `workers` threads: the calling thread (worker 0) and `workers - 1` threads of a pool
// shared by the process (workers 1 to workers - 1 of this call: no two threads run chunks of one
// call under the same number, so a chunk may use state of its worker's own). Returns when every
// chunk has run. The caller works on its own launch's chunks, so
// launches from several host threads at once never wait for one another's work to start; each
// finishes even when every pool thread is busy elsewhere. `chunk` must not throw.
void run_chunks(int64_t total, int workers, const std::function<void(int, int64_t, int64_t, int64_t)>& chunk);

// How many chunks run_chunks splits `total` threads into for `workers` workers.
int64_t chunk_count(int64_t total, int workers);

}  // namespace weft::runtime::cpu
