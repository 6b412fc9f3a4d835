// Rank 1 fails before a collective and carries on without it (it catches its exception and goes
// on to other work, here a sleep); rank 0 waits in a deterministic all-reduce. Run by ctest under mpirun with
// 2 ranks, which expects the job to end with the time-out's message rather than hang.
#include <chrono>
#include <cstdio>
#include <thread>
#include <weft/distributed.hpp>

int main() {
    const weft::Communicator comm = weft::Communicator::mpi_world();
    auto values = weft::ones<float>(16, weft::Device::cpu());
    try {
        if (comm.rank() == 1) throw weft::Error("rank 1 failed before its all-reduce");
        comm.allreduce_sum(values);
    } catch (const weft::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        std::this_thread::sleep_for(std::chrono::seconds(90));
        return 1;
    }
    return 0;
}
