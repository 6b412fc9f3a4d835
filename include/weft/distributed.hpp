// Beyond one device: a communicator over MPI or NCCL, deterministic all-reduce, distributed
// deterministic accumulation and slot allocation (library weft_distributed, docs/design/0028).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "weft/device.hpp"
#include "weft/device_array.hpp"
#include "weft/error.hpp"

namespace weft {

namespace distributed {
class Engine;
}

/// How an all-reduce adds: Deterministic gives the correctly rounded exact sum of the ranks'
/// values, the same bits for every number of ranks, every rank order and every engine; Plain is
/// the engine's own floating-point all-reduce (its order, and so its bits, depend on the number
/// of ranks and the algorithm).
enum class Reduction {
    Deterministic,  ///< The correctly rounded exact sum: the same bits however the ranks are split.
    Plain           ///< The engine's own floating-point all-reduce.
};

/// A group of ranks that reduce together. Every member function is collective: every rank of the
/// communicator calls it, in the same order, with arrays of the same shape and element type (a
/// mismatch, or an argument one rank cannot use, is the same weft::Error on every rank: each call
/// first checks its arguments collectively). A rank that fails elsewhere and stops taking part must
/// not leave the others hanging: a collective that waits longer than WEFT_DIST_TIMEOUT seconds
/// (default 300) aborts the whole job with a message naming the rank and the operation
/// (MPI_Abort; under NCCL ncclCommAbort, then abort()).
class Communicator {
public:
    /// The processes of MPI_COMM_WORLD (MPI is initialised on first use and finalised at exit), one
    /// rank per process. A weft::Error in a build configured without MPI (install libopenmpi-dev and
    /// reconfigure), or when run outside mpirun with no MPI runtime.
    static Communicator mpi_world();
    /// One NCCL communicator per GPU in `devices` (each a CUDA device), created in this process with
    /// ncclCommInitAll: element i is rank i. Each communicator's collectives are called from a host
    /// thread of its own, as with NCCL itself. NCCL is loaded at run time (libnccl.so.2: WEFT_NCCL,
    /// the dynamic loader's path, the CUDA toolkit, the NVIDIA Python wheels' nvidia/nccl/lib); a
    /// weft::Error says where it was looked for when it is absent.
    static std::vector<Communicator> nccl_all(const std::vector<Device>& devices);
    /// An NCCL communicator over the ranks of `mpi` (one GPU each, `device`), its unique id
    /// broadcast over MPI.
    static Communicator nccl_over(const Communicator& mpi, Device device);

    /// Copies are handles to the one communicator (they share its engine).
    Communicator(const Communicator&) = default;
    /// Makes this a handle to other's communicator.
    Communicator& operator=(const Communicator&) = default;
    /// The communicator is released with its last handle.
    ~Communicator();

    /// This process's rank in the communicator, 0 to size() - 1.
    int rank() const;
    /// The number of ranks.
    int size() const;
    /// "MPI" or "NCCL".
    std::string engine() const;

    /// Replaces every element of `array` (float16, bfloat16, float32 or float64 scalars, or
    /// composites of them such as weft::vec3: each component on its own) by its sum over the ranks.
    /// Deterministic: the correctly rounded exact sum, as a deterministic accumulation of every
    /// rank's value into a zeroed target on one device gives it (docs/design/0008: an exact zero is
    /// +0.0, NaN and infinities as there). Any device: under MPI a GPU array or a view is staged
    /// through host memory; under NCCL a dense array on the rank's GPU is summed there (elements
    /// whose values span more than 2^120 or so, infinities and NaNs take a host fallback). Plain:
    /// the engine's own sum of a dense array in place (MPI: on the CPU; NCCL: on the rank's GPU).
    void allreduce_sum(const AnyArray& array, Reduction reduction = Reduction::Deterministic,
                       std::source_location s = std::source_location::current()) const;
    /// The sum of `values` over the ranks before this one, element by element (0 on rank 0).
    std::vector<int64_t> exclusive_scan(std::span<const int64_t> values,
                                        std::source_location s = std::source_location::current()) const;
    /// Throws the same weft::Error on every rank unless every rank passed the same `value`;
    /// `what` names it in the message.
    void check_same(uint64_t value, const std::string& what,
                    std::source_location s = std::source_location::current()) const;
    /// Collective: returns on each rank once every rank has called it.
    void barrier() const;
    /// Collective: the ranks passing the same `color` (0 or more) form a communicator of their own,
    /// ranked in this one's order; a rank passing -1 gets none. MPI communicators only.
    std::optional<Communicator> split(int color) const;

    /// The engine behind the communicator (for Weft's own distributed code, not a stable interface).
    const distributed::Engine& engine_impl() const { return *engine_; }

private:
    explicit Communicator(std::shared_ptr<distributed::Engine> engine);
    std::shared_ptr<distributed::Engine> engine_;
};

/// Distributed deterministic accumulation. While it lives, deterministic launches on this host
/// thread that accumulate (atomic_add / atomic_sub, gradients of a tape's backward included) into
/// one of `targets` keep their exact sums instead of rounding them into the array; reduce() adds
/// the exact sums of every rank and of every such launch, adds each element's value (which must be
/// the same on every rank) and rounds once. The result is the same bits for every number of ranks
/// and every split of the contributions among them, and equals one device making every
/// contribution in one launch. Until reduce() the targets keep their values: a launch inside the
/// scope that reads them reads those. Launches into other arrays resolve as usual. Each target is
/// a whole dense array (not a view) of float16, bfloat16, float32 or float64 scalars or
/// composites, on the CPU; sums only (min/max targets are a weft::Error).
class DistributedSum {
public:
    /// Opens the scope on this host thread: weft::Error, naming the caller's line, for a target that is
    /// not as above, two targets sharing memory, or another DistributedSum active on this thread.
    DistributedSum(const Communicator& communicator, std::vector<AnyArray> targets,
                   std::source_location s = std::source_location::current());
    DistributedSum(const DistributedSum&) = delete;
    DistributedSum& operator=(const DistributedSum&) = delete;
    /// Without reduce(), the targets keep their values and the kept sums are dropped.
    ~DistributedSum();
    /// Collective: combines the kept sums over the ranks and writes the targets; the scope stays
    /// active, its sums start again from zero.
    void reduce(std::source_location s = std::source_location::current());

    struct State;

private:
    std::unique_ptr<State> state_;
};

/// Distributed slot allocation: ranks own contiguous ranges of the global threads, in rank order,
/// and each allocated slots from `counter` (an int32 counter array, holding `initial` on every
/// rank before the launch) with a deterministic launch over its own threads. Returns, per counter
/// element, the slots that earlier ranks allocated: adding it to a rank's slots gives the slots one
/// device running every thread would have given. Sets `counter` on every rank to what that device
/// would leave in it.
std::vector<int64_t> combine_slot_counters(const Communicator& communicator,
                                           const DeviceArray<int32_t>& counter,
                                           std::span<const int32_t> initial,
                                           std::source_location s = std::source_location::current());

}  // namespace weft
