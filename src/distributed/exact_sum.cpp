// The exact sum over ranks (distributed/exact_sum.hpp) on any engine: the window agreement, the
// two-word fixed-point sums, the fallback to full digits, and the one rounding, which is
// device/resolve.h's round_limbs, the same code every deterministic strategy rounds with.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/distributed_window.h"
// clang-format on

#include "distributed/exact_sum.hpp"

#include <bit>
#include <climits>
#include <cstring>

#include "weft/error.hpp"

namespace weft::distributed {

namespace {

using i128 = __int128;
using u128 = unsigned __int128;

constexpr uint32_t kSpecialFlags = wf::kFlagPosInf | wf::kFlagNegInf | wf::kFlagNan;
// Agreement fields (device/distributed_window.h): elements where a rank holds an infinity or a NaN take
// the fallback, which carries the flags.
constexpr int32_t kSpecialTop = wf::dist::kSpecialTop;
constexpr int32_t kNoLow = wf::dist::kNoLow;
// The fallback carries the flags as counts of ranks, 16 bits each, in one word.
constexpr int kCountBits = 16;

template <class S>
constexpr int kLimbs = std::is_same_v<S, float> ? 14 : 70;

// One rank's partial sum of one element, as the agreement sees it.
struct Partial {
    uint32_t flags;
    bool zero;  // no finite nonzero partial (flags may still hold +0.0, or a special value)
    int top;    // highest and lowest set bit of the magnitude, in units of the smallest subnormal
    int low;
};

// A rank's values as partial sums (an all-reduce of arrays).
template <class T>
struct Values {
    using S = typename wf::StateOf<T>::type;
    const T* v;

    Partial partial(size_t i) const {
        const S s = wf::StateOf<T>::of(v[i]);
        const uint32_t f = wf::special_flag(s);
        wf::i32 top, neg_low;
        wf::dist::window_fields<T>(v[i], top, neg_low);
        if (top == wf::dist::kSpecialTop || top < 0) return {f, true, 0, 0};
        return {f, false, top, -neg_low};
    }
    void words(size_t i, int low, int k, int64_t& high, int64_t& lo) const {
        wf::i64 h, l;
        wf::dist::value_words<T>(v[i], low, k, h, l);
        high = h;
        lo = l;
    }
    void add_digits(size_t i, int64_t* words) const {
        const wf::Split<S> sp = wf::split(wf::StateOf<T>::of(v[i]));
        if (sp.significand == 0 || (wf::special_flag(wf::StateOf<T>::of(v[i])) & kSpecialFlags)) return;
        const wf::Digits d = wf::digits<S>(sp);
        for (int k = 0; k < 3; ++k) words[d.first + k] += d.d[k];
    }
};

// A rank's exact partial sums (PartialSums, normalized) of a distributed accumulation.
template <class T>
struct States {
    using S = typename wf::StateOf<T>::type;
    static constexpr int kN = kLimbs<S>;
    const PartialSums& p;

    // The magnitude's 32-bit limbs; returns whether the sum is negative.
    bool limbs(size_t i, uint32_t* limb) const {
        const wf::i64* w = p.at(i);
        const bool negative = w[kN - 1] < 0;
        for (int k = 0; k < kN; ++k) limb[k] = static_cast<uint32_t>(w[k]);
        if (negative) {
            uint64_t carry = 1;
            for (int k = 0; k < kN; ++k) {
                const uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(~limb[k])) + carry;
                limb[k] = static_cast<uint32_t>(v);
                carry = v >> 32;
            }
        }
        return negative;
    }
    Partial partial(size_t i) const {
        const uint32_t f = p.flags[i];
        if (f & kSpecialFlags) return {f, true, 0, 0};
        uint32_t limb[kN];
        limbs(i, limb);
        int top = -1, low = -1;
        for (int k = 0; k < kN; ++k) {
            if (!limb[k]) continue;
            if (low < 0) low = k * 32 + std::countr_zero(limb[k]);
            top = k * 32 + 31 - std::countl_zero(limb[k]);
        }
        if (top < 0) return {f, true, 0, 0};
        return {f, false, top, low};
    }
    void words(size_t i, int low, int k, int64_t& high, int64_t& lo) const {
        uint32_t limb[kN];
        const bool negative = limbs(i, limb);
        u128 m = 0;
        for (int j = 0; j < kN; ++j) {
            if (!limb[j]) continue;
            const int at = j * 32 - low;  // the window holds every set bit: at > -32, at < 128
            m |= at >= 0 ? static_cast<u128>(limb[j]) << at : static_cast<u128>(limb[j] >> -at);
        }
        wf::i64 h, l;
        wf::dist::two_words(negative, static_cast<uint64_t>(m >> 64), static_cast<uint64_t>(m), k, h, l);
        high = h;
        lo = l;
    }
    void add_digits(size_t i, int64_t* words) const {
        const wf::i64* w = p.at(i);
        for (int k = 0; k < kN; ++k) words[k] += w[k];
    }
};

bool needs_positive_zero_flag(uint32_t initial_flag, bool negative_zero) {
    return negative_zero || (initial_flag & wf::kFlagNan);
}

// The protocol. `out` holds each element's initial value (the same on every rank) and receives
// its result.
template <class T, class Source>
void reduce(const Engine& e, const Source& src, T* out, size_t n) {
    using S = typename wf::StateOf<T>::type;
    constexpr int kN = kLimbs<S>;
    const int ranks = e.size();
    const int lp = ranks <= 1 ? 0 : std::bit_width(static_cast<unsigned>(ranks - 1));  // ceil(log2)
    const int k = 63 - lp;           // the low word's bits: ranks x 2^k stays below 2^63
    const int width = 125 - 2 * lp;  // a window's bits: ranks x the high word stays below 2^62

    // 1. The window: the highest and the lowest bit of every rank's partial sum.
    std::vector<int32_t> agree(2 * n);
    for (size_t i = 0; i < n; ++i) {
        const Partial q = src.partial(i);
        if (q.flags & kSpecialFlags) {
            agree[2 * i] = kSpecialTop;
            agree[2 * i + 1] = kNoLow;
        } else if (q.zero) {
            agree[2 * i] = -1;
            agree[2 * i + 1] = kNoLow;
        } else {
            agree[2 * i] = q.top;
            agree[2 * i + 1] = -q.low;
        }
    }
    e.max_i32(agree.data(), agree.size(), "the exponent window of a deterministic all-reduce");

    // 2. Two words per element inside its window: x / 2^low = high * 2^k + low word, the low word
    //    in [0, 2^k); integer sums over the ranks are exact and in any order the same.
    std::vector<int64_t> pair(2 * n, 0);
    std::vector<size_t> fallback;
    for (size_t i = 0; i < n; ++i) {
        const int32_t top = agree[2 * i];
        if (!wf::dist::in_window(top, agree[2 * i + 1], width)) {
            fallback.push_back(i);
            continue;
        }
        if (top < 0 || src.partial(i).zero) continue;
        src.words(i, -agree[2 * i + 1], k, pair[2 * i], pair[2 * i + 1]);
    }
    e.sum_i64(pair.data(), pair.size(), "the two-word sums of a deterministic all-reduce");

    // 3. The fallback: every digit word and the flags (as counts of ranks) of the elements outside
    //    the window (every rank finds the same ones: the window is agreed).
    constexpr size_t kRow = kN + 1;
    std::vector<int64_t> full(fallback.size() * kRow, 0);
    for (size_t f = 0; f < fallback.size(); ++f) {
        int64_t* row = full.data() + f * kRow;
        src.add_digits(fallback[f], row);
        const uint32_t flags = src.partial(fallback[f]).flags;
        int64_t counts = 0;
        for (int b = 0; b < 4; ++b)
            if (flags & (1u << b)) counts += int64_t{1} << (b * kCountBits);
        row[kN] = counts;
    }
    if (!fallback.empty())
        e.sum_i64(full.data(), full.size(), "the full digits of a deterministic all-reduce");

    // 4. One rounding per element.
    std::vector<size_t> zeros;  // sums of exactly zero whose initial value needs the +0.0 flag
    size_t next_fallback = 0;
    for (size_t i = 0; i < n; ++i) {
        if (next_fallback < fallback.size() && fallback[next_fallback] == i) {
            const int64_t* row = full.data() + next_fallback * kRow;
            ++next_fallback;
            wf::i64 acc[kN];
            std::memcpy(acc, row, sizeof(acc));
            uint32_t flags = 0;
            for (int b = 0; b < 4; ++b)
                if ((row[kN] >> (b * kCountBits)) & ((int64_t{1} << kCountBits) - 1)) flags |= 1u << b;
            out[i] = wf::round_limbs<T, kN>(acc, flags, out[i]);
            continue;
        }
        const i128 total = agree[2 * i] < 0 ? 0 : (static_cast<i128>(pair[2 * i]) << k) + pair[2 * i + 1];
        if (total == 0) {
            const S initial = wf::StateOf<T>::of(out[i]);
            const wf::Split<S> s = wf::split(initial);
            if (needs_positive_zero_flag(wf::special_flag(initial), s.negative && s.significand == 0))
                zeros.push_back(i);
            continue;  // otherwise the element keeps its value, as every strategy leaves it
        }
        const int low = -agree[2 * i + 1];
        // A zero target (an all-reduce's): rounded straight from the two words, as on a GPU.
        const S initial = wf::StateOf<T>::of(out[i]);
        if (wf::split(initial).significand == 0 && !(wf::special_flag(initial) & kSpecialFlags)) {
            out[i] = wf::dist::round_words<T>(pair[2 * i], pair[2 * i + 1], low, k);
            continue;
        }
        wf::i64 acc[kN] = {};
        const i128 mask = (i128(1) << 48) - 1;
        wf::add_at<kN>(acc, static_cast<int64_t>(total & mask), low);
        wf::add_at<kN>(acc, static_cast<int64_t>((total >> 48) & mask), low + 48);
        wf::add_at<kN>(acc, static_cast<int64_t>(total >> 96), low + 96);
        out[i] = wf::round_limbs<T, kN>(acc, 0, out[i]);
    }

    // 5. Whether any rank added +0.0, where that decides the result's sign (a -0.0 target) or a
    //    NaN target's payload (the same elements on every rank: the sums and targets agree).
    if (zeros.empty()) return;
    std::vector<int32_t> positive(zeros.size());
    for (size_t z = 0; z < zeros.size(); ++z)
        positive[z] = (src.partial(zeros[z]).flags & wf::kFlagPosZero) ? 1 : 0;
    e.max_i32(positive.data(), positive.size(), "the signs of zero sums of a deterministic all-reduce");
    for (size_t z = 0; z < zeros.size(); ++z) {
        wf::i64 acc[kN] = {};
        out[zeros[z]] = wf::round_limbs<T, kN>(acc, positive[z] ? wf::kFlagPosZero : 0u, out[zeros[z]]);
    }
}

template <class F>
void with_type(DType dtype, F&& f) {
    switch (dtype) {
        case DType::Float16: return f(wf::f16{});
        case DType::BFloat16: return f(wf::bf16{});
        case DType::Float32: return f(float{});
        case DType::Float64: return f(double{});
        default:
            throw Error(std::string("a deterministic all-reduce sums float16, bfloat16, float32 or float64 "
                                    "elements, not ") +
                        dtype_name(dtype));
    }
}

}  // namespace

int state_words(DType dtype) {
    return dtype == DType::Float64 ? kLimbs<double> : kLimbs<float>;
}

void PartialSums::reset(DType type, size_t elements) {
    dtype = type;
    words_per = state_words(type);
    words.assign(elements * static_cast<size_t>(words_per), 0);
    flags.assign(elements, 0);
}

void PartialSums::normalize(size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
        Word* w = at(i);
        Word carry = 0;
        for (int k = 0; k + 1 < words_per; ++k) {
            const Word v = w[k] + carry;
            w[k] = v & 0xffffffff;
            carry = v >> 32;  // arithmetic: floor
        }
        w[words_per - 1] += carry;
    }
}

void exact_allreduce(const Engine& engine, DType dtype, void* values, size_t n) {
    with_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        const std::vector<T> in(static_cast<const T*>(values), static_cast<const T*>(values) + n);
        T* out = static_cast<T*>(values);
        std::memset(out, 0, n * sizeof(T));  // +0.0: the target one device would accumulate into
        reduce<T>(engine, Values<T>{in.data()}, out, n);
    });
}

void exact_reduce(const Engine& engine, const PartialSums& partial, void* elements, size_t n) {
    with_type(partial.dtype, [&](auto tag) {
        using T = decltype(tag);
        reduce<T>(engine, States<T>{partial}, static_cast<T*>(elements), n);
    });
}

size_t window_bytes_per_element() {
    return 2 * sizeof(int32_t) + 2 * sizeof(int64_t);
}

size_t fallback_bytes_per_element(DType dtype) {
    return static_cast<size_t>(state_words(dtype) + 1) * sizeof(int64_t);
}

}  // namespace weft::distributed
