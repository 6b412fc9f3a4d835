// Hasher implementation.
#include "base/hash.hpp"

#include <cstdio>

namespace weft::base {

namespace {

uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

}  // namespace

Hasher& Hasher::add(std::string_view bytes) {
    for (unsigned char c : bytes) {
        a_ = (a_ ^ c) * 0x100000001b3ull;
        b_ = (b_ ^ c) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
    return add(static_cast<uint64_t>(bytes.size()));
}

Hasher& Hasher::add(uint64_t value) {
    a_ = mix(a_ ^ value);
    b_ = mix(b_ + value * 0x9e3779b97f4a7c15ull);
    return *this;
}

std::string Hasher::hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(mix(a_)),
                  static_cast<unsigned long long>(mix(b_ ^ a_)));
    return buf;
}

std::string hash_hex(std::string_view bytes) {
    return Hasher().add(bytes).hex();
}

}  // namespace weft::base
