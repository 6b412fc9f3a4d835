// module "first_above"
WEFT_KERNEL void f0_first_above(wf::Ctx& ctx, wf::Array<float, 2> v0, float v1, wf::Array<wf::i32, 2> v2);

WEFT_KERNEL void f0_first_above(wf::Ctx& ctx, wf::Array<float, 2> v0, float v1, wf::Array<wf::i32, 2> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const wf::i32 v4 = ctx.tid[1];
    wf::i32 v5 = wf::i32(0);
    wf::i32 v6 = wf::i32(-1);
    while (true) {
        const wf::i32 v7 = wf::i32(v0.shape[1]);
        const bool v8 = v5 < v7;
        if (!v8) break;
        const float v9 = *wf::addr(v0, v3, wf::wrap(v5, v0.shape[1]));
        const bool v10 = v9 > v1;
        if (v10) {
            v6 = v5;
            break;
        }
        const wf::i32 v11 = wf::i32(1);
        const wf::i32 v12 = v5 + v11;
        v5 = v12;
    }
    *wf::addr(v2, v3, v4) = v6;
}

WEFT_KERNEL void weft_kernel_0_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 2> a0, const float a1, const wf::Array<wf::i32, 2> a2) {
    const bool serial = launch.serial != 0;
    WEFT_THREADS_INDEPENDENT
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, nullptr, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        wf::set_tid<2>(ctx, launch, i);
        f0_first_above(ctx, a0, a1, a2);
    }
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_0(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 2> a0 = *static_cast<const wf::Array<float, 2>*>(args[0]);
    const float a1 = *static_cast<const float*>(args[1]);
    const wf::Array<wf::i32, 2> a2 = *static_cast<const wf::Array<wf::i32, 2>*>(args[2]);
    if (wf::dense<1>(a0) && wf::dense<1>(a2)) return weft_kernel_0_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, wf::densified<1>(a0), a1, wf::densified<1>(a2));
    weft_kernel_0_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2);
}
