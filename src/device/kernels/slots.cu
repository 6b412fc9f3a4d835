// Slot allocation's state publishing kernel, and the probe of whether a capture takes a
// cooperative launch (the host side: src/runtime/det/cuda_slots.cpp).
#include "device/kernels/library.cuh"

using wf::kernels::slots::CounterChunk;

// Publishes the launch's state and zeroes its per-launch words (the status, the total, the count
// of finished blocks, the chained scan's words), so that a launch needs no memset node.
extern "C" __global__ void slots_publish(wf::SlotLaunch* launch, wf::SlotLaunch value,
                                         wf::SlotCounter* counters, int count, CounterChunk chunk,
                                         unsigned long long* zeroed, long long zeroed_words) {
    wf::kernels::zero_words(zeroed, zeroed_words);
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    *launch = value;
    for (int i = 0; i < count; ++i) counters[i] = chunk.counters[i];
}

// Launched cooperatively into a capture of its own, to learn whether captures take such launches.
extern "C" __global__ void slots_probe() {}
