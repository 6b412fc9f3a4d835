// Deterministic against plain all-reduce of 1M and 16M float32: over MPI on the CPU (one rank per
// process: mpirun -np K weft_allreduce_bench), and over NCCL on 1, 2 and 4 GPUs of this machine
// (one process, a host thread per GPU), each where it is available. Prints medians, the ratio and
// the bytes each element moves through the engine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>
#include <weft/distributed.hpp>
#include <weft/weft.hpp>

#include "distributed/exact_sum.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<float> data(int64_t n, int rank) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] = 1.0f / static_cast<float>(1 + (i + rank) % 977);
    return v;
}

void print_row(const char* engine, int ranks, int64_t n, double plain, double det) {
    std::printf("%-5s %5d %10lld %12.3f %12.3f %8.2fx %10d %10zu\n", engine, ranks, static_cast<long long>(n),
                plain * 1e3, det * 1e3, det / plain, 4, weft::distributed::window_bytes_per_element());
}

void header() {
    std::printf("%-5s %5s %10s %12s %12s %9s %10s %10s\n", "", "ranks", "elements", "plain ms", "exact ms",
                "ratio", "plain B/el", "exact B/el");
}

// The MPI rows; returns the number of ranks (0 without MPI).
int mpi_rows() {
    std::optional<weft::Communicator> maybe;
    try {
        maybe = weft::Communicator::mpi_world();
    } catch (const weft::Error& e) {
        std::printf("MPI rows skipped: %s\n", e.what());
        return 0;
    }
    const weft::Communicator& world = *maybe;
    if (world.rank() == 0) header();
    for (int64_t n : {int64_t{1} << 20, int64_t{1} << 24}) {
        const int repeats = n > (1 << 20) ? 5 : 9;
        auto a = weft::from_vector(data(n, world.rank()), weft::Device::cpu());
        double t[2];
        for (int det = 0; det < 2; ++det) {
            std::vector<double> times;
            for (int r = 0; r < repeats; ++r) {
                a.copy_from_host(data(n, world.rank()).data(), static_cast<size_t>(n));
                world.barrier();
                const auto start = std::chrono::steady_clock::now();
                world.allreduce_sum(a, det ? weft::Reduction::Deterministic : weft::Reduction::Plain);
                times.push_back(seconds_since(start));
            }
            t[det] = median(times);
        }
        if (world.rank() == 0) print_row("MPI", world.size(), n, t[0], t[1]);
    }
    return world.size();
}

void nccl_rows() {
    std::vector<weft::Device> gpus;
    for (const weft::Device& d : weft::devices())
        if (d.is_cuda()) gpus.push_back(d);
    if (gpus.empty()) {
        std::printf("NCCL rows skipped: no GPU\n");
        return;
    }
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // no NVLink multicast on GPUs shared with others
    header();
    // One GPU moves nothing between GPUs: its row is the cost of the exact form's kernels and
    // NCCL's local reductions, the floor under the rows of several GPUs.
    for (size_t count : {size_t{1}, size_t{2}, size_t{4}}) {
        if (count > gpus.size()) continue;
        const std::vector<weft::Device> used(gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(count));
        std::vector<weft::Communicator> comms = weft::Communicator::nccl_all(used);
        for (int64_t n : {int64_t{1} << 20, int64_t{1} << 24}) {
            std::vector<weft::DeviceArray<float>> arrays;
            for (size_t g = 0; g < count; ++g)
                arrays.push_back(weft::from_vector(data(n, static_cast<int>(g)), used[g]));
            double t[2];
            for (int det = 0; det < 2; ++det) {
                std::vector<double> times;
                for (int r = 0; r < 7; ++r) {
                    const auto start = std::chrono::steady_clock::now();
                    std::vector<std::thread> threads;
                    for (size_t g = 0; g < count; ++g)
                        threads.emplace_back([&, g] {
                            comms[g].allreduce_sum(
                                arrays[g], det ? weft::Reduction::Deterministic : weft::Reduction::Plain);
                        });
                    for (auto& th : threads) th.join();
                    times.push_back(seconds_since(start));
                }
                t[det] = median(times);
            }
            print_row("NCCL", static_cast<int>(count), n, t[0], t[1]);
        }
    }
}

}  // namespace

int main() {
    std::printf(
        "deterministic (exact) against plain float32 all-reduce; exact B/el: the exponent window's "
        "two int32 and the sum's two int64 (elements outside the window move their full digits too)\n");
    // NCCL rows from a single process only (under mpirun every rank would run them).
    if (mpi_rows() > 1) return 0;
    try {
        nccl_rows();
    } catch (const weft::Error& e) {
        std::printf("NCCL rows failed: %s\n", e.what());
        return 1;
    }
    return 0;
}
