// module "accumulate"
WEFT_FUNC void f0_accumulate(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2);
WEFT_FUNC void f1_accumulate_shorthand(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2);

WEFT_FUNC void f0_accumulate(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const float v4 = *wf::addr(v0, v3);
    const wf::i32 v5 = *wf::addr(v1, v3);
    wf::atomic<wf::OpAdd>(wf::addr(v2, wf::wrap(v5, v2.shape[0])), v4);
}

WEFT_FUNC void f1_accumulate_shorthand(wf::Ctx& ctx, wf::Array<float, 1> v0, wf::Array<wf::i32, 1> v1, wf::Array<float, 1> v2) {
    const wf::i32 v3 = ctx.tid[0];
    const float v4 = *wf::addr(v0, v3);
    const wf::i32 v5 = *wf::addr(v1, v3);
    wf::atomic<wf::OpAdd>(wf::addr(v2, wf::wrap(v5, v2.shape[0])), v4);
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_0(void* const* args, const wf::Launch* launch) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    wf::Ctx ctx{{0, 0, 0, 0}, launch->error, nullptr, 0, 0};
    for (wf::i64 i = 0; i < launch->total && ctx.error->code == 0; ++i) {
        wf::set_tid<1>(ctx, *launch, i);
        ctx.thread = i;
        ctx.reservations = 0;
        f0_accumulate(ctx, a0, a1, a2);
    }
}

extern "C" __attribute__((visibility("default"))) void weft_kernel_1(void* const* args, const wf::Launch* launch) {
    const wf::Array<float, 1> a0 = *static_cast<const wf::Array<float, 1>*>(args[0]);
    const wf::Array<wf::i32, 1> a1 = *static_cast<const wf::Array<wf::i32, 1>*>(args[1]);
    const wf::Array<float, 1> a2 = *static_cast<const wf::Array<float, 1>*>(args[2]);
    wf::Ctx ctx{{0, 0, 0, 0}, launch->error, nullptr, 0, 0};
    for (wf::i64 i = 0; i < launch->total && ctx.error->code == 0; ++i) {
        wf::set_tid<1>(ctx, *launch, i);
        ctx.thread = i;
        ctx.reservations = 0;
        f1_accumulate_shorthand(ctx, a0, a1, a2);
    }
}
