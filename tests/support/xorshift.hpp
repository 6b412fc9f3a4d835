// The xorshift32 step that the slot tests draw their pseudo-random cases from.
#pragma once

#include <cstdint>

namespace weft::test {

// Advances `x` one step and returns it: cheap, and the same sequence on every platform.
inline uint32_t xorshift(uint32_t& x) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

}  // namespace weft::test
