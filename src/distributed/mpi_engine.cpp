// The MPI engine: collectives on host buffers over MPI_COMM_WORLD, each waited for with a
// time-out (non-blocking collectives polled), so that a rank that never arrives aborts the job.
#include "distributed/mpi_engine.hpp"

#include "weft/error.hpp"

#if WEFT_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "weft/half.hpp"

namespace weft::distributed {

namespace {

void finalize_at_exit() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

class MpiEngine final : public Engine {
public:
    // `owned`: a communicator of its own (from a split), freed with the engine.
    explicit MpiEngine(MPI_Comm comm, bool owned = false)
        : comm_(comm), owned_(owned), timeout_(collective_timeout()) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    ~MpiEngine() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (owned_ && !finalized) MPI_Comm_free(&comm_);
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "MPI"; }

    void max_i32(int32_t* data, size_t n, const char* what) const override {
        allreduce(data, n, MPI_INT32_T, sizeof(int32_t), MPI_MAX, what);
    }
    void max_i64(int64_t* data, size_t n, const char* what) const override {
        allreduce(data, n, MPI_INT64_T, sizeof(int64_t), MPI_MAX, what);
    }
    void sum_i64(int64_t* data, size_t n, const char* what) const override {
        allreduce(data, n, MPI_INT64_T, sizeof(int64_t), MPI_SUM, what);
    }
    std::string unusable(const AnyArray& array, bool plain) const override {
        if (plain && !(array.device().is_cpu() && array.is_contiguous()))
            return "a plain MPI all-reduce sums a dense CPU array in place; copy " + array.device().name() +
                   " arrays or views to one first (the deterministic all-reduce stages them itself)";
        return {};
    }
    void plain_sum(const AnyArray& array, const char* what) const override {
        const size_t n = static_cast<size_t>(array.size()) * static_cast<size_t>(array.components());
        void* data = array.data();
        switch (array.dtype()) {
            case DType::Float32: return allreduce(data, n, MPI_FLOAT, sizeof(float), MPI_SUM, what);
            case DType::Float64: return allreduce(data, n, MPI_DOUBLE, sizeof(double), MPI_SUM, what);
            case DType::Float16:
            case DType::BFloat16: {
                // MPI has no half types: summed as float32 and rounded once at the end.
                std::vector<float> wide(n);
                const bool bf = array.dtype() == DType::BFloat16;
                for (size_t i = 0; i < n; ++i)
                    wide[i] = bf ? static_cast<float>(static_cast<const bfloat16*>(data)[i])
                                 : static_cast<float>(static_cast<const float16*>(data)[i]);
                allreduce(wide.data(), n, MPI_FLOAT, sizeof(float), MPI_SUM, what);
                for (size_t i = 0; i < n; ++i) {
                    if (bf)
                        static_cast<bfloat16*>(data)[i] = bfloat16(static_cast<double>(wide[i]));
                    else
                        static_cast<float16*>(data)[i] = float16(static_cast<double>(wide[i]));
                }
                return;
            }
            default:
                throw Error(std::string("a plain all-reduce sums float elements, not ") +
                            dtype_name(array.dtype()));
        }
    }
    void broadcast(void* data, size_t bytes, int root, const char* what) const override {
        MPI_Request request;
        MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_, &request);
        wait(request, what);
    }
    void barrier() const override {
        MPI_Request request;
        MPI_Ibarrier(comm_, &request);
        wait(request, "a barrier");
    }
    std::shared_ptr<Engine> split(int color) const override {
        MPI_Comm part = MPI_COMM_NULL;
        MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, rank_, &part);
        if (part == MPI_COMM_NULL) return nullptr;
        return std::make_shared<MpiEngine>(part, true);
    }
    [[noreturn]] void abort(const std::string& message) const override {
        std::fprintf(stderr, "%s\n", message.c_str());
        std::fflush(stderr);
        MPI_Abort(comm_, 1);
        std::abort();
    }

private:
    // MPI counts are ints: large buffers go in pieces.
    void allreduce(void* data, size_t n, MPI_Datatype type, size_t size, MPI_Op op, const char* what) const {
        constexpr size_t kPiece = size_t{1} << 30;
        for (size_t at = 0; at < n || (n == 0 && at == 0); at += kPiece) {
            const size_t count = n - at < kPiece ? n - at : kPiece;
            MPI_Request request;
            MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + at * size, static_cast<int>(count), type,
                           op, comm_, &request);
            wait(request, what);
            if (n == 0) break;
        }
    }
    // Polls, yielding the core between tests: Open MPI advances a non-blocking collective only
    // inside MPI calls, so sleeping between tests starves it (1M float32 over 2 ranks took 10x
    // longer with 50 us sleeps), while a bare spin takes the core from the other ranks of an
    // oversubscribed machine. The clock is read every 1024 polls.
    void wait(MPI_Request& request, const char* what) const {
        const auto start = std::chrono::steady_clock::now();
        for (unsigned polls = 1;; ++polls) {
            int done = 0;
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
            if (done) return;
            std::this_thread::yield();
            if (polls % 1024 != 0) continue;
            const double waited =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (waited > timeout_) abort(timeout_message(*this, what));
        }
    }

    MPI_Comm comm_;
    bool owned_;
    int rank_ = 0;
    int size_ = 1;
    double timeout_;
};

}  // namespace

std::shared_ptr<Engine> mpi_world_engine() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            throw Error(
                "weft::Communicator::mpi_world: MPI_Init_thread failed (run the program with mpirun)");
        std::atexit(finalize_at_exit);
    }
    static const std::shared_ptr<Engine> world = std::make_shared<MpiEngine>(MPI_COMM_WORLD);
    return world;
}

}  // namespace weft::distributed

#else

namespace weft::distributed {

std::shared_ptr<Engine> mpi_world_engine() {
    throw Error(
        "weft::Communicator::mpi_world: this Weft was built without MPI (CMake found no MPI when it "
        "configured weft_distributed). Install Open MPI (Debian: apt-get install libopenmpi-dev "
        "openmpi-bin) and configure the build again; NCCL communicators (Communicator::nccl_all) need no "
        "MPI");
}

}  // namespace weft::distributed

#endif
