// Deterministic accumulation on the CPU: state in host memory, resolved with the shared
// device header compiled into the library.
// clang-format off
#include "device/prelude.h"
#include "device/deterministic.h"
// clang-format on

#include "runtime/det/cpu_accumulation.hpp"

namespace weft::runtime::det {

namespace {

template <class T>
void resolve_target(const wf::DetTarget& t, ir::AtomicOp family) {
    for (wf::i64 slot = 0; slot < t.count; ++slot) {
        T* element = reinterpret_cast<T*>(t.base) + slot;
        if (family == ir::AtomicOp::Add) {
            const wf::i64* words = t.words + slot * wf::Exact<T>::kWords;
            bool touched = t.flags[slot] != 0;
            for (int k = 0; k < wf::Exact<T>::kWords && !touched; ++k) touched = words[k] != 0;
            if (touched) *element = wf::resolve_sum<T>(words, t.flags[slot], *element);
        } else {
            const auto key = reinterpret_cast<const typename wf::KeyOf<T>::Key*>(t.words)[slot];
            *element = wf::resolve_minmax<T>(key, *element, family == ir::AtomicOp::Max);
        }
    }
}

template <class T>
void initialise(wf::DetTarget& t, std::vector<int64_t>& words, std::vector<uint32_t>& flags, ir::AtomicOp family) {
    if (family == ir::AtomicOp::Add) {
        words.assign(static_cast<size_t>(t.count) * wf::Exact<T>::kWords, 0);
        flags.assign(static_cast<size_t>(t.count), 0);
    } else {
        // One key per slot, starting at the identity of the family.
        using Key = typename wf::KeyOf<T>::Key;
        const Key identity = family == ir::AtomicOp::Max ? wf::KeyOf<T>::kMin : wf::KeyOf<T>::kMax;
        words.assign(static_cast<size_t>(t.count), 0);
        Key* keys = reinterpret_cast<Key*>(words.data());
        for (int64_t i = 0; i < t.count; ++i) keys[i] = identity;
    }
    t.words = reinterpret_cast<wf::i64*>(words.data());
    t.flags = flags.data();
}

class CpuAccumulation final : public Accumulation {
public:
    CpuAccumulation(const std::vector<ir::DetTarget>& targets, const std::vector<const AnyArray*>& arrays)
        : targets_(targets), state_(targets.size()), words_(targets.size()), flags_(targets.size()) {
        for (size_t i = 0; i < targets.size(); ++i) {
            const Span span = span_of(*arrays[i]);
            state_[i].base = span.base;
            state_[i].count = span.count;
            if (targets[i].dtype == DType::Float32)
                initialise<float>(state_[i], words_[i], flags_[i], targets[i].family);
            else
                initialise<double>(state_[i], words_[i], flags_[i], targets[i].family);
        }
    }

    void* state(size_t i) const override { return const_cast<wf::DetTarget*>(&state_[i]); }

    void resolve() override {
        for (size_t i = 0; i < targets_.size(); ++i) {
            if (targets_[i].dtype == DType::Float32)
                resolve_target<float>(state_[i], targets_[i].family);
            else
                resolve_target<double>(state_[i], targets_[i].family);
        }
    }

private:
    std::vector<ir::DetTarget> targets_;
    std::vector<wf::DetTarget> state_;
    std::vector<std::vector<int64_t>> words_;
    std::vector<std::vector<uint32_t>> flags_;
};

}  // namespace

std::unique_ptr<Accumulation> prepare_cpu(const std::vector<ir::DetTarget>& targets,
                                          const std::vector<const AnyArray*>& arrays) {
    return std::make_unique<CpuAccumulation>(targets, arrays);
}

}  // namespace weft::runtime::det
