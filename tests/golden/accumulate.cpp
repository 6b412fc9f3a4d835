// module "accumulate"
WEFT_KERNEL void f0_accumulate(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2);
WEFT_KERNEL void f1_accumulate_shorthand(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2);

WEFT_KERNEL void f0_accumulate(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const float v4 = *wf::addr(v0, v3);
    const wf::i32 v5 = *wf::addr(v1, v3);
    wf::atomic<wf::OpAdd>(ctx, wf::addr(v2, wf::wrap(v5, v2.shape[0])), v4);
}

WEFT_KERNEL void f1_accumulate_shorthand(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const float v4 = *wf::addr(v0, v3);
    const wf::i32 v5 = *wf::addr(v1, v3);
    wf::atomic<wf::OpAdd>(ctx, wf::addr(v2, wf::wrap(v5, v2.shape[0])), v4);
}

WEFT_KERNEL void weft_kernel_0_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 1> a0, const wf::Array<wf::i32, 1> a1, const wf::Array<float, 1> a2) {
    const bool serial = launch.serial != 0;
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, nullptr, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        f0_accumulate(ctx, a0, a1, a2);
    }
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_0(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    if (wf::dense<1>(a0) && wf::dense<1>(a1) && wf::dense<1>(a2)) return weft_kernel_0_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, wf::densified<1>(a0), wf::densified<1>(a1), wf::densified<1>(a2));
    weft_kernel_0_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2);
}

WEFT_KERNEL void weft_kernel_1_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 1> a0, const wf::Array<wf::i32, 1> a1, const wf::Array<float, 1> a2) {
    const bool serial = launch.serial != 0;
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, nullptr, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        f1_accumulate_shorthand(ctx, a0, a1, a2);
    }
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_1(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    if (wf::dense<1>(a0) && wf::dense<1>(a1) && wf::dense<1>(a2)) return weft_kernel_1_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, wf::densified<1>(a0), wf::densified<1>(a1), wf::densified<1>(a2));
    weft_kernel_1_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2);
}
