// NCCL, loaded from libnccl.so.2 with dlopen at first use, as a table of the few entry points
// Weft calls (declared here, as the CUDA driver's are: building Weft needs no NCCL headers).
#pragma once

#include <cstddef>
#include <string>

#include "runtime/cuda/driver.hpp"

namespace weft::distributed::nccl {

using ncclResult_t = int;
using ncclComm_t = struct ncclComm*;
struct ncclUniqueId {
    char internal[128];
};
// ncclDataType_t and ncclRedOp_t values (nccl.h).
enum DataType : int { Int32 = 2, Int64 = 4, Float16 = 6, Float32 = 7, Float64 = 8, BFloat16 = 9 };
enum RedOp : int { Sum = 0, Max = 2 };

#define WEFT_NCCL_FUNCTIONS(X)                                                                  \
    X(ncclGetVersion, int*)                                                                     \
    X(ncclGetUniqueId, ncclUniqueId*)                                                           \
    X(ncclCommInitRank, ncclComm_t*, int, ncclUniqueId, int)                                    \
    X(ncclCommInitAll, ncclComm_t*, int, const int*)                                            \
    X(ncclCommDestroy, ncclComm_t)                                                              \
    X(ncclCommAbort, ncclComm_t)                                                                \
    X(ncclAllReduce, const void*, void*, size_t, int, int, ncclComm_t, runtime::cuda::CUstream) \
    X(ncclBroadcast, const void*, void*, size_t, int, int, ncclComm_t, runtime::cuda::CUstream)

struct Library {
#define WEFT_NCCL_FIELD(name, ...) ncclResult_t (*name)(__VA_ARGS__) = nullptr;
    WEFT_NCCL_FUNCTIONS(WEFT_NCCL_FIELD)
#undef WEFT_NCCL_FIELD
    const char* (*ncclGetErrorString)(ncclResult_t) = nullptr;
    int version = 0;
    std::string path;  // where it was loaded from
};

// The loaded library, or a weft::Error saying where it was looked for: WEFT_NCCL (only there when
// set), the dynamic loader's path, CUDA_HOME / CUDA_PATH / /usr/local/cuda (lib64, lib), and the
// NVIDIA Python wheels' nvidia/nccl/lib under the Python site-packages folders.
const Library& library();

// Throws weft::Error "<what>: <NCCL's message>" unless `r` is ncclSuccess.
void check(ncclResult_t r, const char* what);

}  // namespace weft::distributed::nccl
