// module "reduce_by_bin"
WEFT_FUNC float f0_contribution(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::i32 v2, wf::i32 v3);
WEFT_KERNEL void f1_reduce_by_bin(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2, wf::i32 v3);

WEFT_FUNC float f0_contribution(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::i32 v2, wf::i32 v3) {
    const float v4 = *wf::addr(v0, wf::wrap(v2, v0.shape[0]));
    const wf::i32 v5 = *wf::addr(v1, wf::wrap(v2, v1.shape[0]));
    const bool v6 = v5 == v3;
    const float v7 = 0.0f;
    const float v8 = v6 ? v4 : v7;
    return v8;
}

WEFT_KERNEL void f1_reduce_by_bin(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2, wf::i32 v3) {
    const wf::i32 v4 = ctx.tid[0];
    float v5 = 0.0f;
    const wf::i32 v6 = wf::i32(0);
    const wf::i32 v7 = wf::i32(1);
    for (wf::i32 v8 = v6, stop = v3; v8 < stop; ++v8) {
        const float v9 = f0_contribution(ctx, v0, v1, v8, v4);
        const float v10 = v5 + v9;
        v5 = v10;
    }
    *wf::addr(v2, v4) = v5;
}

WEFT_KERNEL void weft_kernel_1_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 1> a0, const wf::Array<wf::i32, 1> a1, const wf::Array<float, 1> a2, const wf::i32 a3) {
    const bool serial = launch.serial != 0;
    WEFT_THREADS_INDEPENDENT
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, nullptr, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        f1_reduce_by_bin(ctx, a0, a1, a2, a3);
    }
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_1(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    const wf::i32 a3 = *static_cast<const wf::i32*>(args[3]);
    if (wf::dense<1>(a0) && wf::dense<1>(a1) && wf::dense<1>(a2)) return weft_kernel_1_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, wf::densified<1>(a0), wf::densified<1>(a1), wf::densified<1>(a2), a3);
    weft_kernel_1_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2, a3);
}
