// Device contexts and streams.
#include "runtime/cuda/context.hpp"

#include <cstddef>
#include <exception>
#include <map>

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

// Frees the claims of `read` not made during a capture.
void release(StreamState& s, const std::vector<StatusClaim>& read, StatusClaims StreamState::*claims) {
    std::lock_guard lock(s.mutex);
    (s.*claims).release(read);
}

// A copy of the stream's `claims`.
std::vector<StatusClaim> claimed(StreamState& s, StatusClaims StreamState::*claims) {
    std::lock_guard lock(s.mutex);
    return (s.*claims).claimed();
}

// Reads the claimed entries of the status area (after a successful synchronization), zeroes the
// ones that hold a failure, releases the claims that were not captured, and throws the first
// failure.
void read_status(StreamState& s) {
    const std::vector<StatusClaim> words = claimed(s, &StreamState::words);
    const std::vector<StatusClaim> faults = claimed(s, &StreamState::faults);
    if (words.empty() && faults.empty()) return;
    const Driver& d = require_driver();
    const CUdeviceptr area = s.status;
    std::vector<wf::u64> word_values(words.size());
    std::vector<wf::Error> fault_values(faults.size());
    if (!words.empty())
        check(d.cuMemcpyDtoHAsync(word_values.data(), area + offsetof(wf::StatusArea, words),
                                  word_values.size() * sizeof(wf::u64), s.stream),
              "reading a stream's status words");
    if (!faults.empty())
        check(d.cuMemcpyDtoHAsync(fault_values.data(), area + offsetof(wf::StatusArea, faults),
                                  fault_values.size() * sizeof(wf::Error), s.stream),
              "reading a stream's fault records");
    check(d.cuStreamSynchronize(s.stream), "reading a stream's status area");
    // Every entry is read and zeroed; the first failure is reported.
    std::exception_ptr first;
    const auto raise = [&](const auto& call) {
        try {
            call();
        } catch (...) {
            if (!first) first = std::current_exception();
        }
    };
    for (size_t i = 0; i < words.size(); ++i) {
        if (word_values[i] == 0) continue;
        check(d.cuMemsetD8Async(area + offsetof(wf::StatusArea, words) + i * sizeof(wf::u64), 0,
                                sizeof(wf::u64), s.stream),
              "zeroing a status word");
        if (words[i].raise_word) raise([&] { words[i].raise_word(word_values[i]); });
    }
    for (size_t i = 0; i < faults.size(); ++i) {
        if (fault_values[i].code == 0) continue;
        check(d.cuMemsetD8Async(area + offsetof(wf::StatusArea, faults) + i * sizeof(wf::Error), 0,
                                sizeof(wf::Error), s.stream),
              "zeroing a fault record");
        if (faults[i].raise_fault) raise([&] { faults[i].raise_fault(fault_values[i]); });
    }
    release(s, words, &StreamState::words);
    release(s, faults, &StreamState::faults);
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

void note_launch(StreamState& s, const std::string& kernel) {
    std::lock_guard lock(s.mutex);
    // Bounded: the most recent launches are the likely culprits.
    if (s.unsynchronized.size() >= 16) s.unsynchronized.erase(s.unsynchronized.begin());
    s.unsynchronized.push_back(kernel);
}

bool capturing(const StreamState& s) {
    int status = 0;
    check(require_driver().cuStreamIsCapturing(s.stream, &status), "cuStreamIsCapturing");
    return status != 0;
}

wf::u64* status_word(StreamState& s, const std::string& key, std::function<void(uint64_t)> raise) {
    const int at =
        claim_entry(s, &StreamState::words, key, [&](StatusClaim& c) { c.raise_word = std::move(raise); });
    return reinterpret_cast<wf::u64*>(s.status + offsetof(wf::StatusArea, words) + at * sizeof(wf::u64));
}

wf::Error* status_fault(StreamState& s, const std::string& key, std::function<void(const wf::Error&)> raise) {
    const int at =
        claim_entry(s, &StreamState::faults, key, [&](StatusClaim& c) { c.raise_fault = std::move(raise); });
    return reinterpret_cast<wf::Error*>(s.status + offsetof(wf::StatusArea, faults) + at * sizeof(wf::Error));
}

void synchronize(StreamState& s) {
    context(s.ordinal);
    const CUresult r = require_driver().cuStreamSynchronize(s.stream);
    std::vector<std::string> kernels;
    {
        std::lock_guard lock(s.mutex);
        kernels.swap(s.unsynchronized);
    }
    if (r == CUDA_SUCCESS) return read_status(s);
    // The context is lost: what the status area holds can no longer be read.
    release(s, claimed(s, &StreamState::words), &StreamState::words);
    release(s, claimed(s, &StreamState::faults), &StreamState::faults);
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
