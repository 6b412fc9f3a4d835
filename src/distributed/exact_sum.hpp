// The exact sum over ranks in a compact form (docs/design/0028): an exponent window agreed
// across ranks, then a fixed-point sum in two 64-bit words per element added with an integer
// all-reduce, then one rounding; elements outside the window fall back to the full digits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "distributed/engine.hpp"
#include "weft/dtype.hpp"

namespace weft::distributed {

// Digit words per element of a target of `dtype` (float16, bfloat16 and float32 keep float32's
// state): 32-bit digits in 64-bit words in units of the state type's smallest subnormal, wide
// enough for any sum of ranks' sums that a launch can hold (14 for float32, 70 for float64).
int state_words(DType dtype);

// One rank's exact partial sums of the elements of a target: state_words(dtype) words and the
// special-value flags (device/deterministic.h's kFlag*) per element.
struct PartialSums {
    using Word = long long;  // the device headers' wf::i64
    DType dtype = DType::Float32;
    int words_per = 0;
    std::vector<Word> words;
    std::vector<uint32_t> flags;

    void reset(DType type, size_t elements);
    size_t size() const { return flags.size(); }
    Word* at(size_t element) { return words.data() + element * static_cast<size_t>(words_per); }
    const Word* at(size_t element) const { return words.data() + element * static_cast<size_t>(words_per); }
    // Carries every word of elements [begin, end) into 32-bit digits, the last word keeping the
    // rest with the sign, so that words can be added to again without overflowing.
    void normalize(size_t begin, size_t end);
};

// Replaces `values` (n scalars of `dtype` in host memory, float16 to float64) by their exact
// sum over the ranks, correctly rounded (a deterministic accumulation into +0.0).
void exact_allreduce(const Engine& engine, DType dtype, void* values, size_t n);

// Adds every rank's `partial` to `elements` (its n scalars in host memory, the same values on
// every rank) and rounds each element once.
void exact_reduce(const Engine& engine, const PartialSums& partial, void* elements, size_t n);

// The bytes per element the window form moves (the agreement and the two words), and the
// fallback's per element, for `dtype`.
size_t window_bytes_per_element();
size_t fallback_bytes_per_element(DType dtype);

}  // namespace weft::distributed
