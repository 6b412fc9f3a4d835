// DLPack interchange (weft/dlpack.hpp): exported tensors hold a Weft array; imported ones are wrapped.
#include "weft/dlpack.hpp"

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "weft/error.hpp"

namespace weft {

namespace {

[[noreturn]] void fail(const std::source_location& s, const std::string& message) {
    throw Error(message, "", s.file_name(), s.line());
}

// The imported tensors Weft owns now (until their deleter runs): DLPack hands a tensor over
// once, and a second import would run its deleter twice.
struct Owned {
    std::mutex mutex;
    std::set<const DLManagedTensor*> tensors;
};
Owned& owned() {
    static Owned o;
    return o;
}

// What an exported tensor owns: the array (so its memory lives) and the shape and strides the
// DLTensor points at.
struct Exported {
    AnyArray array;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    DLManagedTensor tensor{};
};

DLDataType dl_type(DType t, const std::source_location& s) {
    const auto bits = static_cast<uint8_t>(8 * dtype_size(t));
    switch (t) {
        case DType::Bool:
#if DLPACK_VERSION >= 80
            return {kDLBool, 8, 1};
#else
            fail(s, "to_dlpack: DLPack " + std::to_string(DLPACK_VERSION) +
                        " has no bool type; export the values as an int32 array (copy them into one)");
#endif
        case DType::Int32:
        case DType::Int64: return {kDLInt, bits, 1};
        case DType::UInt32:
        case DType::UInt64: return {kDLUInt, bits, 1};
        case DType::BFloat16: return {kDLBfloat, bits, 1};
        default: return {kDLFloat, bits, 1};
    }
}

// The Weft type of a DLPack element, or a weft::Error naming it.
DType weft_type(const DLDataType& t, const std::source_location& s) {
    const std::string what = "from_dlpack: elements of type code " + std::to_string(t.code) + ", " +
                             std::to_string(t.bits) + " bits";
    if (t.lanes != 1)
        fail(s, what + " and " + std::to_string(t.lanes) + " lanes: Weft takes one lane per element");
    switch (t.code) {
        case kDLFloat:
            if (t.bits == 16) return DType::Float16;
            if (t.bits == 32) return DType::Float32;
            if (t.bits == 64) return DType::Float64;
            break;
        case kDLBfloat:
            if (t.bits == 16) return DType::BFloat16;
            break;
        case kDLInt:
            if (t.bits == 32) return DType::Int32;
            if (t.bits == 64) return DType::Int64;
            break;
        case kDLUInt:
            if (t.bits == 32) return DType::UInt32;
            if (t.bits == 64) return DType::UInt64;
            break;
#if DLPACK_VERSION >= 80
        case kDLBool:
            if (t.bits == 8) return DType::Bool;
            break;
#endif
        default: break;
    }
    fail(s, what +
                ": Weft's element types are bool, int32, uint32, int64, uint64, float16, bfloat16, float32 "
                "and float64; convert the tensor to one of them first");
}

}  // namespace

DLManagedTensor* to_dlpack(const AnyArray& a, std::source_location s) {
    if (!a.valid()) fail(s, "to_dlpack of an empty (default-constructed) array");
    auto owner = std::make_unique<Exported>();
    owner->array = a;
    const auto scalar = static_cast<int64_t>(dtype_size(a.dtype()));
    for (int d = 0; d < a.ndim(); ++d) {
        owner->shape.push_back(a.shape()[d]);
        owner->strides.push_back(a.stride(d) / scalar);
    }
    if (a.components() > 1) {  // the components, densely packed: one more dimension
        owner->shape.push_back(a.components());
        owner->strides.push_back(1);
    }
    DLTensor& t = owner->tensor.dl_tensor;
    t.data = a.data();
    t.device = a.device().is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, a.device().ordinal()};
    t.ndim = static_cast<int>(owner->shape.size());
    t.dtype = dl_type(a.dtype(), s);
    t.shape = owner->shape.data();
    t.strides = owner->strides.data();
    t.byte_offset = 0;
    owner->tensor.manager_ctx = owner.get();
    owner->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
    return &owner.release()->tensor;
}

AnyArray from_dlpack(DLManagedTensor* tensor, std::source_location s) {
    if (tensor == nullptr) fail(s, "from_dlpack of a null DLManagedTensor");
    const DLTensor& t = tensor->dl_tensor;
    Device device = Device::cpu();
    switch (t.device.device_type) {
        case kDLCPU:
        case kDLCUDAHost: break;  // pinned host memory is host memory
        case kDLCUDA: device = Device::cuda(t.device.device_id); break;
        default:
            fail(s, "from_dlpack: the tensor is on DLPack device type " +
                        std::to_string(t.device.device_type) +
                        "; Weft takes the CPU (kDLCPU, kDLCUDAHost) and CUDA GPUs (kDLCUDA)");
    }
    const DType dtype = weft_type(t.dtype, s);
    if (t.ndim > 4 || t.ndim < 0)
        fail(s, "from_dlpack: the tensor has " + std::to_string(t.ndim) +
                    " dimensions; Weft arrays have 1 to 4 (reshape it first)");
    if (t.ndim > 0 && t.shape == nullptr) fail(s, "from_dlpack: the tensor has dimensions but no shape");
    Shape shape{1};
    std::vector<int64_t> strides;
    if (t.ndim > 0) {
        shape.ndim = t.ndim;
        for (int d = 0; d < t.ndim; ++d) shape.dims[d] = t.shape[d];
        if (t.strides)
            for (int d = 0; d < t.ndim; ++d) {
                int64_t bytes = 0;  // (an overflowed product would wrap to a small stride, even 0)
                if (__builtin_mul_overflow(t.strides[d], static_cast<int64_t>(dtype_size(dtype)), &bytes))
                    fail(s,
                         "from_dlpack: the stride of dimension " + std::to_string(d) + " is " +
                             std::to_string(t.strides[d]) +
                             " elements, more than 2^63 - 1 bytes; copy the tensor into a dense one first");
                strides.push_back(bytes);
            }
    }
    char* data = static_cast<char*>(t.data) + t.byte_offset;
    {
        std::lock_guard lock(owned().mutex);
        if (!owned().tensors.insert(tensor).second)
            fail(s,
                 "from_dlpack: this tensor was imported already and is Weft's now (DLPack hands a tensor "
                 "over once); share the first import's array, or ask its library for a new tensor");
    }
    try {
        return AnyArray::wrap(
            data, dtype, 1, shape, device, std::move(strides),
            [tensor] {
                {
                    std::lock_guard lock(owned().mutex);
                    owned().tensors.erase(tensor);
                }
                if (tensor->deleter) tensor->deleter(tensor);
            },
            s);
    } catch (...) {  // refused: the tensor stays the caller's
        std::lock_guard lock(owned().mutex);
        owned().tensors.erase(tensor);
        throw;
    }
}

}  // namespace weft
