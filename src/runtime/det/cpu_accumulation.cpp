// Deterministic accumulation on the CPU: state in host memory, resolved with the shared
// device header compiled into the library. Sums' state serves the next launch into the same
// target as its resolve leaves it (clean), as on a GPU.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include "runtime/det/cpu_accumulation.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

#include "runtime/cpu/worker_pool.hpp"
#include "runtime/det/state_cache.hpp"
#include "weft/error.hpp"

namespace weft::runtime::det {

namespace {

// Zeroed host memory for a target's state, from the system: pages no contribution reaches cost
// nothing. A large state lies on huge pages where the system has them (scattered contributions
// then miss the TLB far less) if `huge`: not a state larger than the state cache keeps whole,
// where a launch that reaches a few elements would make a huge page resident for each.
struct HostMemory {
    void* ptr = nullptr;
    size_t bytes = 0;
    HostMemory(const TargetPlan& plan, size_t wanted, bool huge, const LaunchSite& site)
        : bytes(wanted == 0 ? 1 : wanted) {
        ptr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ptr == MAP_FAILED)
            state_allocation_failed(plan, std::to_string(bytes) + " bytes of host memory are not available",
                                    site);
        constexpr size_t kHugePage = size_t{2} << 20;
        if (huge && bytes >= kHugePage) madvise(ptr, bytes, MADV_HUGEPAGE);  // (a hint: no failure to report)
    }
    HostMemory(const HostMemory&) = delete;
    HostMemory& operator=(const HostMemory&) = delete;
    ~HostMemory() { munmap(ptr, bytes); }
};

// Byte offsets of a state's parts in its memory, each aligned for what it holds.
class Layout {
public:
    Layout(const TargetPlan& plan, const LaunchSite& site) : plan_(plan), site_(site) {}
    size_t add(int64_t count, size_t size) {
        bytes_ = (bytes_ + 15) / 16 * 16;
        const size_t at = bytes_;
        bytes_ += state_bytes(plan_, count, size, site_);
        return at;
    }
    size_t bytes() const { return bytes_; }

private:
    const TargetPlan& plan_;
    const LaunchSite& site_;
    size_t bytes_ = 0;
};

// Sums whose resolve leaves their state clean (compact cells, exact words and flags), carrying
// or not: not records or min/max. (A resolve that finds a sum out of range throws before it
// changes anything, and its state is not kept.)
bool self_cleaning(const TargetPlan& p) {
    return p.target.family == detail::AtomicOp::Add && !p.records;
}

// Sums kept as slots (compact cells or exact words, not records) list the blocks of slots their
// launch reached, so that their resolve costs what the launch touched (wf::DetTarget::touched).
bool keeps_touched(const TargetPlan& p) {
    return p.target.family == detail::AtomicOp::Add && !p.records;
}

// One target's state: its memory and the wf::DetTarget the kernels read.
struct Storage {
    std::shared_ptr<HostMemory> memory;
    wf::DetTarget state{};
    wf::u64 cursor = 0;
    double* sums = nullptr;  // compact: the float64 sums, which state.sums names where a launch may use them
    int sum_copies = 0;      // one per worker of the launch, up to kMaxSumCopies
    wf::u32* touched = nullptr;  // the touched marks, which state.touched names where a launch lists blocks
    // What the state cache charges for keeping it: its size, or for a state larger than the cache
    // keeps whole, the pages its launches reached (a few elements of a huge target cost a few
    // pages, kept, rather than a fresh mapping whose pages each launch faults in again): `reached`
    // marks the blocks of slots counted, each charged `block_bytes`.
    size_t charged = 0;
    std::vector<bool> reached;
    size_t block_bytes = 0;
};

// What a cached state must match: the described target (its slot map) and how it accumulates.
// Compared bytewise: a described wf::DetTarget is value-initialised, so its bytes are its fields.
struct CacheKey {
    wf::DetTarget described;
    bool compact;
    DType dtype;
    int sum_copies;
    friend bool operator==(const CacheKey& a, const CacheKey& b) {
        return std::memcmp(&a.described, &b.described, sizeof a.described) == 0 && a.compact == b.compact &&
               a.dtype == b.dtype && a.sum_copies == b.sum_copies;
    }
};

// Float64 sums per worker at most: each is a float64 per slot (pages only where its worker adds),
// and the resolve reads every copy of each slot it visits.
constexpr int kMaxSumCopies = 8;

// The copies of a compact target's float64 sums that a launch on `workers` workers keeps.
int sum_copies(const TargetPlan& p, int workers) {
    return p.compact ? std::clamp(workers, 1, kMaxSumCopies) : 0;
}

using Cache = StateCache<CacheKey, Storage>;

Cache& state_cache() {
    static auto* cache = new Cache;
    return *cache;
}

template <class T>
Storage make_storage(const TargetPlan& p, const LaunchSite& site, int copies) {
    Storage s;
    const SlotMap& m = p.slots;
    describe_slots(p, s.state);
    Layout layout(p, site);
    int64_t n = 0;
    size_t words_at = 0, flags_at = 0, records_at = 0, record_slots_at = 0, cells_at = 0, spill_at = 0;
    size_t touched_at = 0, touched_blocks_at = 0, touched_count_at = 0, sums_at = 0, cells_used_at = 0;
    const int64_t blocks = (m.count >> wf::kTouchedShift) + 1;
    if (p.records) {
        records_at = layout.add(p.capacity, sizeof(wf::u64));
        record_slots_at = layout.add(p.capacity, sizeof(wf::u32));
    } else if (p.compact) {
        cells_at = layout.add(m.count, sizeof(wf::CompactCell));
        // (Spill blocks are zeroed by the kernel where a slot first spills, as on a GPU.)
        spill_at = layout.add(__builtin_mul_overflow(m.count, int64_t{wf::kSpillWords}, &n) ? -1 : n, 8);
        sums_at = layout.add(__builtin_mul_overflow(m.count, int64_t{copies}, &n) ? -1 : n, sizeof(double));
        cells_used_at = layout.add(blocks, sizeof(wf::u32));
    } else if (p.target.family == detail::AtomicOp::Add) {
        words_at = layout.add(__builtin_mul_overflow(m.count, int64_t{wf::Exact<T>::kWords}, &n) ? -1 : n, 8);
        flags_at = layout.add(m.count, sizeof(wf::u32));
    } else {
        words_at = layout.add(m.count, 8);
    }
    const bool lists_touched = keeps_touched(p);
    if (lists_touched) {
        touched_at = layout.add(blocks, sizeof(wf::u32));
        touched_blocks_at = layout.add(blocks, sizeof(wf::i64));
        touched_count_at = layout.add(1, sizeof(wf::u64));
    }
    // A state the cache keeps whole lies on huge pages; a larger one is charged per block of slots
    // its launches reach: the pages each part of a block can make resident (its range may straddle
    // a page boundary).
    const bool whole = layout.bytes() <= Cache::kBytes;
    s.memory = std::make_shared<HostMemory>(p, layout.bytes(), whole, site);
    s.charged = layout.bytes();
    if (!whole && lists_touched) {
        const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const size_t per_slot = p.compact
                                    ? sizeof(wf::CompactCell) + wf::kSpillWords * 8 + sizeof(double) * copies
                                    : wf::Exact<T>::kWords * 8 + sizeof(wf::u32);
        const size_t pages = (per_slot << wf::kTouchedShift) / page + 2 + 2 * (p.compact ? 2 + copies : 2);
        s.block_bytes = pages * page;
        s.reached.assign(static_cast<size_t>(blocks), false);
        s.charged = page;  // the touched count's
    }
    char* base = static_cast<char*>(s.memory->ptr);
    if (lists_touched) {
        s.touched = reinterpret_cast<wf::u32*>(base + touched_at);
        s.state.touched_blocks = reinterpret_cast<wf::i64*>(base + touched_blocks_at);
        s.state.touched_count = reinterpret_cast<wf::u64*>(base + touched_count_at);
    }
    if (p.records) {
        s.state.records = reinterpret_cast<wf::u64*>(base + records_at);
        s.state.record_slots = reinterpret_cast<wf::u32*>(base + record_slots_at);
        s.state.capacity = p.capacity;
    } else if (p.compact) {
        s.state.cells = reinterpret_cast<wf::CompactCell*>(base + cells_at);
        s.state.spill = reinterpret_cast<wf::i64*>(base + spill_at);
        s.sums = reinterpret_cast<double*>(base + sums_at);
        s.state.cells_used = reinterpret_cast<wf::u32*>(base + cells_used_at);
        s.sum_copies = copies;
    } else {
        s.state.words = reinterpret_cast<wf::i64*>(base + words_at);
        if (p.target.family == detail::AtomicOp::Add) {
            s.state.flags = reinterpret_cast<wf::u32*>(base + flags_at);
        } else {
            // One key per slot, starting at the identity of the family.
            using Key = typename wf::KeyOf<T>::Key;
            const Key identity =
                p.target.family == detail::AtomicOp::Max ? wf::KeyOf<T>::kMin : wf::KeyOf<T>::kMax;
            Key* keys = reinterpret_cast<Key*>(s.state.words);
            for (int64_t i = 0; i < m.count; ++i) keys[i] = identity;
        }
    }
    return s;
}

template <class T>
T* element_of(const wf::DetTarget& t, int64_t slot) {
    return reinterpret_cast<T*>(wf::slot_address(t, slot, static_cast<wf::i64>(sizeof(T))));
}

// Groups the records by slot and reduces each slot exactly. Their order within a slot does not
// matter (the sum is exact), so they are grouped by a counting sort where they are many beside
// the target's slots, else by sorting them: the cost follows the records, not the target's size
// (two records into 16M elements took 0.3 s when every resolve counted per slot).
template <class T>
void resolve_records(const TargetPlan& p, Storage& s) {
    const auto n = static_cast<size_t>(s.cursor);
    const wf::u32* record_slots = s.state.record_slots;
    const auto slots = static_cast<size_t>(p.slots.count);
    std::vector<std::pair<wf::u32, wf::u64>> grouped(n);
    if (n < slots / 16) {
        for (size_t r = 0; r < n; ++r) grouped[r] = {record_slots[r], s.state.records[r]};
        std::sort(grouped.begin(), grouped.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
    } else {
        std::vector<size_t> start(slots + 1, 0);  // (not 32-bit: a launch may make 2^32 records)
        for (size_t r = 0; r < n; ++r) ++start[record_slots[r] + 1];
        for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
        for (size_t r = 0; r < n; ++r)
            grouped[start[record_slots[r]]++] = {record_slots[r], s.state.records[r]};
    }
    std::vector<wf::i64> words(wf::Exact<T>::kWords);
    for (size_t r = 0; r < n;) {
        const wf::u32 slot = grouped[r].first;
        std::fill(words.begin(), words.end(), 0);
        wf::u32 flags = 0;
        for (; r < n && grouped[r].first == slot; ++r)
            wf::add_record<T>(words.data(), &flags, grouped[r].second, false);
        T* element = element_of<T>(s.state, slot);
        *element = wf::resolve_sum<T>(words.data(), flags, *element);
    }
}

// Resolves a compact slot into its element and leaves its cell for the next launch: window 0,
// and the meta word holding only the anchor where the slot's contributions all fit the window
// (the next launch's contributions there need no first contribution), else zero.
// The meta bits below the anchor.
constexpr wf::u32 kLowBits = ~(~0u << wf::kAnchorShift);

// Whether a cell holds no more than a kept anchor and the flag of +0 contributions: no value.
bool anchor_and_zero_flag_alone(const wf::CompactCell& cell) {
    return cell.window == 0 && (cell.meta & kLowBits & ~(wf::kAnchored | wf::kFlagPosZero)) == 0;
}

// A float32 slot whose contributions all went to its float64 sum (its cell holds no more than a
// kept anchor): the sum plus the element, exact in float64 and rounded once by the
// conversion, where that is exact and the result is normal or zero; false where the cell must
// decide (a subnormal element or result, which a flush-to-zero mode would change, or an inexact
// float64 sum). Both paths give the correctly rounded exact sum, so the bits are the same.
// (`cell` null: a cell the launch did not reach, which holds no more than a kept anchor. A +0
// contribution's flag changes nothing here: the sum is not zero.)
bool resolve_sum_alone(const wf::CompactCell* cell, double sum, float* element) {
    if (cell && !anchor_and_zero_flag_alone(*cell)) return false;
    const float initial = *element;
    const wf::u32 exponent = wf::bit_cast<wf::u32>(initial) & 0x7f800000u;
    if (exponent == 0x7f800000u || (exponent == 0 && initial != 0.0f)) return false;
    const double b = initial;
    const double total = sum + b;
    if (total - sum != b || total - b != sum) return false;  // inexact (wf::add_to_sum's test)
    if (total == 0.0) {  // the initial value cancelled by the contributions: +0.0
        *element = 0.0f;
        return true;
    }
    if (std::fabs(total) < 0x1p-126) return false;
    *element = static_cast<float>(total);
    return true;
}

// The sum's exact value into the slot's cell (out of line, as resolve_cell).
__attribute__((noinline)) void fold_sum(const wf::DetTarget& t, int64_t slot, double sum) {
    wf::fold_sum(t.cells + slot, &t, slot, sum);
}

// A cell that holds contributions: resolved into its element, left holding its next anchor. Out
// of line: inlined, it made the slot loop's common cases (nothing reached the slot, or only its
// float64 sum) a call with a full frame each.

template <class T>
__attribute__((noinline)) void resolve_cell(const wf::DetTarget& t, int64_t slot) {
    wf::CompactCell& cell = t.cells[slot];
    const int anchor = wf::next_anchor(cell.meta);
    const wf::u32 kept =
        anchor == wf::kNoAnchor ? 0u : wf::kAnchored | (static_cast<wf::u32>(anchor) << wf::kAnchorShift);
    if (cell.window != 0 || cell.meta != kept) {
        T* element = element_of<T>(t, slot);
        *element = wf::resolve_compact<T>(cell, t.spill + slot * wf::kSpillWords, *element);
    }
    cell = wf::CompactCell{0, kept, 0};
}

// The workers' float64 sums of the slot (`copies` of them, `count` apart) join in one float64
// while that stays exact (wf::add_to_sum's test); one that would not is folded into the cell
// alone. The sum then resolves with the element where it can, else joins the cell too.
// `reached`: whether the launch's contributions may have reached the cell (else it is read only
// where a sum must join it).
template <class T>
inline __attribute__((always_inline)) void resolve_compact_cell(const wf::DetTarget& t, int64_t slot,
                                                                double* sums, int copies, bool reached) {
    wf::CompactCell& cell = t.cells[slot];
    double total = 0.0;
    for (int c = 0; c < copies; ++c) {
        double& sum = sums[c * t.count + slot];
        if (sum == 0.0) continue;
        const double joined = total + sum;
        if (joined - total == sum && joined - sum == total) {
            total = joined;
        } else {
            fold_sum(t, slot, sum);
            reached = true;
        }
        sum = 0.0;
    }
    if (total != 0.0) {
        if constexpr (std::is_same_v<T, float>)
            if (resolve_sum_alone(reached ? &cell : nullptr, total, element_of<float>(t, slot))) {
                cell.meta &= ~wf::kFlagPosZero;
                return;
            }
        fold_sum(t, slot, total);
        reached = true;
    }
    if (!reached || cell.meta == 0) return;  // no contribution reached the cell
    if (anchor_and_zero_flag_alone(cell)) {
        // Only +0 contributions, if any: the element stays, but -0 becomes +0. (A kept anchor
        // alone needs nothing.) A backward pass adds many zeros: this took a call per slot.
        if constexpr (std::is_same_v<T, float>) {
            float& element = *element_of<float>(t, slot);
            if ((cell.meta & wf::kFlagPosZero) && element == 0.0f) element = 0.0f;
            cell.meta &= ~wf::kFlagPosZero;
            return;
        }
        if ((cell.meta & kLowBits) == wf::kAnchored) return;
    }
    resolve_cell<T>(t, slot);
}

// The compact slots [first, end); one copy of the sums (a serial launch's) in a loop of its own.
// Block by block where the launch marks the blocks whose cells it reached (DetTarget::cells_used).
template <class T>
void resolve_compact_slots(const wf::DetTarget& t, int64_t first, int64_t end) {
    double* const sums = t.sums;
    const int copies = sums ? t.sum_copies : 0;
    for (int64_t from = first; from < end;) {
        const int64_t block = from >> wf::kTouchedShift;
        const int64_t to = std::min(end, (block + 1) << wf::kTouchedShift);
        const bool reached = !t.cells_used || t.cells_used[block] != 0;
        if (copies == 1 && !reached) {
            for (int64_t slot = from; slot < to; ++slot)
                if (sums[slot] != 0.0) resolve_compact_cell<T>(t, slot, sums, 1, false);
        } else if (copies == 1) {
            for (int64_t slot = from; slot < to; ++slot)
                if (sums[slot] != 0.0 || t.cells[slot].meta != 0)
                    resolve_compact_cell<T>(t, slot, sums, 1, true);
        } else {
            for (int64_t slot = from; slot < to; ++slot)
                resolve_compact_cell<T>(t, slot, sums, copies, reached);
        }
        if (t.cells_used) t.cells_used[block] = 0;
        from = to;
    }
}

// Resolves slots [first, end): one loop per kind of state, each slot's common case inline.
template <class T>
void resolve_slots(const TargetPlan& p, const wf::DetTarget& t, int64_t first, int64_t end) {
    if (p.compact) {
        resolve_compact_slots<T>(t, first, end);
    } else if (p.target.family == detail::AtomicOp::Add) {
        for (int64_t slot = first; slot < end; ++slot) wf::resolve_exact_slot<T>(t, slot, true);
    } else {
        const bool is_max = p.target.family == detail::AtomicOp::Max;
        for (int64_t slot = first; slot < end; ++slot) {
            const auto key = reinterpret_cast<const typename wf::KeyOf<T>::Key*>(t.words)[slot];
            T* element = element_of<T>(t, slot);
            *element = wf::resolve_minmax<T>(key, *element, is_max);
        }
    }
}

// Resolves every slot the launch reached and leaves the list of them empty. Slots it did not
// reach hold a clean state (no contribution, or only a kept anchor), which resolves to the
// element as it is: where the launch reached few blocks of slots, the listed ones alone are
// visited, in the order they were reached; where it reached half or more, every slot in address
// order (cheaper than the list's scattered order, and the same results).
template <class T>
void resolve_target(const TargetPlan& p, Storage& s, int workers) {
    if (p.records) return resolve_records<T>(p, s);
    const wf::DetTarget& t = s.state;
    const int64_t count = p.slots.count;
    // Every slot, on the launch's workers where there are many: each takes whole blocks of slots
    // (a slot's state, element and block mark are its block's alone).
    const auto every_slot = [&] {
        constexpr int64_t kSlotsPerWorker = int64_t{1} << 16;
        if (workers <= 1 || count < 2 * kSlotsPerWorker) return resolve_slots<T>(p, t, 0, count);
        const int64_t blocks = (count + (int64_t{1} << wf::kTouchedShift) - 1) >> wf::kTouchedShift;
        cpu::run_chunks(blocks, static_cast<int>(std::min<int64_t>(workers, count / kSlotsPerWorker)),
                        [&](int, int64_t, int64_t first, int64_t end) {
                            resolve_slots<T>(p, t, first << wf::kTouchedShift,
                                             std::min(count, end << wf::kTouchedShift));
                        });
    };
    if (!t.touched) {
        every_slot();
        if (!s.reached.empty()) s.charged = s.memory->bytes;
        return;
    }
    const int64_t blocks = (count >> wf::kTouchedShift) + 1;
    const auto reached = static_cast<int64_t>(*t.touched_count);
    if (reached * 2 < blocks) {
        for (int64_t i = 0; i < reached; ++i) {
            const int64_t block = t.touched_blocks[i];
            resolve_slots<T>(p, t, block << wf::kTouchedShift,
                             std::min(count, (block + 1) << wf::kTouchedShift));
            t.touched[block] = 0;
            if (!s.reached.empty() && !s.reached[static_cast<size_t>(block)]) {
                s.reached[static_cast<size_t>(block)] = true;
                s.charged += s.block_bytes;
            }
        }
    } else {
        every_slot();
        std::memset(t.touched, 0, static_cast<size_t>(blocks) * sizeof(wf::u32));
        if (!s.reached.empty()) s.charged = s.memory->bytes;
    }
    *t.touched_count = 0;
}

// Slots of a carrying target whose running sum left the words' range.
uint64_t out_of_range(const TargetPlan& p, const Storage& s) {
    if (!p.carrying) return 0;
    uint64_t n = 0;
    for (int64_t slot = 0; slot < p.slots.count; ++slot) {
        const wf::u32 flags = p.compact ? s.state.cells[slot].meta : s.state.flags[slot];
        n += (flags & wf::kFlagOverflow) != 0;
    }
    return n;
}

class CpuAccumulation final : public Accumulation {
public:
    CpuAccumulation(std::vector<TargetPlan> plans, const LaunchSite& site)
        : plans_(std::move(plans)), storage_(plans_.size()), keys_(plans_.size()), site_(site) {
        for (size_t i = 0; i < plans_.size(); ++i) {
            const TargetPlan& p = plans_[i];
            if (p.shared_with >= 0) continue;
            const int copies = sum_copies(p, site_.workers);
            if (self_cleaning(p)) {
                keys_[i] = CacheKey{{}, p.compact, p.target.dtype, copies};
                describe_slots(p, keys_[i]->described);
                if (std::optional<Storage> cached = state_cache().take(*keys_[i])) {
                    storage_[i] = std::move(*cached);
                    continue;
                }
            }
            // Half-precision targets keep float32's state (src/device/deterministic.h).
            storage_[i] = p.target.dtype == DType::Float64 ? make_storage<double>(p, site_, copies)
                                                           : make_storage<float>(p, site_, copies);
            storage_[i].state.cursor = &storage_[i].cursor;
        }
        // The float64 sums' exactness test holds in round-to-nearest: a launching thread in another
        // rounding mode adds to the cells alone. (Its workers run in the default mode.)
        const bool nearest = std::fegetround() == FE_TONEAREST;
        for (size_t i = 0; i < plans_.size(); ++i) {
            Storage& s = storage_[i];
            s.state.sums = nearest ? s.sums : nullptr;
            s.state.sum_copies = s.sum_copies;
            // A launch of as many threads as an eighth of the target's slots has its resolve
            // walk every slot, at a cost of the launch's own order, rather than list the blocks
            // it reaches on each contribution.
            s.state.touched = site_.threads < plans_[i].slots.count / 8 ? s.touched : nullptr;
        }
    }

    void* state(size_t i) const override {
        const int owner = plans_[i].shared_with;
        return const_cast<wf::DetTarget*>(&storage_[owner >= 0 ? static_cast<size_t>(owner) : i].state);
    }

    void resolve() override {
        // Every failure is reported before any target changes: nothing is half-applied.
        for (size_t i = 0; i < plans_.size(); ++i) {
            if (plans_[i].shared_with >= 0) continue;
            if (plans_[i].records && storage_[i].cursor > static_cast<uint64_t>(plans_[i].capacity))
                throw Error(overflow_message(plans_[i], storage_[i].cursor, site_), site_.kernel, site_.file,
                            site_.line);
            if (const uint64_t n = out_of_range(plans_[i], storage_[i]))
                throw Error(range_message(plans_[i], n, site_), site_.kernel, site_.file, site_.line);
        }
        for (size_t i = 0; i < plans_.size(); ++i) {
            if (plans_[i].shared_with >= 0) continue;
            try {  // (the records strategy groups its records in memory of its own)
                switch (plans_[i].target.dtype) {
                    case DType::Float16:
                        resolve_target<wf::f16>(plans_[i], storage_[i], site_.workers);
                        break;
                    case DType::BFloat16:
                        resolve_target<wf::bf16>(plans_[i], storage_[i], site_.workers);
                        break;
                    case DType::Float64: resolve_target<double>(plans_[i], storage_[i], site_.workers); break;
                    default: resolve_target<float>(plans_[i], storage_[i], site_.workers);
                }
            } catch (const std::bad_alloc&) {
                state_allocation_failed(plans_[i], "host memory for grouping its records is not available",
                                        site_);
            }
            // Clean now: the next launch into the same target takes it as it is.
            if (keys_[i]) {
                const size_t charged = storage_[i].charged;
                state_cache().put(*keys_[i], std::move(storage_[i]), charged);
            }
        }
    }

private:
    std::vector<TargetPlan> plans_;
    std::vector<Storage> storage_;
    std::vector<std::optional<CacheKey>> keys_;  // set for state that goes back to the cache
    LaunchSite site_;
};

}  // namespace

std::unique_ptr<Accumulation> prepare_cpu(std::vector<TargetPlan> plans, const LaunchSite& site) {
    return std::make_unique<CpuAccumulation>(std::move(plans), site);
}

}  // namespace weft::runtime::det
