// Deterministic accumulation on the CPU: state in host memory, resolved with the shared
// device header compiled into the library.
// clang-format off
#include "device/prelude.h"
#include "device/deterministic.h"
// clang-format on

#include "runtime/det/cpu_accumulation.hpp"

#include "weft/error.hpp"

namespace weft::runtime::det {

namespace {

// Host memory behind one target's wf::DetTarget.
struct Storage {
    wf::DetTarget state{};
    std::vector<wf::i64> words;
    std::vector<wf::u32> flags;
    std::vector<wf::u64> records;
    std::vector<wf::u32> record_slots;
    wf::u64 cursor = 0;
};

template <class T>
void initialise(const TargetPlan& p, Storage& s) {
    s.state.base = p.span.base;
    s.state.count = p.span.count;
    if (p.records) {
        s.records.resize(static_cast<size_t>(p.capacity));
        s.record_slots.resize(static_cast<size_t>(p.capacity));
        s.state.records = s.records.data();
        s.state.record_slots = s.record_slots.data();
        s.state.cursor = &s.cursor;
        s.state.capacity = p.capacity;
        return;
    }
    if (p.target.family == ir::AtomicOp::Add) {
        s.words.assign(static_cast<size_t>(p.span.count) * wf::Exact<T>::kWords, 0);
        s.flags.assign(static_cast<size_t>(p.span.count), 0);
    } else {
        // One key per slot, starting at the identity of the family.
        using Key = typename wf::KeyOf<T>::Key;
        const Key identity = p.target.family == ir::AtomicOp::Max ? wf::KeyOf<T>::kMin : wf::KeyOf<T>::kMax;
        s.words.assign(static_cast<size_t>(p.span.count), 0);
        Key* keys = reinterpret_cast<Key*>(s.words.data());
        for (int64_t i = 0; i < p.span.count; ++i) keys[i] = identity;
    }
    s.state.words = s.words.data();
    s.state.flags = s.flags.data();
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
    std::vector<uint32_t> start(static_cast<size_t>(p.span.count) + 1, 0);
    for (size_t r = 0; r < n; ++r) ++start[s.record_slots[r] + 1];
    for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
    std::vector<wf::u64> sorted(n);
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t r = 0; r < n; ++r) sorted[fill[s.record_slots[r]]++] = s.records[r];
    std::vector<wf::i64> words(wf::Exact<T>::kWords);
    for (int64_t slot = 0; slot < p.span.count; ++slot) {
        if (start[slot] == start[slot + 1]) continue;
        std::fill(words.begin(), words.end(), 0);
        wf::u32 flags = 0;
        for (uint32_t r = start[slot]; r < start[slot + 1]; ++r)
            wf::add_record<T>(words.data(), &flags, sorted[r], false);
        resolve_slot(reinterpret_cast<T*>(p.span.base) + slot, words.data(), flags);
    }
}

template <class T>
void resolve_target(const TargetPlan& p, const Storage& s) {
    if (p.records) return resolve_records<T>(p, s);
    for (int64_t slot = 0; slot < p.span.count; ++slot) {
        T* element = reinterpret_cast<T*>(p.span.base) + slot;
        if (p.target.family == ir::AtomicOp::Add) {
            resolve_slot(element, s.state.words + slot * wf::Exact<T>::kWords, s.state.flags[slot]);
        } else {
            const auto key = reinterpret_cast<const typename wf::KeyOf<T>::Key*>(s.state.words)[slot];
            *element = wf::resolve_minmax<T>(key, *element, p.target.family == ir::AtomicOp::Max);
        }
    }
}

class CpuAccumulation final : public Accumulation {
public:
    CpuAccumulation(std::vector<TargetPlan> plans, const LaunchSite& site)
        : plans_(std::move(plans)), storage_(plans_.size()), site_(site) {
        for (size_t i = 0; i < plans_.size(); ++i) {
            if (plans_[i].shared_with >= 0) continue;
            if (plans_[i].target.dtype == DType::Float32)
                initialise<float>(plans_[i], storage_[i]);
            else
                initialise<double>(plans_[i], storage_[i]);
        }
    }

    void* state(size_t i) const override {
        const int owner = plans_[i].shared_with;
        return const_cast<wf::DetTarget*>(&storage_[owner >= 0 ? static_cast<size_t>(owner) : i].state);
    }

    void resolve() override {
        // Every overflow is reported before any target changes: nothing is half-applied.
        for (size_t i = 0; i < plans_.size(); ++i)
            if (plans_[i].records && storage_[i].cursor > static_cast<uint64_t>(plans_[i].capacity))
                throw Error(overflow_message(plans_[i], storage_[i].cursor, site_), site_.kernel, site_.file,
                            site_.line);
        for (size_t i = 0; i < plans_.size(); ++i) {
            if (plans_[i].shared_with >= 0) continue;
            if (plans_[i].target.dtype == DType::Float32)
                resolve_target<float>(plans_[i], storage_[i]);
            else
                resolve_target<double>(plans_[i], storage_[i]);
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
