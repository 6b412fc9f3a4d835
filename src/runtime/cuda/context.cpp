// Device contexts and streams.
#include "runtime/cuda/context.hpp"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <map>
#include <utility>

#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace {

// Contexts live for the whole process and are never destroyed, so that arrays and modules
// held in static objects can still release their memory during exit.
std::mutex& contexts_mutex() {
    static auto* m = new std::mutex;
    return *m;
}
std::vector<DeviceContext*>& contexts() {
    static auto* v = new std::vector<DeviceContext*>;
    return *v;
}
thread_local CUcontext bound = nullptr;
thread_local std::map<int, std::shared_ptr<StreamState>> current;

void bind(const DeviceContext& c) {
    if (bound != c.context) {
        check(require_driver().cuCtxSetCurrent(c.context), "cuCtxSetCurrent");
        bound = c.context;
    }
}

// A stream and its zeroed status area (allocated here, outside any capture, so that captured
// work writes to memory that outlives the graph).
std::shared_ptr<StreamState> new_stream(int ordinal) {
    const Driver& d = require_driver();
    auto s = std::make_shared<StreamState>();
    s->ordinal = ordinal;
    check(d.cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(d.cuMemAllocAsync(&s->status, sizeof(wf::StatusArea), s->stream),
          "allocating a stream's status area");
    check(d.cuMemsetD8Async(s->status, 0, sizeof(wf::StatusArea), s->stream),
          "zeroing a stream's status area");
    return s;
}

// Claims an entry under the stream's lock; when every entry is taken by work not yet
// synchronized, synchronizes once to release them (only a capture can hold them all for good).
template <class Set>
int claim_entry(StreamState& s, StatusClaims StreamState::*claims, const std::string& key, Set set) {
    const bool captured = capturing(s);
    for (int attempt = 0; attempt < 2; ++attempt) {
        {
            std::lock_guard lock(s.mutex);
            const int at = (s.*claims).claim(key, captured);
            if (at >= 0) {
                set((s.*claims).at(at));
                return at;
            }
        }
        if (captured) break;
        synchronize(s);
    }
    throw Error("more than " + std::to_string((s.*claims).capacity()) +
                " launches that report errors from the GPU were captured on one stream of cuda:" +
                std::to_string(s.ordinal) + "; capture them on several streams");
}

// The claims of a synchronization: taken before it waits, so that what it reads was queued
// before the wait.
struct ClaimsRead {
    std::vector<StatusClaim> words, faults;
};

ClaimsRead claims_before_waiting(StreamState& s) {
    std::lock_guard lock(s.mutex);
    return {s.words.claimed(), s.faults.claimed()};
}

// Zeroes entry `i` of `claims` (at `address`) when it is unchanged since `read`: a claimant that
// shared it since may have queued work that writes it, whose failure must not be lost.
void zero_if_unchanged(StreamState& s, StatusClaims& claims, size_t i, const StatusClaim& read,
                       CUdeviceptr address, size_t bytes) {
    std::lock_guard lock(s.mutex);  // held while queueing, so that no claim comes in between
    if (claims.unchanged(i, read))
        check(require_driver().cuMemsetD8Async(address, 0, bytes, s.stream), "zeroing a status entry");
}

// After a successful synchronization: reads the entries in `read`, zeroes those that hold a
// failure, releases the claims that were not captured, and throws the first failure.
void read_status(StreamState& s, const ClaimsRead& read) {
    const auto any_readable = [](const std::vector<StatusClaim>& claims) {
        for (const StatusClaim& c : claims)
            if (StatusClaims::readable(c)) return true;
        return false;
    };
    if (!any_readable(read.words) && !any_readable(read.faults)) return;
    const Driver& d = require_driver();
    const CUdeviceptr words_at = s.status + offsetof(wf::StatusArea, words);
    const CUdeviceptr faults_at = s.status + offsetof(wf::StatusArea, faults);
    std::vector<wf::u64> words(read.words.size());
    std::vector<wf::Error> faults(read.faults.size());
    if (!words.empty())
        check(d.cuMemcpyDtoHAsync(words.data(), words_at, words.size() * sizeof(wf::u64), s.stream),
              "reading a stream's status words");
    if (!faults.empty())
        check(d.cuMemcpyDtoHAsync(faults.data(), faults_at, faults.size() * sizeof(wf::Error), s.stream),
              "reading a stream's fault records");
    check(d.cuStreamSynchronize(s.stream), "reading a stream's status area");
    // Every entry is read; the first failure is reported.
    std::exception_ptr first;
    const auto raise = [&](const auto& call) {
        try {
            call();
        } catch (...) {
            if (!first) first = std::current_exception();
        }
    };
    for (size_t i = 0; i < words.size(); ++i) {
        const StatusClaim& c = read.words[i];
        if (!StatusClaims::readable(c) || words[i] == 0) continue;
        zero_if_unchanged(s, s.words, i, c, words_at + i * sizeof(wf::u64), sizeof(wf::u64));
        if (c.raise_word) raise([&] { c.raise_word(words[i]); });
    }
    for (size_t i = 0; i < faults.size(); ++i) {
        const StatusClaim& c = read.faults[i];
        if (!StatusClaims::readable(c) || faults[i].code == 0) continue;
        zero_if_unchanged(s, s.faults, i, c, faults_at + i * sizeof(wf::Error), sizeof(wf::Error));
        if (c.raise_fault) raise([&] { c.raise_fault(faults[i]); });
    }
    {
        std::lock_guard lock(s.mutex);
        s.words.release(read.words);
        s.faults.release(read.faults);
    }
    if (first) std::rethrow_exception(first);
}

DeviceContext* open(int ordinal) {
    const Driver& d = require_driver();
    auto* c = new DeviceContext();
    c->ordinal = ordinal;
    check(d.cuDeviceGet(&c->device, ordinal), "cuDeviceGet");
    check(d.cuDevicePrimaryCtxRetain(&c->context, c->device), "cuDevicePrimaryCtxRetain");
    char name[256] = {};
    check(d.cuDeviceGetName(name, sizeof name, c->device), "cuDeviceGetName");
    c->name = name;
    check(d.cuDeviceGetAttribute(&c->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->device),
          "cuDeviceGetAttribute");
    check(d.cuDeviceGetAttribute(&c->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->device),
          "cuDeviceGetAttribute");
    check(d.cuDeviceGetAttribute(&c->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->device),
          "cuDeviceGetAttribute");
    int cooperative = 0;
    check(d.cuDeviceGetAttribute(&cooperative, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, c->device),
          "cuDeviceGetAttribute");
    c->cooperative = cooperative != 0;
    check(d.cuDeviceTotalMem(&c->total_memory, c->device), "cuDeviceTotalMem");
    bind(*c);
    // The default pool keeps freed memory for reuse instead of returning it at every
    // synchronization: cuMemAllocAsync then behaves as a caching, stream-ordered allocator.
    CUmemoryPool pool = nullptr;
    check(d.cuDeviceGetDefaultMemPool(&pool, c->device), "cuDeviceGetDefaultMemPool");
    unsigned long long keep = ~0ull;
    check(d.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep), "cuMemPoolSetAttribute");
    c->default_stream = new_stream(ordinal);
    return c;
}

}  // namespace

StreamState::~StreamState() {
    // Destroying a stream lets its queued work finish first.
    if (stream && bind_for_release(ordinal)) {
        if (status) driver()->cuMemFreeAsync(status, stream);
        driver()->cuStreamDestroy(stream);
    }
}

int device_count() {
    const Driver* d = driver();
    if (!d) return 0;
    int n = 0;
    d->cuDeviceGetCount(&n);
    return n;
}

DeviceContext& context(int ordinal) {
    DeviceContext* c = nullptr;
    {
        std::lock_guard lock(contexts_mutex());
        if (ordinal < 0 || ordinal >= device_count())
            throw Error("device cuda:" + std::to_string(ordinal) + " does not exist; this machine has " +
                        std::to_string(device_count()) + " GPU(s)");
        auto& all = contexts();
        if (all.empty()) all.resize(static_cast<size_t>(device_count()), nullptr);
        if (!all[ordinal]) all[ordinal] = open(ordinal);
        c = all[ordinal];
    }
    bind(*c);
    return *c;
}

bool bind_for_release(int ordinal) noexcept {
    const Driver* d = driver();
    if (!d) return false;
    std::lock_guard lock(contexts_mutex());
    const auto& all = contexts();
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= all.size() || !all[ordinal]) return false;
    if (bound != all[ordinal]->context && d->cuCtxSetCurrent(all[ordinal]->context) != CUDA_SUCCESS)
        return false;
    bound = all[ordinal]->context;
    return true;
}

std::shared_ptr<StreamState> current_stream(int ordinal) {
    DeviceContext& c = context(ordinal);
    const auto it = current.find(ordinal);
    return it != current.end() && it->second ? it->second : c.default_stream;
}

std::shared_ptr<StreamState> exchange_current_stream(int ordinal, std::shared_ptr<StreamState> stream) {
    auto previous = current[ordinal];
    current[ordinal] = std::move(stream);
    return previous;
}

std::shared_ptr<StreamState> create_stream(int ordinal) {
    context(ordinal);
    return new_stream(ordinal);
}

void RecentKernels::note(const std::string& kernel) {
    names_[next_] = kernel;
    next_ = (next_ + 1) % names_.size();
    count_ = std::min(count_ + 1, names_.size());
}

std::vector<std::string> RecentKernels::names() const {
    std::vector<std::string> out;
    out.reserve(count_);
    for (size_t i = 0; i < count_; ++i)
        out.push_back(names_[(next_ + names_.size() - count_ + i) % names_.size()]);
    return out;
}

std::vector<std::string> RecentKernels::take() {
    std::vector<std::string> out = names();
    count_ = 0;
    return out;
}

void note_launch(StreamState& s, const std::string& kernel) {
    std::lock_guard lock(s.mutex);
    // Bounded: the most recent launches are the likely culprits.
    s.unsynchronized.note(kernel);
}

bool capturing(const StreamState& s) {
    int status = 0;
    check(require_driver().cuStreamIsCapturing(s.stream, &status), "cuStreamIsCapturing");
    return status != 0;
}

StatusTicket::StatusTicket(std::shared_ptr<StreamState> stream, StatusClaims StreamState::*claims, int entry,
                           CUdeviceptr address)
    : stream_(std::move(stream)), claims_(claims), entry_(entry), address_(address) {}

StatusTicket& StatusTicket::operator=(StatusTicket&& other) noexcept {
    if (this != &other) {
        finish();
        stream_ = std::move(other.stream_);
        claims_ = other.claims_;
        entry_ = std::exchange(other.entry_, -1);
        address_ = std::exchange(other.address_, 0);
    }
    return *this;
}

void StatusTicket::finish() noexcept {
    if (entry_ < 0) return;
    std::lock_guard lock(stream_->mutex);
    ((*stream_).*claims_).queued(entry_);
    entry_ = -1;
}

StatusTicket status_word(const std::shared_ptr<StreamState>& s, const std::string& key,
                         std::function<void(uint64_t)> raise) {
    const int at =
        claim_entry(*s, &StreamState::words, key, [&](StatusClaim& c) { c.raise_word = std::move(raise); });
    return {s, &StreamState::words, at, s->status + offsetof(wf::StatusArea, words) + at * sizeof(wf::u64)};
}

StatusTicket status_fault(const std::shared_ptr<StreamState>& s, const std::string& key,
                          std::function<void(const wf::Error&)> raise) {
    const int at =
        claim_entry(*s, &StreamState::faults, key, [&](StatusClaim& c) { c.raise_fault = std::move(raise); });
    return {s, &StreamState::faults, at,
            s->status + offsetof(wf::StatusArea, faults) + at * sizeof(wf::Error)};
}

void synchronize(StreamState& s) {
    context(s.ordinal);
    // Synchronizing a capturing stream would end its capture with a CUDA error.
    if (capturing(s))
        throw Error(
            "synchronizing a stream cannot be part of a graph: work on this stream of cuda:" +
            std::to_string(s.ordinal) +
            " is being captured, and a graph cannot replay a wait for the GPU. Synchronize before the "
            "capture begins or after Graph::launch (the capture stays open)");
    const ClaimsRead claims = claims_before_waiting(s);
    const CUresult r = require_driver().cuStreamSynchronize(s.stream);
    std::vector<std::string> kernels;
    {
        std::lock_guard lock(s.mutex);
        kernels = s.unsynchronized.take();
    }
    if (r == CUDA_SUCCESS) return read_status(s, claims);
    // The context is lost: what the status area holds can no longer be read.
    {
        std::lock_guard lock(s.mutex);
        s.words.release(claims.words);
        s.faults.release(claims.faults);
    }
    const char* msg = nullptr;
    require_driver().cuGetErrorString(r, &msg);
    std::string names;
    for (const auto& k : kernels) names += (names.empty() ? "'" : ", '") + k + "'";
    throw Error("a GPU operation on cuda:" + std::to_string(s.ordinal) +
                    " failed: " + (msg ? msg : "unknown error") +
                    (names.empty() ? ""
                                   : "; kernels launched since the last synchronization: " + names +
                                         " (run with the module option debug = true to check each launch)"),
                kernels.empty() ? "" : kernels.back());
}

}  // namespace weft::runtime::cuda
