// The layouts and sizes that Weft's own GPU kernels (src/device/kernels/*.cu) share with their
// host side (src/runtime/det/cuda_*.cpp, src/runtime/cuda/scan.cpp), each written once. Not part
// of the prelude that generated modules compile: only the library modules are built with it.
#pragma once

#include "device/abi.h"

namespace wf::kernels {

// A counter span as the slot grouping kernels see it (cuda_slot_bins, cuda_slot_groups): its
// elements' compact keys are first + element; a counter that shares another's span has count 0
// (its reservations carry the owner's id).
struct GroupSpan {
    char* base;
    long long count;
    unsigned long long first;
};
// The span table is published by a kernel, this many spans per launch (a kernel parameter).
constexpr int kSpansPerPublish = 32;
struct SpanChunk {
    GroupSpan spans[kSpansPerPublish];
};

// The prefix sums (cuda/scan.cpp): the three-phase scan's tiles of kThreads * kItems, the
// chained scan's of kChainThreads * kChainItems.
namespace scan {
constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr long long kTile = kThreads * kItems;
constexpr int kChainThreads = kThreads;  // one launch helper runs both with kThreads
constexpr int kChainItems = 8;
constexpr long long kChainTile = kChainThreads * kChainItems;
}  // namespace scan

// Slot allocation's own kernels (det/cuda_slots.cpp): the counters a publish kernel writes.
namespace slots {
constexpr int kCountersPerPublish = 8;
struct CounterChunk {
    SlotCounter counters[kCountersPerPublish];
};
}  // namespace slots

// Slot allocation into at most 65,536 counter elements (det/cuda_slot_bins.cpp).
namespace slot_bins {
constexpr int kThreads = 256;
constexpr int kRounds = 8;  // the partition's items per lane
constexpr long long kTile = kThreads * kRounds;
constexpr int kBins = 256;
// The offsets kernel's items per lane: the most that fit in 64 registers with no spill (four
// blocks an SM), so that buckets of up to 4,608 reservations take two chunks.
constexpr int kChunkRounds = 9;
constexpr long long kChunk = kThreads * kChunkRounds;

// Words every launch finds zero and leaves zero (the totals kernel's last block resets them).
struct Control {
    unsigned chunk_ticket;  // the offsets kernel's chunks, in the order they start
    unsigned totals_done;   // finished blocks of the totals kernel
};

// The partition: per bucket (the key's high byte) and tile of positions, where the tile's run of
// the bucket starts (an exclusive scan of the counts, bucket-major), and the reservations that
// reach an element.
struct Partition {
    const int* bases;
    const int* items;
    long long tiles;
};

// What the offsets kernel walks: partitioned item words and their positions (`bases` set), or
// the counting pass's records in position order.
struct BinInput {
    Partition partition;
    const unsigned* items;
    const unsigned* positions;
    const GroupSpan* spans;
    long long span_count;
};
}  // namespace slot_bins

// Slot allocation into more elements: a radix sort of compact keys (det/cuda_slot_groups.cpp).
namespace slot_groups {
constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr long long kTile = kThreads * kItems;
constexpr int kDigitBits = 8;
constexpr int kBins = 1 << kDigitBits;  // == kThreads: thread d owns digit d
}  // namespace slot_groups

// The deterministic accumulation module (det/cuda_accumulation.cpp: its kernels, the records
// strategy's and the float64 exact resolve).
namespace det {
constexpr int kThreads = 256;
// Records: a segment (a slot's group) longer than kLongRecords is long, summed by many blocks of
// kSumChunk records each.
constexpr int kLongRecords = 8192;
constexpr int kSumChunk = 1024;
// The float64 exact resolve's threads per block (two warps: 34 KB of shared memory).
constexpr int kExactF64Threads = 64;
}  // namespace det

#if defined(__CUDACC__)
// Zeroes `count` words with the whole grid: the publish kernels clear their launch's control and
// scan words this way, so that a launch needs no memset node.
__device__ inline void zero_words(unsigned long long* words, long long count) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        words[i] = 0;
}
#endif

}  // namespace wf::kernels
