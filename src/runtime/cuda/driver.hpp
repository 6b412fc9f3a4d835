// The CUDA driver API, loaded from libcuda with dlopen at first use, as a table of entry points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::runtime::cuda {

// The few driver types Weft needs, declared here so that building Weft needs no CUDA headers.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUmemoryPool = struct CUmemPoolHandle_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95;
inline constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0;
inline constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
inline constexpr int CU_STREAM_CAPTURE_MODE_RELAXED = 2;

// name, return type, parameters. Each is resolved with cuGetProcAddress for the CUDA 12.0 ABI,
// which picks the right versioned symbol (cuMemAlloc -> cuMemAlloc_v2 and so on).
#define WEFT_CUDA_DRIVER_FUNCTIONS(X)                                                                    \
    X(cuInit, unsigned)                                                                                  \
    X(cuDriverGetVersion, int*)                                                                          \
    X(cuGetErrorString, CUresult, const char**)                                                          \
    X(cuDeviceGetCount, int*)                                                                            \
    X(cuDeviceGet, CUdevice*, int)                                                                       \
    X(cuDeviceGetName, char*, int, CUdevice)                                                             \
    X(cuDeviceGetAttribute, int*, int, CUdevice)                                                         \
    X(cuDeviceTotalMem, size_t*, CUdevice)                                                               \
    X(cuDevicePrimaryCtxRetain, CUcontext*, CUdevice)                                                    \
    X(cuDeviceGetDefaultMemPool, CUmemoryPool*, CUdevice)                                                \
    X(cuMemPoolSetAttribute, CUmemoryPool, int, void*)                                                   \
    X(cuCtxSetCurrent, CUcontext)                                                                        \
    X(cuCtxSynchronize)                                                                                  \
    X(cuMemAllocAsync, CUdeviceptr*, size_t, CUstream)                                                   \
    X(cuMemFreeAsync, CUdeviceptr, CUstream)                                                             \
    X(cuMemAlloc, CUdeviceptr*, size_t)                                                                  \
    X(cuMemFree, CUdeviceptr)                                                                            \
    X(cuThreadExchangeStreamCaptureMode, int*)                                                           \
    X(cuMemcpyHtoDAsync, CUdeviceptr, const void*, size_t, CUstream)                                     \
    X(cuMemcpyDtoHAsync, void*, CUdeviceptr, size_t, CUstream)                                           \
    X(cuMemcpyDtoDAsync, CUdeviceptr, CUdeviceptr, size_t, CUstream)                                     \
    X(cuMemsetD8Async, CUdeviceptr, unsigned char, size_t, CUstream)                                     \
    X(cuMemsetD16Async, CUdeviceptr, unsigned short, size_t, CUstream)                                   \
    X(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, CUstream)                                         \
    X(cuModuleLoadData, CUmodule*, const void*)                                                          \
    X(cuModuleUnload, CUmodule)                                                                          \
    X(cuModuleGetFunction, CUfunction*, CUmodule, const char*)                                           \
    X(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,  \
      CUstream, void**, void**)                                                                          \
    X(cuLaunchCooperativeKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
      unsigned, CUstream, void**)                                                                        \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, int*, CUfunction, int, size_t)                        \
    X(cuStreamCreate, CUstream*, unsigned)                                                               \
    X(cuStreamDestroy, CUstream)                                                                         \
    X(cuStreamSynchronize, CUstream)                                                                     \
    X(cuStreamWaitEvent, CUstream, CUevent, unsigned)                                                    \
    X(cuStreamBeginCapture, CUstream, int)                                                               \
    X(cuStreamEndCapture, CUstream, CUgraph*)                                                            \
    X(cuStreamIsCapturing, CUstream, int*)                                                               \
    X(cuGraphInstantiateWithFlags, CUgraphExec*, CUgraph, unsigned long long)                            \
    X(cuGraphLaunch, CUgraphExec, CUstream)                                                              \
    X(cuGraphExecDestroy, CUgraphExec)                                                                   \
    X(cuGraphDestroy, CUgraph)                                                                           \
    X(cuEventCreate, CUevent*, unsigned)                                                                 \
    X(cuEventDestroy, CUevent)                                                                           \
    X(cuEventRecord, CUevent, CUstream)                                                                  \
    X(cuEventSynchronize, CUevent)                                                                       \
    X(cuEventElapsedTime, float*, CUevent, CUevent)

struct Driver {
#define WEFT_CUDA_FIELD(name, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
    WEFT_CUDA_DRIVER_FUNCTIONS(WEFT_CUDA_FIELD)
#undef WEFT_CUDA_FIELD
    int version = 0;
};

// The loaded driver, or nullptr when CUDA is unavailable (no libcuda, no GPU, WEFT_DISABLE_CUDA
// set, or an initialisation failure); unavailable_reason() says which.
const Driver* driver();
const std::string& unavailable_reason();

// The driver, or a weft::Error naming the reason it is unavailable.
const Driver& require_driver();
// Entry point `name` for the ABI of CUDA `version` (12040 for 12.4), or nullptr when the driver
// lacks it: for the few functions that newer drivers only have (conditional graph nodes).
void* driver_symbol(const char* name, int version);
// Throws weft::Error "<what>: <driver's message>" unless `r` is CUDA_SUCCESS.
void check(CUresult r, const char* what);

}  // namespace weft::runtime::cuda
