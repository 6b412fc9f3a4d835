// weft::Communicator: collective argument checks, the deterministic and plain all-reduce, the
// exclusive scan, and distributed slot counters, over any engine.
#include <cstring>
#include <limits>
#include <weft/distributed.hpp>

#include "distributed/agreement.hpp"
#include "distributed/exact_sum.hpp"
#include "distributed/mpi_engine.hpp"
#include "weft/error.hpp"

namespace weft {

using distributed::agree;
using distributed::Field;
using distributed::shape_key;

Communicator::Communicator(std::shared_ptr<distributed::Engine> engine) : engine_(std::move(engine)) {}
Communicator::~Communicator() = default;

Communicator Communicator::mpi_world() {
    return Communicator(distributed::mpi_world_engine());
}

int Communicator::rank() const {
    return engine_->rank();
}
int Communicator::size() const {
    return engine_->size();
}
std::string Communicator::engine() const {
    return engine_->name();
}
void Communicator::barrier() const {
    engine_->barrier();
}

std::optional<Communicator> Communicator::split(int color) const {
    std::shared_ptr<distributed::Engine> part = engine_->split(color < 0 ? -1 : color);
    if (!part) return std::nullopt;
    return Communicator(std::move(part));
}

void Communicator::check_same(uint64_t value, const std::string& what, std::source_location s) const {
    agree(*engine_, "weft::Communicator::check_same", {{what.c_str(), value}}, {}, s);
}

void Communicator::allreduce_sum(const AnyArray& array, Reduction reduction, std::source_location s) const {
    std::string problem;
    if (!is_float(array.dtype()) || array.dtype() == DType::Bool)
        problem = std::string(
                      "an all-reduce sums float16, bfloat16, float32 or float64 elements (or composites "
                      "of them), not ") +
                  dtype_name(array.dtype());
    if (problem.empty()) problem = engine_->unusable(array, reduction == Reduction::Plain);
    const uint64_t scalars = static_cast<uint64_t>(array.size()) * static_cast<uint64_t>(array.components());
    const bool on_device = problem.empty() && engine_->on_device(array);
    agree(*engine_, "weft::Communicator::allreduce_sum",
          {{"reductions (Deterministic or Plain)", static_cast<uint64_t>(reduction)},
           {"array placements (on the rank's GPU, or elsewhere)", on_device ? 1u : 0u},
           {"element types", static_cast<uint64_t>(array.dtype())},
           {"component counts", static_cast<uint64_t>(array.components())},
           {"element counts", static_cast<uint64_t>(array.size())},
           {"shapes (each rank's array must have the same extents)", shape_key(array.shape())}},
          problem, s);
    if (reduction == Reduction::Plain) return engine_->plain_sum(array, "a plain all-reduce");
    if (on_device && engine_->exact_on_device(array, "a deterministic all-reduce on the device")) return;
    // The exact sum works on the host (staged through a copy for a GPU array or a view).
    const size_t bytes = scalars * dtype_size(array.dtype());
    const bool direct = array.device().is_cpu() && array.is_contiguous();
    std::vector<unsigned char> staged;
    void* host = array.data();
    if (!direct) {
        staged.resize(bytes);
        array.copy_to_host(staged.data(), bytes);
        host = staged.data();
    }
    distributed::exact_allreduce(*engine_, array.dtype(), host, scalars);
    if (!direct) {
        AnyArray handle = array;  // (a handle: the copy writes the same memory)
        handle.copy_from_host(staged.data(), bytes);
    }
}

std::vector<int64_t> Communicator::exclusive_scan(std::span<const int64_t> values,
                                                  std::source_location s) const {
    agree(*engine_, "weft::Communicator::exclusive_scan", {{"value counts", values.size()}}, {}, s);
    // Every rank's values in its row of one matrix, summed: small counts (counters), one collective.
    const size_t n = values.size();
    std::vector<int64_t> rows(n * static_cast<size_t>(size()), 0);
    std::copy(values.begin(), values.end(), rows.begin() + static_cast<std::ptrdiff_t>(n * rank()));
    engine_->sum_i64(rows.data(), rows.size(), "an exclusive scan");
    std::vector<int64_t> before(n, 0);
    for (int r = 0; r < rank(); ++r)
        for (size_t j = 0; j < n; ++j) before[j] += rows[static_cast<size_t>(r) * n + j];
    return before;
}

std::vector<int64_t> combine_slot_counters(const Communicator& communicator,
                                           const DeviceArray<int32_t>& counter,
                                           std::span<const int32_t> initial, std::source_location s) {
    const distributed::Engine& engine = communicator.engine_impl();
    std::string problem;
    if (initial.size() != static_cast<size_t>(counter.size()))
        problem = "the counter has " + std::to_string(counter.size()) + " elements but " +
                  std::to_string(initial.size()) + " initial values were given";
    agree(engine, "weft::combine_slot_counters",
          {{"counter sizes", static_cast<uint64_t>(counter.size())},
           {"initial counter values", distributed::content_hash(initial.data(), initial.size_bytes())}},
          problem, s);
    const std::vector<int32_t> now = counter.to_vector();
    std::vector<int64_t> taken(now.size());
    for (size_t e = 0; e < now.size(); ++e) taken[e] = int64_t{now[e]} - initial[e];
    const std::vector<int64_t> before = communicator.exclusive_scan(taken, s);
    std::vector<int64_t> total = taken;
    engine.sum_i64(total.data(), total.size(), "the totals of distributed slot counters");
    std::vector<int32_t> after(now.size());
    for (size_t e = 0; e < now.size(); ++e) {
        const int64_t v = initial[e] + total[e];
        if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min())
            throw Error("weft::combine_slot_counters: counter element " + std::to_string(e) +
                            " would reach " + std::to_string(v) +
                            ", past int32; the ranks allocated more slots than it can count",
                        {}, s.file_name(), s.line());
        after[e] = static_cast<int32_t>(v);
    }
    AnyArray handle = counter;
    handle.copy_from_host(after.data(), after.size() * sizeof(int32_t));
    return before;
}

}  // namespace weft
