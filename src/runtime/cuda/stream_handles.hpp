// What weft::Stream and weft::Event hold on a GPU: a stream's state, an event of the driver.
#pragma once

#include <memory>

#include "runtime/cuda/context.hpp"

namespace weft::detail {

struct StreamHandle {
    std::shared_ptr<runtime::cuda::StreamState> state;
};

struct EventHandle {
    int ordinal = 0;
    runtime::cuda::CUevent event = nullptr;
    bool recorded = false;
    ~EventHandle() {
        if (event && runtime::cuda::bind_for_release(ordinal)) runtime::cuda::driver()->cuEventDestroy(event);
    }
};

}  // namespace weft::detail
