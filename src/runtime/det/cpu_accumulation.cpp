// Deterministic accumulation on the CPU: state in host memory, resolved with the shared
// device header compiled into the library.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include "runtime/det/cpu_accumulation.hpp"

#include <cstdlib>
#include <memory>
#include <new>

#include "weft/error.hpp"

namespace weft::runtime::det {

namespace {

// Zeroed host memory for `count` items of T. calloc leaves untouched pages unmapped, so a large
// target costs memory only for the slots its contributions reach.
template <class T>
class Zeroed {
public:
    Zeroed() = default;
    Zeroed(const TargetPlan& plan, int64_t count, const LaunchSite& site) {
        const size_t bytes = state_bytes(plan, count, sizeof(T), site);
        data_.reset(static_cast<T*>(std::calloc(bytes == 0 ? 1 : bytes, 1)));
        if (!data_)
            state_allocation_failed(plan, std::to_string(bytes) + " bytes of host memory are not available",
                                    site);
    }
    T* get() const { return data_.get(); }

private:
    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T, Free> data_;
};

// Host memory that is not initialised: a compact target's spill blocks, each zeroed by the
// kernel when its slot first spills (as on a GPU).
std::unique_ptr<wf::i64[]> uninitialised(const TargetPlan& plan, int64_t count, const LaunchSite& site) {
    const size_t bytes = state_bytes(plan, count, sizeof(wf::i64), site);
    try {
        return std::make_unique_for_overwrite<wf::i64[]>(bytes / sizeof(wf::i64) + 1);
    } catch (const std::bad_alloc&) {
        state_allocation_failed(plan, std::to_string(bytes) + " bytes of host memory are not available",
                                site);
    }
}

// Host memory behind one target's wf::DetTarget.
struct Storage {
    wf::DetTarget state{};
    Zeroed<wf::i64> words;
    Zeroed<wf::u32> flags;
    Zeroed<wf::u64> records;
    Zeroed<wf::u32> record_slots;
    Zeroed<wf::CompactCell> cells;
    std::unique_ptr<wf::i64[]> spill;
    wf::u64 cursor = 0;
};

template <class T>
void initialise(const TargetPlan& p, Storage& s, const LaunchSite& site) {
    const SlotMap& m = p.slots;
    describe_slots(p, s.state);
    if (p.records) {
        s.records = Zeroed<wf::u64>(p, p.capacity, site);
        s.record_slots = Zeroed<wf::u32>(p, p.capacity, site);
        s.state.records = s.records.get();
        s.state.record_slots = s.record_slots.get();
        s.state.cursor = &s.cursor;
        s.state.capacity = p.capacity;
        return;
    }
    if (p.compact) {
        int64_t words = 0;
        if (__builtin_mul_overflow(m.count, int64_t{wf::kSpillWords}, &words)) words = -1;
        s.cells = Zeroed<wf::CompactCell>(p, m.count, site);
        s.spill = uninitialised(p, words, site);
        s.state.cells = s.cells.get();
        s.state.spill = s.spill.get();
        return;
    }
    if (p.target.family == detail::AtomicOp::Add) {
        int64_t words = 0;
        if (__builtin_mul_overflow(m.count, int64_t{wf::Exact<T>::kWords}, &words)) words = -1;
        s.words = Zeroed<wf::i64>(p, words, site);
        s.flags = Zeroed<wf::u32>(p, m.count, site);
    } else {
        // One key per slot, starting at the identity of the family.
        using Key = typename wf::KeyOf<T>::Key;
        const Key identity =
            p.target.family == detail::AtomicOp::Max ? wf::KeyOf<T>::kMin : wf::KeyOf<T>::kMax;
        s.words = Zeroed<wf::i64>(p, m.count, site);
        Key* keys = reinterpret_cast<Key*>(s.words.get());
        for (int64_t i = 0; i < m.count; ++i) keys[i] = identity;
    }
    s.state.words = s.words.get();
    s.state.flags = s.flags.get();
}

template <class T>
T* element_of(const wf::DetTarget& t, int64_t slot) {
    return reinterpret_cast<T*>(wf::slot_address(t, slot, static_cast<wf::i64>(sizeof(T))));
}

template <class T>
void resolve_slot(T* element, const wf::i64* words, uint32_t flags) {
    bool touched = flags != 0;
    for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[k] != 0;
    if (touched) *element = wf::resolve_sum<T>(words, flags, *element);
}

// Groups the records by slot (a counting sort) and reduces each slot exactly.
template <class T>
void resolve_records(const TargetPlan& p, const Storage& s) {
    const auto n = static_cast<size_t>(s.cursor);
    std::vector<uint32_t> start(static_cast<size_t>(p.slots.count) + 1, 0);
    for (size_t r = 0; r < n; ++r) ++start[s.record_slots.get()[r] + 1];
    for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
    std::vector<wf::u64> sorted(n);
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t r = 0; r < n; ++r) sorted[fill[s.record_slots.get()[r]]++] = s.records.get()[r];
    std::vector<wf::i64> words(wf::Exact<T>::kWords);
    for (int64_t slot = 0; slot < p.slots.count; ++slot) {
        if (start[slot] == start[slot + 1]) continue;
        std::fill(words.begin(), words.end(), 0);
        wf::u32 flags = 0;
        for (uint32_t r = start[slot]; r < start[slot + 1]; ++r)
            wf::add_record<T>(words.data(), &flags, sorted[r], false);
        resolve_slot(element_of<T>(s.state, slot), words.data(), flags);
    }
}

template <class T>
void resolve_target(const TargetPlan& p, const Storage& s) {
    if (p.records) return resolve_records<T>(p, s);
    if (p.compact) {
        for (int64_t slot = 0; slot < p.slots.count; ++slot) {
            const wf::CompactCell& cell = s.state.cells[slot];
            if (cell.meta == 0) continue;  // no contribution reached it
            T* element = element_of<T>(s.state, slot);
            *element = wf::resolve_compact<T>(cell, s.state.spill + slot * wf::kSpillWords, *element);
        }
        return;
    }
    for (int64_t slot = 0; slot < p.slots.count; ++slot) {
        T* element = element_of<T>(s.state, slot);
        if (p.target.family == detail::AtomicOp::Add) {
            resolve_slot(element, s.state.words + slot * wf::Exact<T>::kWords, s.state.flags[slot]);
        } else {
            const auto key = reinterpret_cast<const typename wf::KeyOf<T>::Key*>(s.state.words)[slot];
            *element = wf::resolve_minmax<T>(key, *element, p.target.family == detail::AtomicOp::Max);
        }
    }
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
        : plans_(std::move(plans)), storage_(plans_.size()), site_(site) {
        for (size_t i = 0; i < plans_.size(); ++i) {
            if (plans_[i].shared_with >= 0) continue;
            // Half-precision targets keep float32's state (src/device/deterministic.h).
            if (plans_[i].target.dtype == DType::Float64)
                initialise<double>(plans_[i], storage_[i], site_);
            else
                initialise<float>(plans_[i], storage_[i], site_);
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
                    case DType::Float16: resolve_target<wf::f16>(plans_[i], storage_[i]); break;
                    case DType::BFloat16: resolve_target<wf::bf16>(plans_[i], storage_[i]); break;
                    case DType::Float64: resolve_target<double>(plans_[i], storage_[i]); break;
                    default: resolve_target<float>(plans_[i], storage_[i]);
                }
            } catch (const std::bad_alloc&) {
                state_allocation_failed(plans_[i], "host memory for grouping its records is not available",
                                        site_);
            }
        }
    }

private:
    std::vector<TargetPlan> plans_;
    std::vector<Storage> storage_;
    LaunchSite site_;
};

}  // namespace

std::unique_ptr<Accumulation> prepare_cpu(std::vector<TargetPlan> plans, const LaunchSite& site) {
    return std::make_unique<CpuAccumulation>(std::move(plans), site);
}

}  // namespace weft::runtime::det
