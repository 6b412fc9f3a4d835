// The prelude compiled into every generated module, by the host compiler and by NVRTC alike:
// fixed-width types, the array view, thread context, bounds checks, math and atomics.
#pragma once

#if defined(__CUDACC__)
#define WEFT_FUNC static __device__ __forceinline__
#define WEFT_KERNEL WEFT_FUNC
#define WEFT_ALWAYS_INLINE WEFT_FUNC
#else
#define WEFT_FUNC static inline
// A kernel's body is inlined into its chunk loop, so the thread's context stays in registers.
#define WEFT_KERNEL static inline __attribute__((always_inline))
// Small steps of every access and accumulation, inlined even into kernels so large that the
// compiler would otherwise call them (a call per access, and the arguments through memory).
#define WEFT_ALWAYS_INLINE static inline __attribute__((always_inline))
// A launch's threads are unordered (as on a GPU), so the loop over a chunk of them has no
// dependence between iterations that the compiler must keep: it may vectorize across threads.
#if defined(__clang__)
#define WEFT_THREADS_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define WEFT_THREADS_INDEPENDENT _Pragma("GCC ivdep")
#else
#define WEFT_THREADS_INDEPENDENT
#endif
extern "C" int printf(const char*, ...);
#endif

#include "device/abi.h"

namespace wf {

// An N-D array of T as a kernel sees it: the launch ABI's descriptor, typed.
template <class T, int N>
struct Array : ArrayDescriptor {};

struct Ctx {
    i32 tid[4];
    Error* error;
    void* block_private;  // GPU kernels with deterministic targets: the block's hot-slot accumulator
    i64 thread;           // the linear thread index
    i64 reservations;     // slot reservations this thread has made so far
    // A GPU's passes on one counter element with one position per thread (src/device/slots.h):
    // the counting pass's count of slots the thread asked for; the execution pass's slot for it.
    i32 slot;
    // The fused entry (both passes in one kernel, fused_slots.h): the reservation stays here, not in
    // the launch's state; the execution phase checks it against `asked` (the counting phase's
    // count) and notes a mismatch in `diverged`.
    bool joined;
    bool diverged;
    i32 asked;
    // The CPU launch's Launch::serial: no other thread updates what this thread's atomics do.
    bool serial;
    // The CPU worker running this thread's chunk (0 in a serial launch): no other thread of the
    // launch uses its number meanwhile, so state of its own needs no atomics (DetTarget::sums).
    i32 worker;
};

// The thread index of each of the launch's N dimensions (row-major); N is a compile-time
// constant so that the indices live in registers.
template <int N>
WEFT_FUNC void set_tid(Ctx& ctx, const Launch& launch, i64 linear) {
    if (N == 1) {
        ctx.tid[0] = static_cast<i32>(linear);
        return;
    }
#if defined(__CUDACC__)
#pragma unroll
#endif
    for (int d = N - 1; d >= 0; --d) {
        ctx.tid[d] = static_cast<i32>(linear % launch.dims[d]);
        linear /= launch.dims[d];
    }
}

// A kernel index that may be negative counts from the end, as in Python: -1 is the last element.
// The emitter applies it only to indices that can be negative (not to constants >= 0, tid() or
// unsigned values), so most accesses pay nothing.
template <class I>
WEFT_FUNC i64 wrap(I index, i64 extent) {
    const i64 i = static_cast<i64>(index);
    return i < 0 ? i + extent : i;
}

// The element at already-wrapped indices.
template <class T, int N, class... I>
WEFT_ALWAYS_INLINE T* addr(const Array<T, N>& a, I... index) {
    const i64 idx[] = {static_cast<i64>(index)...};
    i64 offset = 0;
    for (int d = 0; d < N; ++d) offset += idx[d] * a.strides[d];
    return reinterpret_cast<T*>(a.data + offset);
}
// Component `c` of the composite element at already-wrapped indices (docs/design/0015: an
// element is its components packed, T being the component's type).
template <class T, int N, class... I>
WEFT_ALWAYS_INLINE T* addr_component(const Array<T, N>& a, i32 c, I... index) {
    return addr(a, index...) + c;
}

// Component `c` of the element's address, or nullptr after recording the launch's first
// out-of-bounds access. Bit d of Wrap says index d may be negative: it is wrapped first, then
// checked, so an index below -extent is still out of bounds; the fault reports the index as the
// kernel computed it.
template <unsigned Wrap, class T, int N, class... I>
WEFT_ALWAYS_INLINE T* checked(Ctx& ctx, i32 site, const Array<T, N>& a, i32 c, I... index) {
    const i64 idx[] = {static_cast<i64>(index)...};
    i64 offset = 0;
    for (int d = 0; d < N; ++d) {
        const i64 i = (Wrap >> d) & 1u ? wrap(idx[d], a.shape[d]) : idx[d];
        if (i < 0 || i >= a.shape[d]) {
            Error* e = ctx.error;
#if defined(__CUDACC__)
            if (atomicCAS(&e->code, 0, 1) == 0) {
#else
            if (e->code == 0) {
                e->code = 1;
#endif
                e->site = site;
                e->dim = d;
                e->index = idx[d];
                e->extent = a.shape[d];
            }
            return nullptr;
        }
        offset += i * a.strides[d];
    }
    return reinterpret_cast<T*>(a.data + offset) + c;
}

// Whether the array's last dimension is contiguous (elements of C components of T); densified()
// is the same array with that stride as a constant the compiler can see, so that an access
// through tid() becomes a plain vector load or store.
template <int C, class T, int N>
WEFT_FUNC bool dense(const Array<T, N>& a) {
    return a.strides[N - 1] == static_cast<i64>(C * sizeof(T));
}
template <int C, class T, int N>
WEFT_FUNC Array<T, N> densified(Array<T, N> a) {
    a.strides[N - 1] = static_cast<i64>(C * sizeof(T));
    return a;
}

// a[i] of an N-D array (N >= 2): the (N-1)-D view of the same memory with dimension 0 fixed at
// i, an already-wrapped index.
template <class T, int N>
WEFT_FUNC Array<T, N - 1> view0(const Array<T, N>& a, i64 i) {
    Array<T, N - 1> v = {};
    v.data = a.data + i * a.strides[0];
    for (int d = 0; d + 1 < 4; ++d) {
        v.shape[d] = a.shape[d + 1];
        v.strides[d] = a.strides[d + 1];
    }
    v.shape[3] = 1;
    v.strides[3] = 0;
    v.det = a.det;  // a view accumulates into its array's deterministic target
    return v;
}

// view0 with i wrapped (when Wrap is 1) and checked against shape[0]. Out of bounds, it records
// the fault as checked() does and returns an empty view (every extent 0), so each access
// through it is skipped.
template <unsigned Wrap, class T, int N>
WEFT_FUNC Array<T, N - 1> view0(Ctx& ctx, i32 site, const Array<T, N>& a, i64 i) {
    Array<T, 1> rows = {};
    rows.data = a.data;
    rows.shape[0] = a.shape[0];
    rows.strides[0] = a.strides[0];
    if (checked<Wrap>(ctx, site, rows, 0, i)) return view0(a, Wrap ? wrap(i, a.shape[0]) : i);
    Array<T, N - 1> empty = {};
    return empty;
}

// Integer division and remainder are defined for every operand, identically on the CPU and
// the GPU (C++ leaves x / 0 and INT_MIN / -1 undefined, and x86 traps on both): x / 0 == 0,
// x % 0 == x, INT_MIN / -1 == INT_MIN and INT_MIN % -1 == 0, so x == (x / y) * y + x % y
// always holds. The emitter calls these only where the divisor may be 0 or -1.
template <class T>
struct UnsignedOf {
    using type = T;
};
template <>
struct UnsignedOf<i32> {
    using type = u32;
};
template <>
struct UnsignedOf<i64> {
    using type = u64;
};

template <class T>
WEFT_FUNC T idiv(T a, T b) {
    using U = typename UnsignedOf<T>::type;
    if (b == 0) return 0;
    if (T(-1) < T(0) && b == T(-1)) return static_cast<T>(U(0) - static_cast<U>(a));  // wraps at INT_MIN
    return a / b;
}

template <class T>
WEFT_FUNC T irem(T a, T b) {
    if (b == 0) return a;
    if (T(-1) < T(0) && b == T(-1)) return 0;
    return a % b;
}

// The iterations of Python's range(start, stop, step), counted without overflow: the distance
// between the bounds always fits a u32 (at most 2^32 - 1), and a 32-bit division costs a GPU
// far less than a 64-bit one. A step of 0 makes none.
WEFT_FUNC u32 trip_count(i32 start, i32 stop, i32 step) {
    if (step > 0 && start < stop)
        return (static_cast<u32>(stop) - static_cast<u32>(start) - 1u) / static_cast<u32>(step) + 1u;
    if (step < 0 && start > stop)
        return (static_cast<u32>(start) - static_cast<u32>(stop) - 1u) / (0u - static_cast<u32>(step)) + 1u;
    return 0;
}

// i + step with two's-complement wrap-around (after a loop's last iteration it may overflow).
WEFT_FUNC i32 add_wrapping(i32 i, i32 step) {
    return static_cast<i32>(static_cast<u32>(i) + static_cast<u32>(step));
}

// Math. Float min/max are IEEE minNum/maxNum (a NaN operand yields the other one).
#if defined(__CUDACC__)
#define WEFT_MATH1(name, f32, f64)    \
    WEFT_FUNC float name(float x) {   \
        return ::f32(x);              \
    }                                 \
    WEFT_FUNC double name(double x) { \
        return ::f64(x);              \
    }
#define WEFT_MATH2(name, f32, f64)              \
    WEFT_FUNC float name(float x, float y) {    \
        return ::f32(x, y);                     \
    }                                           \
    WEFT_FUNC double name(double x, double y) { \
        return ::f64(x, y);                     \
    }
#define WEFT_MINMAX WEFT_MATH2
#define WEFT_POW WEFT_MATH2
#else
#define WEFT_MATH1(name, f32, f64)    \
    WEFT_FUNC float name(float x) {   \
        return __builtin_##f32(x);    \
    }                                 \
    WEFT_FUNC double name(double x) { \
        return __builtin_##f64(x);    \
    }
#define WEFT_MATH2(name, f32, f64)              \
    WEFT_FUNC float name(float x, float y) {    \
        return __builtin_##f32(x, y);           \
    }                                           \
    WEFT_FUNC double name(double x, double y) { \
        return __builtin_##f64(x, y);           \
    }
// The C library's fmin and fmax turn a signaling NaN operand into a NaN result; a GPU returns
// the other operand, as for a quiet NaN. The CPU does what the GPU does.
#define WEFT_MINMAX(name, f32, f64)                             \
    WEFT_FUNC float name(float x, float y) {                    \
        return x != x ? y : y != y ? x : __builtin_##f32(x, y); \
    }                                                           \
    WEFT_FUNC double name(double x, double y) {                 \
        return x != x ? y : y != y ? x : __builtin_##f64(x, y); \
    }
// pow(1, y) and pow(x, 0) are 1 for every x and y (C's Annex F); the C library gives a NaN where
// that x or y is a signaling NaN, a GPU gives 1. The CPU does what the GPU does.
#define WEFT_POW(name, f32, f64)                                      \
    WEFT_FUNC float name(float x, float y) {                          \
        return x == 1.0f || y == 0.0f ? 1.0f : __builtin_##f32(x, y); \
    }                                                                 \
    WEFT_FUNC double name(double x, double y) {                       \
        return x == 1.0 || y == 0.0 ? 1.0 : __builtin_##f64(x, y);    \
    }
#endif
WEFT_MATH1(sqrt, sqrtf, sqrt)
WEFT_MATH1(floor, floorf, floor)
WEFT_MATH1(ceil, ceilf, ceil)
WEFT_MATH1(sin, sinf, sin)
WEFT_MATH1(cos, cosf, cos)
WEFT_MATH1(exp, expf, exp)
WEFT_MATH1(log, logf, log)
WEFT_MATH1(abs, fabsf, fabs)
WEFT_MINMAX(min, fminf, fmin)
WEFT_MINMAX(max, fmaxf, fmax)
WEFT_POW(pow, powf, pow)
WEFT_MATH2(fmod, fmodf, fmod)
#undef WEFT_MATH1
#undef WEFT_MATH2
#undef WEFT_MINMAX
#undef WEFT_POW

template <class T>
WEFT_FUNC T min(T a, T b) {
    return b < a ? b : a;
}
template <class T>
WEFT_FUNC T max(T a, T b) {
    return a < b ? b : a;
}
template <class T>
WEFT_FUNC T abs(T a) {
    return a < 0 ? static_cast<T>(-a) : a;
}

template <class T, class U>
WEFT_FUNC T bit_cast(U u) {
    static_assert(sizeof(T) == sizeof(U), "bit_cast between types of different sizes");
    T t;
#if defined(__CUDACC__)
    memcpy(&t, &u, sizeof(T));
#else
    __builtin_memcpy(&t, &u, sizeof(T));
#endif
    return t;
}

// Atomics; each returns the previous value.
template <class T>
struct BitsOf;
template <>
struct BitsOf<float> {
    using type = u32;
};
template <>
struct BitsOf<double> {
    using type = u64;
};
template <>
struct BitsOf<i32> {
    using type = i32;
};
template <>
struct BitsOf<u32> {
    using type = u32;
};
template <>
struct BitsOf<i64> {
    using type = u64;
};
template <>
struct BitsOf<u64> {
    using type = u64;
};

template <class T>
WEFT_FUNC T atomic_cas(T* p, T compare, T value) {
    using B = typename BitsOf<T>::type;
#if defined(__CUDACC__)
    return bit_cast<T>(atomicCAS(reinterpret_cast<B*>(p), bit_cast<B>(compare), bit_cast<B>(value)));
#else
    B expected = bit_cast<B>(compare);
    __atomic_compare_exchange_n(reinterpret_cast<B*>(p), &expected, bit_cast<B>(value), false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return bit_cast<T>(expected);
#endif
}

// The value at p, read as one atomic access (other threads may be updating it).
template <class T>
WEFT_FUNC T atomic_load(T* p) {
#if defined(__CUDACC__)
    return *p;  // a compare-and-swap that sees a torn or stale value only loops once more
#else
    using B = typename BitsOf<T>::type;
    return bit_cast<T>(__atomic_load_n(reinterpret_cast<B*>(p), __ATOMIC_RELAXED));
#endif
}

#if !defined(__CUDACC__)
// An atomic of a serial launch (Ctx::serial): a plain load and store. (The chunk loop of a kernel
// with atomics does not declare its iterations independent, so the compiler keeps each thread's
// update of an element before the next thread's.)
template <class T, class F>
WEFT_FUNC T serial_update(T* p, F f) {
    const T old = *p;
    *p = f(old);
    return old;
}
#endif

// atomic_cas as generated code calls it: in a serial launch (Ctx::serial), a load and a store.
template <class T>
WEFT_FUNC T atomic_cas(const Ctx& ctx, T* p, T compare, T value) {
#if !defined(__CUDACC__)
    using B = typename BitsOf<T>::type;
    if (ctx.serial)
        return serial_update(p,
                             [&](T old) { return bit_cast<B>(old) == bit_cast<B>(compare) ? value : old; });
#else
    (void)ctx;
#endif
    return atomic_cas(p, compare, value);
}

// Read-modify-write by compare-and-swap: the fallback for operations without an instruction.
template <class T, class F>
WEFT_FUNC T atomic_update(T* p, F f) {
    using B = typename BitsOf<T>::type;
    T old = atomic_load(p);
    while (true) {
        const T next = f(old);
#if !defined(__CUDACC__)
        // On the CPU the load is atomic and current, so an update that leaves the bits as they
        // are (a min or max that does not win) takes effect there, with no swap. (A GPU's plain
        // load may be stale: there the swap always checks it.)
        if (bit_cast<B>(next) == bit_cast<B>(old)) return old;
#endif
        const T seen = atomic_cas(p, old, next);
        if (bit_cast<B>(seen) == bit_cast<B>(old)) return old;
        old = seen;
    }
}

struct OpAdd {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return a + b;
    }
};
struct OpSub {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return a - b;
    }
};
struct OpMin {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return min(a, b);
    }
};
struct OpMax {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return max(a, b);
    }
};
struct OpAnd {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return a & b;
    }
};
struct OpOr {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return a | b;
    }
};
struct OpXor {
    template <class T>
    WEFT_FUNC T apply(T a, T b) {
        return a ^ b;
    }
};
struct OpExch {
    template <class T>
    WEFT_FUNC T apply(T, T b) {
        return b;
    }
};

template <class A, class B>
struct Same {
    static constexpr bool value = false;
};
template <class A>
struct Same<A, A> {
    static constexpr bool value = true;
};

// float16 and bfloat16 (src/device/half.h): on a GPU, add and sub take the hardware instruction
// where the architecture has one (atomic_add16 in half.h); every other operation, and every one
// on the CPU, is a compare-and-swap loop.
template <class T>
struct IsHalf {
    static constexpr bool value = false;
};

template <class Op, class T>
WEFT_FUNC T atomic(const Ctx& ctx, T* p, T v) {
#if !defined(__CUDACC__)
    if (ctx.serial) return serial_update(p, [v](T old) { return Op::apply(old, v); });
#else
    (void)ctx;
#endif
#if defined(__CUDACC__)
    // The hardware instruction where CUDA has one. Signed 64-bit add, bit operations and
    // exchange go through the unsigned form, which has the same bits.
    constexpr bool i64_as_u64 = Same<T, i64>::value;
    using H = typename BitsOf<T>::type;
    if constexpr (IsHalf<T>::value) {
        // a - b is a + (-b) bit for bit (signed zeros included), so sub is an add too
        if constexpr (Same<Op, OpAdd>::value || Same<Op, OpSub>::value)
            return atomic_add16(p, Same<Op, OpSub>::value ? -v : v);
        // min, max and exchange: the compare-and-swap loop below
    } else if constexpr (Same<Op, OpAdd>::value || Same<Op, OpSub>::value) {
        const T operand = Same<Op, OpSub>::value ? static_cast<T>(-v) : v;
        if constexpr (i64_as_u64)
            return static_cast<T>(atomicAdd(reinterpret_cast<u64*>(p), static_cast<u64>(operand)));
        else
            return atomicAdd(p, operand);
    } else if constexpr ((Same<Op, OpMin>::value || Same<Op, OpMax>::value) && !Same<T, float>::value &&
                         !Same<T, double>::value) {
        if constexpr (Same<Op, OpMin>::value)
            return atomicMin(p, v);
        else
            return atomicMax(p, v);
    } else if constexpr (Same<Op, OpAnd>::value) {
        return static_cast<T>(atomicAnd(reinterpret_cast<H*>(p), static_cast<H>(v)));
    } else if constexpr (Same<Op, OpOr>::value) {
        return static_cast<T>(atomicOr(reinterpret_cast<H*>(p), static_cast<H>(v)));
    } else if constexpr (Same<Op, OpXor>::value) {
        return static_cast<T>(atomicXor(reinterpret_cast<H*>(p), static_cast<H>(v)));
    } else if constexpr (Same<Op, OpExch>::value) {
        return bit_cast<T>(atomicExch(reinterpret_cast<H*>(p), bit_cast<H>(v)));
    }
#else
    // The instruction for integer add, sub, bit operations and exchange of any width; float
    // add, float and integer min and max, and half types take the compare-and-swap loop.
    constexpr bool integer = !IsHalf<T>::value && !Same<T, float>::value && !Same<T, double>::value;
    if constexpr (integer && Same<Op, OpAdd>::value) {
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    } else if constexpr (integer && Same<Op, OpSub>::value) {
        return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
    } else if constexpr (integer && Same<Op, OpAnd>::value) {
        return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
    } else if constexpr (integer && Same<Op, OpOr>::value) {
        return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
    } else if constexpr (integer && Same<Op, OpXor>::value) {
        return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
    } else if constexpr (Same<Op, OpExch>::value && !IsHalf<T>::value) {
        using B = typename BitsOf<T>::type;
        return bit_cast<T>(__atomic_exchange_n(reinterpret_cast<B*>(p), bit_cast<B>(v), __ATOMIC_RELAXED));
    } else
#endif
    return atomic_update(p, [v](T old) { return Op::apply(old, v); });
}

}  // namespace wf
