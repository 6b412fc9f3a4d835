// The NCCL engine: one rank per GPU, collectives on the GPU's current stream, each waited for
// with a time-out; host buffers are staged through device memory. Communicators come from
// ncclCommInitAll (one process, several GPUs) or ncclCommInitRank with an id broadcast over MPI.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <weft/distributed.hpp>

#include "distributed/agreement.hpp"
#include "distributed/engine.hpp"
#include "distributed/nccl.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/library_module.hpp"
#include "weft/error.hpp"

namespace weft {

namespace distributed {

namespace {

namespace cu = runtime::cuda;

using StreamQuery = cu::CUresult (*)(cu::CUstream);

}  // namespace

namespace {

class NcclEngine final : public Engine {
public:
    NcclEngine(nccl::ncclComm_t comm, int ordinal, int rank, int size)
        : comm_(comm), ordinal_(ordinal), rank_(rank), size_(size), timeout_(collective_timeout()) {
        query_ = reinterpret_cast<StreamQuery>(cu::driver_symbol("cuStreamQuery", 12000));
    }
    ~NcclEngine() override {
        if (cu::bind_for_release(ordinal_)) nccl::library().ncclCommDestroy(comm_);
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "NCCL"; }

    void max_i32(int32_t* data, size_t n, const char* what) const override {
        staged(data, n * sizeof(int32_t), n, nccl::Int32, nccl::Max, what);
    }
    void max_i64(int64_t* data, size_t n, const char* what) const override {
        staged(data, n * sizeof(int64_t), n, nccl::Int64, nccl::Max, what);
    }
    void sum_i64(int64_t* data, size_t n, const char* what) const override {
        staged(data, n * sizeof(int64_t), n, nccl::Int64, nccl::Sum, what);
    }
    std::string unusable(const AnyArray& array, bool plain) const override {
        if (plain && !(array.device() == Device::cuda(ordinal_) && array.is_contiguous()))
            return "a plain NCCL all-reduce sums a dense array on this rank's GPU (cuda:" +
                   std::to_string(ordinal_) + ") in place, not one on " + array.device().name() +
                   " or a view";
        return {};
    }
    void plain_sum(const AnyArray& array, const char* what) const override {
        int type = 0;
        switch (array.dtype()) {
            case DType::Float16: type = nccl::Float16; break;
            case DType::BFloat16: type = nccl::BFloat16; break;
            case DType::Float32: type = nccl::Float32; break;
            case DType::Float64: type = nccl::Float64; break;
            default:
                throw Error(std::string("a plain all-reduce sums float elements, not ") +
                            dtype_name(array.dtype()));
        }
        const size_t n = static_cast<size_t>(array.size()) * static_cast<size_t>(array.components());
        cu::context(ordinal_);
        const cu::CUstream stream = cu::current_stream(ordinal_)->stream;
        nccl::check(
            nccl::library().ncclAllReduce(array.data(), array.data(), n, type, nccl::Sum, comm_, stream),
            "ncclAllReduce");
        wait(stream, what);
    }
    bool on_device(const AnyArray& array) const override {
        return array.device() == Device::cuda(ordinal_) && array.is_contiguous();
    }
    bool exact_on_device(const AnyArray& array, const char* what) const override;
    void broadcast(void* data, size_t bytes, int root, const char* what) const override {
        with_device_copy(data, bytes, what, [&](void* device, cu::CUstream stream) {
            nccl::check(
                nccl::library().ncclBroadcast(device, device, bytes, /*ncclInt8*/ 0, root, comm_, stream),
                "ncclBroadcast");
        });
    }
    void barrier() const override {
        int64_t one = 1;
        sum_i64(&one, 1, "a barrier");
    }
    std::shared_ptr<Engine> split(int) const override {
        throw Error(
            "an NCCL communicator does not split: split the MPI communicator and create NCCL "
            "communicators over its parts (Communicator::nccl_over)");
    }
    [[noreturn]] void abort(const std::string& message) const override {
        std::fprintf(stderr, "%s\n", message.c_str());
        std::fflush(stderr);
        nccl::library().ncclCommAbort(comm_);
        std::abort();
    }

private:
    template <class F>
    void with_device_copy(void* host, size_t bytes, const char* what, F&& collective) const {
        const cu::Driver& d = cu::require_driver();
        cu::context(ordinal_);
        const cu::CUstream stream = cu::current_stream(ordinal_)->stream;
        cu::CUdeviceptr device = 0;
        cu::check(d.cuMemAllocAsync(&device, bytes == 0 ? 1 : bytes, stream), "cuMemAllocAsync");
        cu::check(d.cuMemcpyHtoDAsync(device, host, bytes, stream), "cuMemcpyHtoDAsync");
        collective(reinterpret_cast<void*>(device), stream);
        cu::check(d.cuMemcpyDtoHAsync(host, device, bytes, stream), "cuMemcpyDtoHAsync");
        cu::check(d.cuMemFreeAsync(device, stream), "cuMemFreeAsync");
        wait(stream, what);
    }
    void staged(void* host, size_t bytes, size_t n, int type, int op, const char* what) const {
        with_device_copy(host, bytes, what, [&](void* device, cu::CUstream stream) {
            nccl::check(nccl::library().ncclAllReduce(device, device, n, type, op, comm_, stream),
                        "ncclAllReduce");
        });
    }
    // Waits for the stream, aborting the job after the time-out (a rank that never arrives).
    void wait(cu::CUstream stream, const char* what) const {
        const cu::Driver& d = cu::require_driver();
        if (!query_) return cu::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
        const auto start = std::chrono::steady_clock::now();
        for (;;) {
            const cu::CUresult r = query_(stream);
            if (r != cu::CUDA_ERROR_NOT_READY) return cu::check(r, "cuStreamQuery");
            const double waited =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (waited > timeout_) abort(timeout_message(*this, what));
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }

    nccl::ncclComm_t comm_;
    int ordinal_;
    int rank_;
    int size_;
    double timeout_;
    StreamQuery query_ = nullptr;
};

// The window kernels (src/device/kernels/distributed_window.cu), for the array's type.
const char* kernel_suffix(DType dtype) {
    switch (dtype) {
        case DType::Float16: return "f16";
        case DType::BFloat16: return "bf16";
        case DType::Float64: return "f64";
        default: return "f32";
    }
}

bool NcclEngine::exact_on_device(const AnyArray& array, const char* what) const {
    const cu::Driver& d = cu::require_driver();
    cu::context(ordinal_);
    const cu::CUstream stream = cu::current_stream(ordinal_)->stream;
    long long n = array.size() * array.components();
    const int lp = size_ <= 1 ? 0 : std::bit_width(static_cast<unsigned>(size_ - 1));
    int k = 63 - lp, width = 125 - 2 * lp;  // as the host protocol (distributed/exact_sum.cpp)
    cu::CUdeviceptr fields = 0, words = 0, outside = 0;
    const size_t count = static_cast<size_t>(n) * 2;
    cu::check(d.cuMemAllocAsync(&fields, count * sizeof(int32_t) + 1, stream), "cuMemAllocAsync");
    cu::check(d.cuMemAllocAsync(&words, count * sizeof(int64_t) + 1, stream), "cuMemAllocAsync");
    cu::check(d.cuMemAllocAsync(&outside, sizeof(unsigned long long), stream), "cuMemAllocAsync");
    cu::check(d.cuMemsetD8Async(outside, 0, sizeof(unsigned long long), stream), "cuMemsetD8Async");
    const auto release = [&] {
        d.cuMemFreeAsync(fields, stream);
        d.cuMemFreeAsync(words, stream);
        d.cuMemFreeAsync(outside, stream);
    };
    const std::string suffix = kernel_suffix(array.dtype());
    const unsigned threads = 256;
    const auto blocks = static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 1 << 16));
    void* data = array.data();
    const auto run = [&](const std::string& name, std::vector<void*> params) {
        cu::launch_library_kernel(ordinal_, cu::LibraryModule::DistributedWindow, name.c_str(),
                                  blocks == 0 ? 1 : blocks, threads, params.data(), name);
    };
    run("dist_agree_" + suffix, {&data, &fields, &n});
    nccl::check(
        nccl::library().ncclAllReduce(reinterpret_cast<void*>(fields), reinterpret_cast<void*>(fields), count,
                                      nccl::Int32, nccl::Max, comm_, stream),
        "ncclAllReduce");
    run("dist_pack_" + suffix, {&data, &fields, &words, &outside, &n, &k, &width});
    unsigned long long outside_count = 0;
    cu::check(d.cuMemcpyDtoHAsync(&outside_count, outside, sizeof(outside_count), stream),
              "cuMemcpyDtoHAsync");
    wait(stream, what);
    if (outside_count != 0) {  // the same on every rank: the fields are agreed
        release();
        wait(stream, what);
        return false;
    }
    nccl::check(nccl::library().ncclAllReduce(reinterpret_cast<void*>(words), reinterpret_cast<void*>(words),
                                              count, nccl::Int64, nccl::Sum, comm_, stream),
                "ncclAllReduce");
    run("dist_round_" + suffix, {&data, &fields, &words, &n, &k});
    release();
    wait(stream, what);
    return true;
}

int cuda_ordinal(Device device, const char* what) {
    if (!device.is_cuda())
        throw Error(std::string(what) + ": NCCL communicators need CUDA devices, not " + device.name());
    if (device.ordinal() >= cu::device_count())
        throw Error(std::string(what) + ": " + device.name() + " does not exist (" +
                    std::to_string(cu::device_count()) + " GPUs)");
    return device.ordinal();
}

}  // namespace

}  // namespace distributed

std::vector<Communicator> Communicator::nccl_all(const std::vector<Device>& devices) {
    const char* what = "weft::Communicator::nccl_all";
    const distributed::nccl::Library& lib = distributed::nccl::library();  // what is missing, first
    if (devices.empty()) throw Error(std::string(what) + ": no devices were given");
    std::vector<int> ordinals;
    for (const Device& d : devices) ordinals.push_back(distributed::cuda_ordinal(d, what));
    for (int o : ordinals) runtime::cuda::context(o);  // the primary contexts NCCL's runtime uses
    std::vector<distributed::nccl::ncclComm_t> comms(ordinals.size());
    distributed::nccl::check(
        lib.ncclCommInitAll(comms.data(), static_cast<int>(ordinals.size()), ordinals.data()),
        "ncclCommInitAll");
    std::vector<Communicator> out;
    for (size_t i = 0; i < comms.size(); ++i)
        out.push_back(Communicator(std::make_shared<distributed::NcclEngine>(
            comms[i], ordinals[i], static_cast<int>(i), static_cast<int>(comms.size()))));
    return out;
}

Communicator Communicator::nccl_over(const Communicator& mpi, Device device) {
    const char* what = "weft::Communicator::nccl_over";
    // Every rank checks NCCL and its GPU before the id's broadcast, so that all fail together.
    std::string problem;
    int ordinal = 0;
    try {
        distributed::nccl::library();
        ordinal = distributed::cuda_ordinal(device, what);
    } catch (const Error& e) {
        problem = e.what();
    }
    distributed::agree(mpi.engine_impl(), what, {}, problem, std::source_location::current());
    const distributed::nccl::Library& lib = distributed::nccl::library();
    distributed::nccl::ncclUniqueId id{};
    if (mpi.rank() == 0) distributed::nccl::check(lib.ncclGetUniqueId(&id), "ncclGetUniqueId");
    mpi.engine_impl().broadcast(&id, sizeof(id), 0, "the NCCL unique id's broadcast");
    runtime::cuda::context(ordinal);
    distributed::nccl::ncclComm_t comm = nullptr;
    distributed::nccl::check(lib.ncclCommInitRank(&comm, mpi.size(), id, mpi.rank()), "ncclCommInitRank");
    return Communicator(std::make_shared<distributed::NcclEngine>(comm, ordinal, mpi.rank(), mpi.size()));
}

}  // namespace weft
