// A 128-bit content hash for cache keys and integrity checks (not cryptographic).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace weft::base {

class Hasher {
public:
    Hasher& add(std::string_view bytes);
    Hasher& add(uint64_t value);
    // 32 hexadecimal digits.
    std::string hex() const;

private:
    // Two independent FNV-1a lanes with different offsets and a final avalanche each.
    uint64_t a_ = 0xcbf29ce484222325ull;
    uint64_t b_ = 0x84222325cbf29ce4ull;
};

std::string hash_hex(std::string_view bytes);

}  // namespace weft::base
