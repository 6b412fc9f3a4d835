// Spans of target arrays and the choice of backend for deterministic accumulation.
#include "runtime/det/accumulation.hpp"

#include "runtime/det/cpu_accumulation.hpp"
#include "runtime/det/cuda_accumulation.hpp"

namespace weft::runtime::det {

Span span_of(const AnyArray& array) {
    if (array.size() == 0) return {static_cast<char*>(array.data()), 0};
    int64_t low = 0;
    int64_t high = 0;
    for (int d = 0; d < array.ndim(); ++d) {
        const int64_t reach = (array.shape()[d] - 1) * array.stride(d);
        (reach < 0 ? low : high) += reach;
    }
    const auto element = static_cast<int64_t>(dtype_size(array.dtype()));
    return {static_cast<char*>(array.data()) + low, (high - low) / element + 1};
}

std::unique_ptr<Accumulation> prepare(Device device, const std::vector<ir::DetTarget>& targets,
                                      const std::vector<const AnyArray*>& arrays) {
    if (device.is_cpu()) return prepare_cpu(targets, arrays);
    return prepare_cuda(device.ordinal(), targets, arrays);
}

}  // namespace weft::runtime::det
