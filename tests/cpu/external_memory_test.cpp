// Arrays over memory Weft did not allocate (weft::wrap) and DLPack interchange, on every device.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>
#include <weft/weft.hpp>
#if defined(WEFT_DLPACK)
#include <weft/dlpack.hpp>
#endif

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::test::error_from;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

weft::Module& module() {
    static weft::Module m{"external_memory"};
    return m;
}

// a[t] = 2 * a[t] + t
auto& twice() {
    static auto k = module().kernel("twice", {"a"}, [](Array<float> a) {
        auto t = weft::tid();
        a[t] = 2.0f * a[t] + weft::Float(t);
    });
    return k;
}

TEST(Wrap, HostMemoryIsSharedWithoutACopy) {
    WEFT_SKIP_UNLESS_CPU();
    std::vector<float> host = {1, 2, 3, 4, 5, 6, 7, 8};
    auto a = weft::wrap<float>(host.data(), 8, dev());
    EXPECT_EQ(a.data(), host.data());
    weft::launch(twice(), 8, a);
    EXPECT_EQ(host, (std::vector<float>{2, 5, 8, 11, 14, 17, 20, 23}));
    // Byte strides: the first 3 of every 4 floats, as a 2 x 3 array.
    auto rows = weft::wrap<float>(host.data(), {2, 3}, dev(), {16, 4});
    EXPECT_FALSE(rows.is_contiguous());
    EXPECT_EQ(rows.to_vector(), (std::vector<float>{2, 5, 8, 14, 17, 20}));
    rows.transpose().fill_(0.0f);
    EXPECT_EQ(host, (std::vector<float>{0, 0, 0, 11, 0, 0, 0, 23}));
}

// The memory here is a Weft array's, used as another library's would be: the release callback
// owns it (by holding that array) and runs once, when the last array or view is gone.
TEST(Wrap, ReleaseRunsOnceWhenTheLastArrayIsGone) {
    int released = 0;
    auto owner = weft::from_vector<float>({1, 2, 3, 4}, dev());
    void* memory = owner.data();
    auto a = weft::wrap<float>(memory, 4, dev(), {}, [owner, &released] { ++released; });
    owner = {};
    auto view = a.slice(0, 1, 3);
    a = {};
    EXPECT_EQ(released, 0);
    weft::launch(twice(), 2, view);
    EXPECT_EQ(view.to_vector(), (std::vector<float>{4, 7}));
    // A gradient for wrapped memory is Weft's own.
    view.requires_grad_();
    EXPECT_EQ(view.grad().to_vector(), (std::vector<float>{0, 0}));
    view = {};
    EXPECT_EQ(released, 1);
}

TEST(Wrap, BadInputIsAWeftErrorNamingTheLine) {
    auto owner = weft::zeros<float>(16, dev());
    auto* base = static_cast<char*>(owner.data());
    int line = __LINE__ + 1;
    weft::Error e = error_from([&] { (void)weft::wrap<float>(nullptr, 4, dev()); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "the data pointer is null but the array has elements")) << e.message();
    EXPECT_TRUE(weft::wrap<float>(nullptr, 0, dev()).valid());  // no elements: no memory needed
    e = error_from([&] { (void)weft::wrap<float>(base + 2, 4, dev()); });
    EXPECT_TRUE(has(e.message(), "not aligned to the size of float32 (4 bytes)")) << e.message();
    e = error_from([&] { (void)weft::wrap<float>(base, {2, 2}, dev(), {-8, 4}); });
    EXPECT_TRUE(has(e.message(), "the stride of dimension 0 is -8 bytes; strides are >= 0")) << e.message();
    e = error_from([&] { (void)weft::wrap<float>(base, {2, 2}, dev(), {6, 4}); });
    EXPECT_TRUE(has(e.message(), "multiples of 4")) << e.message();
    e = error_from([&] { (void)weft::wrap<float>(base, {2, 2}, dev(), {8}); });
    EXPECT_TRUE(has(e.message(), "1 strides for an array of 2 dimensions")) << e.message();
    // Strides whose products overflow (issue 32, item 14): 4 * 2^62 bytes wrapped to a span of 4.
    e = error_from([&] { (void)weft::wrap<float>(base, 5, dev(), {int64_t{1} << 62}); });
    EXPECT_TRUE(has(e.message(), "spans more than 2^63 - 1 bytes (dimension 0: 5 elements")) << e.message();
    e = error_from([&] { (void)weft::wrap<float>(base, {3, int64_t{1} << 61}, dev()); });
    EXPECT_TRUE(has(e.message(), "spans more than 2^63 - 1 bytes")) << e.message();
    e = error_from([&] { (void)weft::wrap<float>(reinterpret_cast<float*>(~uintptr_t{0} - 15), 8, dev()); });
    EXPECT_TRUE(has(e.message(), "run past the end of the address space")) << e.message();
    // A view of 2^40 elements (broadcast over 4 bytes) cannot come to the host: a weft::Error, not
    // std::bad_alloc (issue 32, item 18).
    const auto huge = weft::wrap<float>(base, {int64_t{1} << 20, int64_t{1} << 20}, dev(), {0, 0});
    line = __LINE__ + 1;
    e = error_from([&] { (void)huge.to_vector(); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "host memory cannot hold the array's 1099511627776 elements"))
        << e.message();
    // A GPU that this machine does not have (issue 32, item 12): refused here, the release not run
    // (it stays the caller's).
    int released = 0;
    e = error_from(
        [&] { (void)weft::wrap<float>(base, 4, weft::Device::cuda(63), {}, [&] { ++released; }); });
    EXPECT_TRUE(has(e.message(), "wrap: device 'cuda:63' is not available")) << e.message();
    EXPECT_EQ(released, 0);
    line = __LINE__ + 1;
    e = error_from([&] { (void)weft::DeviceArray<int>::of(owner); });
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
    EXPECT_TRUE(has(e.message(), "the array's elements are float32, not int32")) << e.message();
}

#if defined(WEFT_DLPACK)

TEST(DLPack, ExportDescribesTheArrayAndKeepsItAlive) {
    auto a = weft::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, dev());
    DLManagedTensor* t = weft::to_dlpack(a.transpose());
    const void* data = a.data();
    a = {};  // the tensor holds the memory
    EXPECT_EQ(t->dl_tensor.data, data);
    EXPECT_EQ(t->dl_tensor.device.device_type, dev().is_cpu() ? kDLCPU : kDLCUDA);
    EXPECT_EQ(t->dl_tensor.device.device_id, dev().is_cpu() ? 0 : dev().ordinal());
    EXPECT_EQ(t->dl_tensor.ndim, 2);
    EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
    EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
    EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
    EXPECT_EQ(t->dl_tensor.shape[0], 3);
    EXPECT_EQ(t->dl_tensor.shape[1], 2);
    EXPECT_EQ(t->dl_tensor.strides[0], 1);  // in elements
    EXPECT_EQ(t->dl_tensor.strides[1], 3);
    // Imported back: the same memory, the same view, and the tensor's deleter runs at the end.
    auto back = weft::DeviceArray<float>::of(weft::from_dlpack(t));
    EXPECT_EQ(back.data(), data);
    EXPECT_EQ(back.to_vector(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(DLPack, CompositeElementsExportTheirComponentsAsADimension) {
    auto v = weft::from_vector<weft::vec3>({{1, 2, 3}, {4, 5, 6}}, dev());
    DLManagedTensor* t = weft::to_dlpack(v);
    EXPECT_EQ(t->dl_tensor.ndim, 2);
    EXPECT_EQ(t->dl_tensor.shape[1], 3);
    EXPECT_EQ(t->dl_tensor.strides[0], 3);
    EXPECT_EQ(t->dl_tensor.strides[1], 1);
    const auto scalars = weft::DeviceArray<float>::of(weft::from_dlpack(t));
    EXPECT_EQ(scalars.shape(), weft::Shape({2, 3}));
    EXPECT_EQ(scalars.to_vector(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// A tensor made as another library makes one: its deleter runs once, after the last array of it.
struct Foreign {
    weft::DeviceArray<int> memory;
    int64_t shape[5] = {2, 2, 1, 1, 1};
    DLManagedTensor tensor{};
    int deleted = 0;

    explicit Foreign(weft::Device device) : memory(weft::from_vector<int>({1, 2, 3, 4}, device)) {
        tensor.dl_tensor.data = memory.data();
        tensor.dl_tensor.device = device.is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, device.ordinal()};
        tensor.dl_tensor.ndim = 2;
        tensor.dl_tensor.dtype = {kDLInt, 32, 1};
        tensor.dl_tensor.shape = shape;
        tensor.dl_tensor.strides = nullptr;  // dense, row-major
        tensor.manager_ctx = this;
        tensor.deleter = [](DLManagedTensor* self) { ++static_cast<Foreign*>(self->manager_ctx)->deleted; };
    }
};

TEST(DLPack, ImportTakesOwnershipAndCallsTheDeleterOnce) {
    Foreign foreign(dev());
    {
        auto a = weft::DeviceArray<int>::of(weft::from_dlpack(&foreign.tensor));
        EXPECT_EQ(a.shape(), weft::Shape({2, 2}));
        auto row = a[1];
        a = {};
        row.fill_(9);
        EXPECT_EQ(foreign.deleted, 0);
    }
    EXPECT_EQ(foreign.deleted, 1);
    EXPECT_EQ(foreign.memory.to_vector(), (std::vector<int>{1, 2, 9, 9}));
}

// Once imported, a tensor is Weft's: a second import of it is refused, and its deleter runs once
// (issue 32, item 11: it ran twice, "double free detected").
TEST(DLPack, ASecondImportOfATensorWeftOwnsIsRefused) {
    Foreign foreign(dev());
    {
        auto a = weft::DeviceArray<int>::of(weft::from_dlpack(&foreign.tensor));
        const int line = __LINE__ + 1;
        const weft::Error e = error_from([&] { (void)weft::from_dlpack(&foreign.tensor); });
        EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
        EXPECT_TRUE(has(e.message(), "this tensor was imported already and is Weft's now")) << e.message();
        EXPECT_EQ(a.to_vector(), (std::vector<int>{1, 2, 3, 4}));
    }
    EXPECT_EQ(foreign.deleted, 1);
}

TEST(DLPack, UnsupportedTensorsAreRefusedAndStayTheCallers) {
    Foreign foreign(dev());
    DLTensor& t = foreign.tensor.dl_tensor;
    const auto refused = [&](const std::string& text) {
        const int line = __LINE__ + 1;
        const weft::Error e = error_from([&] { (void)weft::from_dlpack(&foreign.tensor); });
        EXPECT_EQ(e.line(), static_cast<uint32_t>(line));
        EXPECT_TRUE(has(e.message(), text)) << e.message();
    };
    t.dtype = {kDLInt, 8, 1};
    refused("type code 0, 8 bits: Weft's element types are bool, int32");
    t.dtype = {kDLFloat, 32, 4};
    refused("4 lanes: Weft takes one lane per element");
    t.dtype = {kDLInt, 32, 1};
    t.ndim = 5;
    refused("the tensor has 5 dimensions; Weft arrays have 1 to 4");
    t.ndim = -1;  // (issue 32, item 14: taken as a 0-D tensor before)
    refused("the tensor has -1 dimensions; Weft arrays have 1 to 4");
    t.ndim = 2;
    int64_t huge[2] = {int64_t{1} << 62, 1};  // 2^62 elements of 4 bytes: 0 bytes, wrapped
    t.strides = huge;
    refused("the stride of dimension 0 is 4611686018427387904 elements, more than 2^63 - 1 bytes");
    t.strides = nullptr;
    t.device = {kDLCUDA, 63};  // a GPU this machine does not have (issue 32, item 12)
    refused("device 'cuda:63' is not available");
    t.device = {kDLOpenCL, 0};
    refused("DLPack device type 4; Weft takes the CPU");
    EXPECT_EQ(foreign.deleted, 0);
    t.device = dev().is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, dev().ordinal()};
    t.ndim = 0;  // a 0-D tensor: one element
    EXPECT_EQ(weft::DeviceArray<int>::of(weft::from_dlpack(&foreign.tensor)).to_vector(),
              std::vector<int>{1});
    EXPECT_EQ(foreign.deleted, 1);
}

#else

TEST(DLPack, BuiltWithoutDLPack) {
    GTEST_SKIP() << "Weft was configured without DLPack (dlpack/dlpack.h, Debian package libdlpack-dev, was "
                    "not found), so weft/dlpack.hpp is not built";
}

#endif

}  // namespace
