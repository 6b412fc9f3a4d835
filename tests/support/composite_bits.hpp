// The bit patterns of host vec3f values, component by component, for bit-for-bit comparisons.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>
#include <weft/weft.hpp>

namespace weft::test {

inline std::vector<uint32_t> bits(const std::vector<host::vec3f>& v) {
    std::vector<uint32_t> b(v.size() * 3);
    std::memcpy(b.data(), v.data(), b.size() * sizeof(uint32_t));
    return b;
}

}  // namespace weft::test
