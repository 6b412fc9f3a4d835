// array_scan: checks, then the backend's scan (left to right on the CPU, tiled on a GPU).
#include "weft/scan.hpp"

#include "runtime/backend.hpp"
#include "runtime/graph_capture.hpp"
#include "weft/error.hpp"

namespace weft {

void array_scan(const AnyArray& in, const AnyArray& out, bool inclusive) {
    if (!in.valid() || !out.valid())
        throw Error("array_scan: an array argument is empty (default-constructed)");
    if (in.dtype() != out.dtype())
        throw Error(std::string("array_scan: input is ") + dtype_name(in.dtype()) + " but output is " +
                    dtype_name(out.dtype()) + "; use arrays of one type");
    if ((in.dtype() != DType::Int32 && in.dtype() != DType::Float32) || in.components() != 1 ||
        out.components() != 1)
        throw Error(std::string("array_scan supports int32 and float32 arrays, got ") +
                    dtype_name(in.dtype()) +
                    (in.components() != 1 || out.components() != 1 ? " elements of several components" : ""));
    if (in.ndim() != 1 || out.ndim() != 1 || in.size() != out.size())
        throw Error("array_scan needs two 1-D arrays of equal size, got sizes " + std::to_string(in.size()) +
                    " and " + std::to_string(out.size()));
    if (in.device() != out.device())
        throw Error("array_scan: input is on " + in.device().name() + " but output is on " +
                    out.device().name());
    // Inside a capture that records operations (the CPU's) the scan is recorded, and runs at each
    // replay (a GPU capture records its kernels).
    if (runtime::Capture* capture = runtime::recording_capture(in.device())) {
        capture->bodies.back().push_back([in, out, inclusive] { array_scan(in, out, inclusive); });
        return;
    }
    // Views: a strided array, or an output that overlaps the input without being the same
    // elements, is scanned in a contiguous copy. (One array scanned in place is fine.)
    const bool same_elements = in.data() == out.data() && (in.size() < 2 || in.stride(0) == out.stride(0));
    if (!in.is_contiguous() || !out.is_contiguous() || (!same_elements && may_share_memory(in, out))) {
        const AnyArray dense = in.to(in.device());
        array_scan(dense, dense, inclusive);
        copy(out, dense);
        return;
    }
    runtime::backend(in.device()).scan(in.dtype(), in.data(), out.data(), in.size(), inclusive);
}

}  // namespace weft
