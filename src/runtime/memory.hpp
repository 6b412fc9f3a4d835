// Device memory allocations, shared by arrays and views of them.
#pragma once

#include <cstddef>
#include <memory>

#include "weft/device.hpp"

namespace weft::detail {

struct Allocation {
    void* ptr = nullptr;
    size_t bytes = 0;
    Device device = Device::cpu();
    ~Allocation();
};

std::shared_ptr<Allocation> allocate(Device device, size_t bytes);

}  // namespace weft::detail
