// A process-wide pool of worker threads for CPU launches; the launching thread works too.
#include "runtime/cpu/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "weft/error.hpp"

namespace weft::runtime::cpu {

namespace {

// One launch's chunks. Chunks are claimed one at a time from `next`, so a worker that is slow
// to start (or busy with another launch) simply claims fewer.
struct Job {
    const std::function<void(int, int64_t, int64_t, int64_t)>* chunk;
    int64_t total;
    int64_t size;   // threads per chunk (the last may have fewer)
    int64_t count;  // chunks
    std::atomic<int64_t> next{0};
    int helpers_wanted;  // pool threads that may join: the launch's workers less its caller
    int helpers = 0;     // pool threads that joined (under the pool's mutex)
    int inside = 0;      // pool threads still running its chunks (under the pool's mutex)

    // `worker`: the caller's 0, or the pool thread's number of joining (1 to helpers_wanted).
    void work(int worker) {
        for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < count;
             c = next.fetch_add(1, std::memory_order_relaxed))
            (*chunk)(worker, c, c * size, std::min(total, (c + 1) * size));
    }
};

class Pool {
public:
    void run(Job& job) {
        grow(job.helpers_wanted);
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(&job);
        }
        for (int i = 0; i < job.helpers_wanted; ++i) work_.notify_one();
        job.work(0);
        std::unique_lock lock(mutex_);
        // No pool thread joins once the job has left the queue; those inside finish the chunks
        // they claimed, and the caller returns only after they have left, so `job` outlives them.
        if (const auto it = std::find(queue_.begin(), queue_.end(), &job); it != queue_.end())
            queue_.erase(it);
        done_.wait(lock, [&] { return job.inside == 0; });
    }

private:
    // Starts pool threads until there are `wanted` (or as many as the system allows: with fewer,
    // the callers run more of the chunks themselves).
    void grow(int wanted) {
        std::lock_guard lock(mutex_);
        while (threads_ < wanted) {
            try {
                std::thread([this] { serve(); }).detach();
            } catch (const std::system_error&) {
                return;
            }
            ++threads_;
        }
    }

    [[noreturn]] void serve() {
        std::unique_lock lock(mutex_);
        for (;;) {
            work_.wait(lock, [&] { return !queue_.empty(); });
            Job* job = queue_.front();
            const int worker = ++job->helpers;
            if (worker >= job->helpers_wanted) queue_.pop_front();
            ++job->inside;
            lock.unlock();
            job->work(worker);
            lock.lock();
            if (--job->inside == 0) done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable work_;  // a job was queued
    std::condition_variable done_;  // a job's last pool thread left it
    std::deque<Job*> queue_;        // jobs that pool threads may still join, oldest first
    int threads_ = 0;
};

Pool& pool() {
    // Never destroyed: its threads wait for work until the process ends.
    static Pool* p = new Pool();
    return *p;
}

// Threads per chunk. A few chunks per worker balance uneven threads; chunks of whole multiples
// of 64 threads (where there are enough) keep vector loops free of remainders at chunk edges.
int64_t chunk_size(int64_t total, int workers) {
    if (workers <= 1 || total <= 1) return std::max<int64_t>(total, 1);
    const int64_t wanted = std::min<int64_t>(total, int64_t{workers} * 8);
    const int64_t size = (total + wanted - 1) / wanted;
    return total >= int64_t{workers} * 8 * 64 ? (size + 63) / 64 * 64 : size;
}

}  // namespace

int parse_cpu_threads(std::string_view text) {
    int n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxCpuThreads)
        throw Error("the environment variable WEFT_CPU_THREADS is '" + std::string(text) +
                    "'; set it to the number of worker threads for CPU launches, from 1 (serial) to " +
                    std::to_string(kMaxCpuThreads) + ", or unset it to use every hardware thread");
    return n;
}

int cpu_workers(const Options& options) {
    if (options.cpu_threads > 0) return options.cpu_threads;
    // Read at each launch, as WEFT_CXX is at each compile: a getenv costs far less than a launch.
    if (const char* env = std::getenv("WEFT_CPU_THREADS"); env && *env) return parse_cpu_threads(env);
    static const int hardware =
        std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxCpuThreads);
    return hardware;
}

int64_t chunk_count(int64_t total, int workers) {
    const int64_t size = chunk_size(total, workers);
    return (total + size - 1) / size;
}

void run_chunks(int64_t total, int workers,
                const std::function<void(int, int64_t, int64_t, int64_t)>& chunk) {
    const int64_t count = chunk_count(total, workers);
    if (count <= 1) return chunk(0, 0, 0, total);
    Job job;
    job.chunk = &chunk;
    job.total = total;
    job.size = chunk_size(total, workers);
    job.count = count;
    job.helpers_wanted = static_cast<int>(std::min<int64_t>(workers - 1, job.count - 1));
    pool().run(job);
}

}  // namespace weft::runtime::cpu
