// Device contexts and streams.
#include "runtime/cuda/context.hpp"

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
    c->default_stream = std::make_shared<StreamState>();
    c->default_stream->ordinal = ordinal;
    check(d.cuStreamCreate(&c->default_stream->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return c;
}

}  // namespace

StreamState::~StreamState() {
    // Destroying a stream lets its queued work finish first.
    if (stream && bind_for_release(ordinal)) driver()->cuStreamDestroy(stream);
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
    auto s = std::make_shared<StreamState>();
    s->ordinal = ordinal;
    check(require_driver().cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return s;
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

void after_synchronize(StreamState& s, std::function<void()> check) {
    std::lock_guard lock(s.mutex);
    s.checks.push_back(std::move(check));
}

void synchronize(StreamState& s) {
    context(s.ordinal);
    const CUresult r = require_driver().cuStreamSynchronize(s.stream);
    std::vector<std::string> kernels;
    std::vector<std::function<void()>> checks;
    {
        std::lock_guard lock(s.mutex);
        kernels.swap(s.unsynchronized);
        checks.swap(s.checks);
    }
    if (r == CUDA_SUCCESS) {
        // Every check runs; the first failure is reported.
        std::exception_ptr first;
        for (const auto& check : checks) {
            try {
                check();
            } catch (...) {
                if (!first) first = std::current_exception();
            }
        }
        if (first) std::rethrow_exception(first);
        return;
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
