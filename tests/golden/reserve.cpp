// module "reserve"
WEFT_FUNC wf::i32 f0_take(wf::Ctx& ctx, wf::Array<wf::i32, 1> v0);
WEFT_KERNEL void f1_compact_positive(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2);
WEFT_KERNEL void f2_compact_positive__count(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2);
WEFT_FUNC wf::i32 f3_take__count(wf::Ctx& ctx, wf::Array<wf::i32, 1> v0);

WEFT_FUNC wf::i32 f0_take(wf::Ctx& ctx, wf::Array<wf::i32, 1> v0) {
    const wf::i32 v1 = wf::i32(1);
    const wf::i64 v2 = wf::i64(0ll);
    const wf::i32 v3 = wf::reserve(ctx, v0.det, wf::addr(v0, v2), v1);
    return v3;
}

WEFT_KERNEL void f1_compact_positive(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const float v4 = *wf::addr(v0, v3);
    const float v5 = 0.0f;
    const bool v6 = v4 > v5;
    if (v6) {
        const wf::i32 v7 = f0_take(ctx, v1);
        *wf::addr(v2, wf::wrap(v7, v2.shape[0])) = v4;
    }
    const float v9 = -1.0f;
    const bool v10 = v4 < v9;
    if (v10) {
        const float v11 = -v4;
        const wf::i32 v12 = wf::i32(2);
        const wf::i64 v13 = wf::i64(0ll);
        const wf::i32 v14 = wf::reserve(ctx, v1.det, wf::addr(v1, v13), v12);
        *wf::addr(v2, wf::wrap(v14, v2.shape[0])) = v11;
    }
}

WEFT_KERNEL void f2_compact_positive__count(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const float v4 = *wf::addr(v0, v3);
    const float v5 = 0.0f;
    const bool v6 = v4 > v5;
    if (v6) {
        const wf::i32 v7 = f3_take__count(ctx, v1);
    }
    const float v9 = -1.0f;
    const bool v10 = v4 < v9;
    if (v10) {
        const wf::i32 v12 = wf::i32(2);
        const wf::i64 v13 = wf::i64(0ll);
        const wf::i32 v14 = wf::reserve_count(ctx, v1.det, wf::addr(v1, v13), v12);
    }
}

WEFT_FUNC wf::i32 f3_take__count(wf::Ctx& ctx, wf::Array<wf::i32, 1> v0) {
    const wf::i32 v1 = wf::i32(1);
    const wf::i64 v2 = wf::i64(0ll);
    const wf::i32 v3 = wf::reserve_count(ctx, v0.det, wf::addr(v0, v2), v1);
    return v3;
}

WEFT_KERNEL void weft_kernel_1_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 1> a0, const wf::Array<wf::i32, 1> a1, const wf::Array<float, 1> a2) {
    const bool serial = launch.serial != 0;
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, nullptr, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        f1_compact_positive(ctx, a0, a1, a2);
        wf::reservations_end(ctx, a1.det, false);
    }
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_1(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    if (wf::slots_overflowed(a1.det)) return;
    weft_kernel_1_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2);
}

WEFT_KERNEL void weft_kernel_2_chunk(const wf::Launch& launch, wf::i32 begin, wf::i32 end, wf::Error* error, wf::i32 worker, const wf::Array<float, 1> a0, const wf::Array<wf::i32, 1> a1, const wf::Array<float, 1> a2) {
    const bool serial = launch.serial != 0;
    for (wf::i32 i = begin; i < end; ++i) {
        wf::Ctx ctx{{i, 0, 0, 0}, error, nullptr, i, 0};
        ctx.serial = serial;
        ctx.worker = worker;
        f2_compact_positive__count(ctx, a0, a1, a2);
        wf::reservations_end(ctx, a1.det, true);
    }
    (void)launch;
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_2(void* const* args, const wf::Launch* launch, wf::i64 begin, wf::i64 end, wf::Error* error, wf::i32 worker) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    weft_kernel_2_chunk(*launch, static_cast<wf::i32>(begin), static_cast<wf::i32>(end), error, worker, a0, a1, a2);
}
