// The NCCL engine's exact all-reduce kernels, per floating type: a value's window fields, its two
// words in the agreed window, and the rounding of the reduced words (the host side:
// src/distributed/nccl_engine.cpp; the arithmetic: device/distributed_window.h).
#include "device/kernels/library.cuh"
// After the prelude, which it relies on.
#include "device/distributed_window.h"

#define WEFT_DIST_KERNELS(T, suffix)                                                                    \
    extern "C" __global__ void dist_agree_##suffix(const T* v, wf::i32* fields, wf::i64 n) {            \
        wf::dist::agree_kernel<T>(v, fields, n);                                                        \
    }                                                                                                   \
    extern "C" __global__ void dist_pack_##suffix(const T* v, const wf::i32* fields, wf::i64* words,    \
                                                  unsigned long long* outside, wf::i64 n, int k,        \
                                                  int width) {                                          \
        wf::dist::pack_kernel<T>(v, fields, words, outside, n, k, width);                               \
    }                                                                                                   \
    extern "C" __global__ void dist_round_##suffix(T* out, const wf::i32* fields, const wf::i64* words, \
                                                   wf::i64 n, int k) {                                  \
        wf::dist::round_kernel<T>(out, fields, words, n, k);                                            \
    }
WEFT_DIST_KERNELS(float, f32)
WEFT_DIST_KERNELS(double, f64)
WEFT_DIST_KERNELS(wf::f16, f16)
WEFT_DIST_KERNELS(wf::bf16, bf16)
#undef WEFT_DIST_KERNELS
