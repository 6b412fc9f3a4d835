// A buffer allocated through the CUDA driver directly (not by Weft), used as a Weft array and
// through DLPack without copies, and freed by its owner's release callback.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>
#include <weft/weft.hpp>
#if defined(WEFT_DLPACK)
#include <weft/dlpack.hpp>
#endif

#include "support/test_device.hpp"

namespace {

using weft::Array;

// The few driver entry points the test calls, loaded as Weft loads the driver (at run time).
struct Driver {
    using Ptr = unsigned long long;  // CUdeviceptr
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    template <class F>
    F get(const char* name) {
        return library ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
    }
    int (*init)(unsigned) = get<int (*)(unsigned)>("cuInit");
    int (*device_get)(int*, int) = get<int (*)(int*, int)>("cuDeviceGet");
    int (*retain)(void**, int) = get<int (*)(void**, int)>("cuDevicePrimaryCtxRetain");
    int (*push)(void*) = get<int (*)(void*)>("cuCtxPushCurrent_v2");
    int (*pop)(void**) = get<int (*)(void**)>("cuCtxPopCurrent_v2");
    int (*alloc)(Ptr*, size_t) = get<int (*)(Ptr*, size_t)>("cuMemAlloc_v2");
    int (*free)(Ptr) = get<int (*)(Ptr)>("cuMemFree_v2");
    int (*to_device)(Ptr, const void*, size_t) = get<int (*)(Ptr, const void*, size_t)>("cuMemcpyHtoD_v2");
    int (*to_host)(void*, Ptr, size_t) = get<int (*)(void*, Ptr, size_t)>("cuMemcpyDtoH_v2");
    void* context = nullptr;

    bool ready() {
        int device = 0;
        return library && init && init(0) == 0 && device_get(&device, 0) == 0 &&
               retain(&context, device) == 0;
    }
    // Runs `f` with the primary context of GPU 0 current (the one Weft uses).
    template <class F>
    int in_context(F f) {
        if (push(context) != 0) return -1;
        const int status = f();
        void* popped = nullptr;
        pop(&popped);
        return status;
    }
};

TEST(ExternalMemoryGpu, ADriverAllocatedBufferIsAWeftArrayAndIsFreedByItsRelease) {
    Driver cu;
    ASSERT_TRUE(cu.ready()) << "the CUDA driver's entry points could not be loaded or initialised";
    const int n = 1024;
    std::vector<float> host(n);
    std::iota(host.begin(), host.end(), 0.0f);
    Driver::Ptr ptr = 0;
    ASSERT_EQ(cu.in_context([&] { return cu.alloc(&ptr, n * sizeof(float)); }), 0);
    ASSERT_EQ(cu.in_context([&] { return cu.to_device(ptr, host.data(), n * sizeof(float)); }), 0);

    int freed = 0;
    const weft::Device gpu = weft::Device::cuda(0);
    auto a = weft::wrap<float>(reinterpret_cast<void*>(ptr), n, gpu, {}, [&cu, ptr, &freed] {
        if (cu.in_context([&] { return cu.free(ptr); }) == 0) ++freed;
    });
    weft::Module m{"external_gpu"};
    auto twice = m.kernel("twice", {"a"}, [](Array<float> a) {
        auto t = weft::tid();
        a[t] = 2.0f * a[t] + 1.0f;
    });
    weft::launch(twice, n, a);
    weft::synchronize(gpu);
    // The driver reads what the kernel wrote: the same memory, no copy.
    std::vector<float> got(n);
    ASSERT_EQ(cu.in_context([&] { return cu.to_host(got.data(), ptr, n * sizeof(float)); }), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * i + 1.0f) << i;

#if defined(WEFT_DLPACK)
    DLManagedTensor* t = weft::to_dlpack(a.slice(0, 512, n));
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(reinterpret_cast<Driver::Ptr>(t->dl_tensor.data), ptr + 512 * sizeof(float));
    auto back = weft::DeviceArray<float>::of(weft::from_dlpack(t));
    a = {};
    EXPECT_EQ(freed, 0) << "the DLPack tensor still holds the memory";
    EXPECT_EQ(back.to_vector()[0], 2.0f * 512 + 1.0f);
    back = {};
#else
    a = {};
#endif
    EXPECT_EQ(freed, 1);
}

}  // namespace
