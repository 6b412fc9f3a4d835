// The launch ABI: every structure the host writes and a kernel reads (or the other way), in one
// place. Plain structs of fixed-width fields, included by the generated code (through the
// prelude), the library kernels and the host side alike, so that no layout is written twice.
#pragma once

namespace wf {

using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;
using u8 = unsigned char;
static_assert(sizeof(i64) == 8 && sizeof(u32) == 4 && sizeof(void*) == 8, "unexpected widths");

struct DetTarget;

// An array argument: element 0's address, extents, strides in bytes (dimensions past the
// array's own have extent 1 and stride 0), and for a deterministic accumulation target or a
// slot-allocation counter the state its atomics go to (null otherwise; views of the array share
// it). A kernel's argument list points at one of these per array and at the value per scalar.
struct ArrayDescriptor {
    char* data;
    i64 shape[4];
    i64 strides[4];
    DetTarget* det;  // a SlotCounter* for a slot-allocation counter
};

// The first error of a launch; `code` is 0 while there is none.
struct Error {
    i32 code;  // 1: index out of bounds
    i32 site;  // which array access (the runtime keeps the table of sites)
    i32 dim;
    i32 pad;
    i64 index;
    i64 extent;
};

// A launch whose kernel resolves its deterministic sums itself (src/device/grid.h): after its
// threads' loop, the blocks of its grid (all resident at once: a cooperative launch) meet at a
// barrier and resolve the targets' slots. Target i of the kernel's plan resolves into its array
// when targets[i] is set (null: another target owns its state, or the runtime resolves it).
constexpr int kResolveTargets = 4;
struct InKernelResolve {
    DetTarget* targets[kResolveTargets];
    u32* barrier;  // the grid barrier's word (0 before the first use); null: no resolve in the kernel
    i64 slots;     // the most slots of one target: the grid covers them (launches of few threads)
};

// A launch that runs a slot-allocating kernel's two passes in one kernel, its fused entry
// (src/device/slots.h: one counter element, one tile of blockDim threads per block, all blocks
// resident at once: a cooperative launch). The words lie in the launch's slot state, zeroed with
// it and set back to 0 by every launch's last block, so that they serve the next launch as they are.
struct FusedSlots {
    u64* totals;    // per block: its counting phase's total and overflow, 0 until published
    u64* groups;    // per group of 32 blocks (grids past 256 blocks): their total and overflow
    u64* finished;  // blocks finished (low half) and how many of them diverged (high half)
    i32* single;    // the counter element, advanced by the launch's total by its last block
    u64* report;    // the stream's status word: kSlotsOverflow, kSlotsTooMany, kSlotsDiverged
};

// What every kernel entry receives besides its arguments.
struct Launch {
    i64 dims[4];
    i64 total;
    i32 ndim;
    // CPU: the launch runs as one chunk and no other launch updates its atomics' targets
    // meanwhile, so an atomic may be a plain load and store (wf::atomic); 0 on a GPU.
    i32 serial;
    Error* error;  // null unless bounds checking is on
    InKernelResolve resolve;
    FusedSlots slots;  // a fused slot entry's state (null words for every other entry)
};

// A slot of the compact strategy (src/device/deterministic.h): a window of the exact sum in
// units of 2^anchor, and the slot's anchor, special-value flags and spill state.
struct alignas(16) CompactCell {  // 16-byte aligned: one vector load, one 128-bit atomic
    i64 window;
    u32 meta;
    u32 unused;  // keeps cells 16-byte aligned, a cell within one memory sector
};
constexpr int kSpillWords = 7;  // a compact slot's spill block: 48-bit digits in 64-bit words
// A slot without a kept anchor. Above every anchor (at most 253 - 8 for float32), so that a
// contribution's shift from it is always negative: the window test alone sends it elsewhere.
constexpr u8 kNoAnchor = 255;
// Record cursors of a regioned records target: at most kMaxRegions, kCursorStride words (128
// bytes) apart so that each has its own cache line.
constexpr int kMaxRegions = 64;
constexpr int kCursorStride = 16;

// What a deterministic target's atomics write to; built by the runtime for each launch.
constexpr int kTouchedShift = 6;  // DetTarget::touched: a word per block of 64 slots
struct DetTarget {
    char* base;  // the address of slot 0's element (the lowest element of the argument)
    i64 count;   // slots
    // How an element's address gives its slot: with dims == 0, one slot per element address
    // from `base`; else the element's index along `dims` dimensions of the given byte strides
    // (largest first, each larger than the reach of the ones after it) and extents, row-major.
    i32 dims;
    i32 carrying;  // exact sums: carry words into the next (the launch may overflow a word)
    i64 stride[4];
    i64 extent[4];
    double inverse[4];  // 1 / stride, rounded: the division becomes a multiplication
    i64* words;         // exact sums: count * words_per_slot digits, slot-major; min/max: count keys
    u32* flags;         // exact sums: one per slot
    // The records strategy (sums): each contribution is appended as (slot, value bits) and
    // reduced per slot after the kernel. Null `records` selects the exact strategy.
    u64* records;
    u32* record_slots;
    // Records appended, including any beyond `capacity` (an overflow); for exact sums that
    // carry, the runtime's count of slots whose top word overflowed.
    u64* cursor;
    i64 capacity;
    // Records on a GPU, where the runtime has proven each thread's bound: `regions` > 1 splits
    // the launch's threads into runs of 2^region_shift (thread i appends to region
    // i >> region_shift), each with its own cursor (cursor[region * kCursorStride]) and its own
    // `region_records` records from region * region_records (the last region ends at
    // `capacity`), so that a hot target's warps do not all take positions from one word.
    i32 regions;  // 0 or 1: one cursor for the whole capacity
    i32 region_shift;
    i64 region_records;
    // The compact strategy (float32, float16 and bfloat16 sums): one cell per slot, and per slot
    // a spill block of kSpillWords words, zeroed when the slot first spills. Null `cells`
    // selects another strategy.
    CompactCell* cells;
    i64* spill;
    // Compact targets whose state serves several launches: each slot's anchor kept from the
    // launches before (kNoAnchor: none), written only between launches, so that a contribution
    // reads it through the read-only cache (docs/design/0025). Null: no anchor is kept (on a
    // GPU, also until a resolve kernel has first written the array).
    u8* anchors;
    // CPU sums (null on a GPU, and for records and min/max): the blocks of kTouchedBlock slots
    // the launch reached, so that the resolve visits those alone (a launch adding into 10
    // elements of a 16M-element target resolved all 16M). A block's first contribution sets its
    // `touched` word and appends the block to `touched_blocks` at `*touched_count`; the resolve
    // clears both for the next launch. (A mark per block, not per slot: the marks of a
    // 262,144-element target stay in the first-level cache, and a dense launch appends little.
    // A word, not a byte: a byte's store may alias every field of this state, which the thread
    // loop then loaded again after each contribution.)
    u32* touched;
    i64* touched_blocks;
    u64* touched_count;
    // CPU compact sums (null on a GPU): one float64 per slot and worker that the worker adds its
    // contributions to while the float64 sum stays exact (docs/design/0034); a contribution it
    // could not hold exactly goes to the slot's cell. Worker w < sum_copies adds to
    // sums[w * count + slot] (Ctx::worker: no other thread uses its copy meanwhile); a worker
    // beyond them, to the cells alone. The resolve adds them all and zeroes them.
    double* sums;
    i32 sum_copies;
    // CPU compact sums: per block of 2^kTouchedShift slots, nonzero where a contribution of the
    // launch reached a cell rather than a float64 sum; the resolve reads the cells of those
    // blocks alone (the others hold what the last resolve left) and clears the marks.
    u32* cells_used;
};

// Deterministic slot allocation: one launch's reservation state.
struct SlotLaunch {
    u64* keys;       // per reservation: (counter << 40) | element (null where `blocks` is set)
    i32* counts;     // per reservation: the number of slots asked for (0 where none)
    i32* offsets;    // per reservation: its first slot minus the counter's value before the launch
                     // (null where `blocks` is set: the execution pass puts the slot in Ctx::slot)
    i32* reserved;   // per thread: reservations made in the counting pass
    i64 per_thread;  // reservation positions per thread
    u32* status;     // kSlotsOverflow, kSlotsDiverged, kSlotsTooMany
    // GPU, one counter element: the last block of the execution pass advances `single` by
    // `*total` (the scan's) unless `status` is set, and or-s the status into `report` (the
    // stream's status word); `done` counts finished blocks. Null `single`: the runtime does it.
    i32* single;
    i32* total;
    u64* report;
    u32* done;
    // GPU, one element and one position per thread (reduce-then-scan, no scan kernel): per block of
    // the grid, the counting pass's total of its tiles, then (the last counting block's scan) its
    // exclusive prefix; `counted` counts finished counting blocks. Null `blocks`: a scan kernel
    // runs between the passes. Every word here is reset by its last user, so the state stays
    // clean from launch to launch (docs/design/0021).
    i64* blocks;
    u32* counted;
};

// kSlotsTooMany: a counter element would pass 2^31 - 1 slots in one launch (found on a GPU).
enum : u32 { kSlotsOverflow = 1, kSlotsDiverged = 2, kSlotsTooMany = 4 };

// A counter argument of one launch (the `det` field of its array descriptor points here).
struct SlotCounter {
    SlotLaunch* launch;
    u64 id;
    char* base;  // element 0 of the counter's span
};

// A GPU stream's status area, in device memory for the stream's lifetime: where work on the
// stream (launched directly or replayed from a captured graph) leaves the failures it finds, and
// where the stream's next synchronization reads them. Each word and fault record belongs to one
// kind of report the host registered (a target's records overflow, a slot divergence, a kernel's
// bounds faults); 0 means nothing failed. Words are counts (largest wins) or bits (or-ed).
enum : u32 { kStatusWords = 1024, kStatusFaults = 64 };
struct StatusArea {
    u64 words[kStatusWords];
    Error faults[kStatusFaults];
};

}  // namespace wf
