// The autodiff passes on hand-built IR: the structured copy, the adjoint kernels and their plans.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "autodiff/structured_copy.hpp"
#include "ir/verifier.hpp"
#include "passes/support.hpp"
#include "transforms/generate_adjoints.hpp"
#include "transforms/kernel_plans.hpp"
#include "transforms/pipeline.hpp"

namespace {

using weft::DType;
using namespace weft::ir;
using weft::test::add_function;
using weft::test::here;
using weft::test::kinds;

using weft::test::f32_array;
using weft::test::i32_array;
using weft::test::none;

// out[t] = values[indices[t]]: the spec's gather.
Program gather() {
    Program p = weft::test::program_named("gather");
    add_function(p, "gather", true, {f32_array, i32_array, f32_array}, none,
                 [](Builder& b, const std::vector<ValueId>& a) {
                     const ValueId t = b.tid(0, 1, here(2));
                     const ValueId i = b.load(a[1], {t}, 0, here(3));
                     b.store(a[2], {t}, 0, b.load(a[0], {i}, 0, here(3)), here(3));
                 });
    return p;
}

TEST(GenerateAdjoints, TheGathersAdjointIsAKernelThatScattersIntoTheValuesGradient) {
    Program p = gather();
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::generate_adjoints(std::move(p), plan);
    verify(p, "test");
    ASSERT_EQ(p.functions.size(), 2u);
    ASSERT_EQ(plan.kernels.size(), 2u);
    EXPECT_EQ(plan.kernels[0].adjoint, 1);
    EXPECT_EQ(plan.kernels[0].differentiable, (std::vector<uint32_t>{0, 2}));
    EXPECT_TRUE(plan.kernels[1].is_adjoint);
    EXPECT_EQ(plan.functions[1].variant, weft::plan::Variant::Adjoint);
    EXPECT_EQ(plan.functions[1].name, "gather");  // as users know it
    const Function& adjoint = *p.functions[1];
    EXPECT_EQ(adjoint.name, "gather__adjoint");
    EXPECT_EQ(adjoint.param_names,
              (std::vector<std::string>{"p0", "p1", "p2", "adj_p0", "has_adj_p0", "adj_p2", "has_adj_p2"}));
    // The replay has no store; the reverse sweep reads out's gradient and scatters into values'.
    int stores = 0, atomics_into_values_gradient = 0, loads_of_out_gradient = 0;
    for_each_node(adjoint.body, [&](const Node& n) {
        stores += n.kind == NodeKind::Store;
        if (n.kind == NodeKind::Atomic && n.args[0] == adjoint.params[3]) ++atomics_into_values_gradient;
        if (n.kind == NodeKind::Load && n.args[0] == adjoint.params[5]) ++loads_of_out_gradient;
    });
    EXPECT_EQ(stores, 0);
    EXPECT_EQ(atomics_into_values_gradient, 1);
    EXPECT_EQ(loads_of_out_gradient, 1);
}

TEST(GenerateAdjoints, DeterministicLoweringMakesTheGradientAccumulationABackwardOnlyTarget) {
    weft::Options options;
    options.deterministic = weft::Deterministic::RunToRun;
    const weft::transforms::Lowered lowered = weft::transforms::lower(gather(), options, true);
    const weft::plan::KernelPlan& forward = lowered.plan.kernels[0];
    ASSERT_EQ(forward.adjoint, 1);
    const weft::plan::KernelPlan& backward = lowered.plan.kernels[1];
    EXPECT_TRUE(forward.det_targets.empty());  // a forward launch does no deterministic work
    ASSERT_EQ(backward.det_targets.size(), 1u);
    EXPECT_EQ(backward.det_targets[0].arg.param, 3u);  // adj_p0
    // Without the request for adjoints (or with enable_backward off) there are none.
    EXPECT_EQ(weft::transforms::lower(gather(), options).plan.kernels.size(), 1u);
    options.enable_backward = false;
    EXPECT_EQ(weft::transforms::lower(gather(), options, true).plan.kernels.size(), 1u);
}

TEST(GenerateAdjoints, AConsumedCounterLeavesTheReasonInThePlan) {
    Program p = weft::test::program_named("compact");
    add_function(p, "compact", true, {f32_array, i32_array, f32_array}, none,
                 [](Builder& b, const std::vector<ValueId>& a) {
                     const ValueId t = b.tid(0, 1, here(2));
                     const ValueId one = b.constant(DType::Int32, 1, here(3));
                     const ValueId zero = b.constant(DType::Int64, 0, here(3));
                     const ValueId slot = b.atomic(AtomicOp::Add, a[1], {zero}, 0, one, kNoValue, here(4));
                     b.store(a[2], {slot}, 0, b.load(a[0], {t}, 0, here(5)), here(5));
                 });
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::generate_adjoints(std::move(p), plan);
    EXPECT_EQ(p.functions.size(), 1u);
    EXPECT_EQ(plan.kernels[0].adjoint, -1);
    ASSERT_TRUE(plan.kernels[0].no_adjoint);
    EXPECT_NE(plan.kernels[0].no_adjoint->message.find("slot allocation"), std::string::npos);
    EXPECT_EQ(plan.kernels[0].no_adjoint->line, 4u);
}

TEST(GenerateAdjoints, KernelsWithoutFloatArraysGetNone) {
    Program p = weft::test::program_named("ints");
    add_function(p, "ints", true, {i32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId t = b.tid(0, 1, here(2));
        b.store(a[0], {t}, 0, b.constant(DType::Int32, 7, here(3)), here(3));
    });
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::generate_adjoints(std::move(p), plan);
    EXPECT_EQ(p.functions.size(), 1u);
    EXPECT_EQ(plan.kernels[0].adjoint, -1);
    EXPECT_FALSE(plan.kernels[0].no_adjoint);
}

// for i in range(4): r = r <op> x[i], into out[0]; returns the adjoint's For nodes, nested ones
// counted with their depth ("For[For]").
std::string loop_shape(BinaryOp op) {
    Program p = weft::test::program_named("loop");
    add_function(p, "loop", true, {f32_array, f32_array}, none,
                 [&](Builder& b, const std::vector<ValueId>& a) {
                     const ValueId r = b.copy(b.constant(DType::Float32, 0x3f800000, here(2)), here(2));
                     b.for_(
                         b.constant(DType::Int32, 0, here(3)), b.constant(DType::Int32, 4, here(3)),
                         b.constant(DType::Int32, 1, here(3)),
                         [&](ValueId i) {
                             b.assign(r, b.binary(op, r, b.load(a[0], {i}, 0, here(4)), here(4)), here(4));
                         },
                         here(3));
                     b.store(a[1], {b.constant(DType::Int64, 0, here(5))}, 0, r, here(5));
                 });
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::generate_adjoints(std::move(p), plan);
    verify(p, "test");
    std::function<std::string(const Block&)> fors = [&](const Block& b) {
        std::string out;
        for (const Node& n : b.nodes) {
            std::string inner;
            for (const Block& c : n.blocks) inner += fors(c);
            if (n.kind == NodeKind::For)
                out += " For[" + inner + "]";
            else
                out += inner;
        }
        return out;
    };
    return fors(p.functions[1]->body);
}

TEST(GenerateAdjoints, ALoopThatOnlyAccumulatesIsSweptWithOneReplayPerIteration) {
    // The forward replay's loop, then the reverse loop, each iteration replayed once.
    EXPECT_EQ(loop_shape(BinaryOp::Add), " For[] For[]");
}

TEST(GenerateAdjoints, ALoopWhoseGradientReadsACarriedValueIsSweptFromCheckpoints) {
    // r * x[i] reads r as the loop left it, so the sweep restores r from checkpoints (design
    // 0031): after the forward replay, one pass keeping the coarse checkpoints, then per stride
    // (last first) a pass keeping the fine ones and the sweep, each swept iteration replaying
    // those between its fine checkpoint and itself. No loop replays every iteration before it.
    EXPECT_EQ(loop_shape(BinaryOp::Mul), " For[] For[] For[ For[] For[ For[]]]");
}

TEST(StructuredCopy, ExitsBecomeFlagsAndCallsAreInlined) {
    Program p = weft::test::program_named("exits");
    const Type f32 = Type::scalar(DType::Float32);
    const uint32_t twice =
        add_function(p, "twice", false, {f32}, f32, [&](Builder& b, const std::vector<ValueId>& a) {
            const ValueId r = b.binary(BinaryOp::Add, a[0], a[0], here(10));
            b.return_(&r, here(10));
        });
    add_function(p, "k", true, {f32_array}, none, [&](Builder& b, const std::vector<ValueId>& a) {
        const ValueId t = b.tid(0, 1, here(2));
        const ValueId stop = b.constant(DType::Int32, 4, here(3));
        const ValueId start = b.constant(DType::Int32, 0, here(3));
        const ValueId step = b.constant(DType::Int32, 1, here(3));
        b.for_(
            start, stop, step,
            [&](ValueId i) {
                b.if_(
                    b.binary(BinaryOp::Eq, i, t, here(4)), [&] { b.break_(here(4)); }, nullptr, here(4));
                const ValueId v = b.load(a[0], {i}, 0, here(5));
                b.store(a[0], {i}, 0, b.call(twice, *p.functions[twice], {v}, here(5)), here(5));
            },
            here(3));
        b.return_(nullptr, here(6));
    });
    const Function copy = weft::autodiff::structured_copy(p, 1, {false});
    const std::string k = kinds(copy.body);
    for (const char* gone : {"Break", "Continue", "Return", "Call"})
        EXPECT_EQ(k.find(gone), std::string::npos) << k;
    // The code after the break is guarded by the flag the break sets.
    EXPECT_NE(k.find("If[Const Assign][] Binary Binary Unary If[Load"), std::string::npos) << k;
}

}  // namespace
