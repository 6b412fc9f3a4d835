// module "accumulate_deterministic"
WEFT_KERNEL void f0_accumulate(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2, wf::Array<float, 1> v3);

WEFT_KERNEL void f0_accumulate(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2, wf::Array<float, 1> v3) {
    const wf::i32 v4 = ctx.tid[0];
    const float v5 = *wf::addr(v0, v4);
    const wf::i32 v6 = *wf::addr(v1, v4);
    wf::accumulate<wf::OpAdd>(ctx, v2.det, wf::addr(v2, wf::wrap(v6, v2.shape[0])), v5);
    const wf::i32 v9 = wf::i32(3);
    const wf::i32 v10 = wf::i32(0);
    const wf::i32 v11 = wf::i32(1);
    for (wf::i32 v12 = v10, stop = v9; v12 < stop; ++v12) {
        const float v13 = *wf::addr(v0, v4);
        const wf::i64 v14 = wf::i64(0ll);
        wf::accumulate<wf::OpMax>(ctx, v3.det, wf::addr(v3, v14), v13);
    }
}

WEFT_KERNEL void weft_kernel_0_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 1> a0, const wf::Array<wf::i32, 1> a1, const wf::Array<float, 1> a2, const wf::Array<float, 1> a3) {
    wf::BlockPrivate block_private;
    wf::block_private_begin(block_private);
    const bool serial = launch.serial != 0;
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, &block_private, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        f0_accumulate(ctx, a0, a1, a2, a3);
    }
    wf::block_private_end(block_private);
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_0(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    const wf::Array<float, 1> a3 = *static_cast<const wf::Array<float, 1>*>(args[3]);
    weft_kernel_0_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2, a3);
}
