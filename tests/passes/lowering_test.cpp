// The lowering passes on hand-built IR: dead-code elimination, the deterministic lowering, slot
// allocation with its counting pass, the reservation-dependence analysis and the pipeline's plans.
#include <gtest/gtest.h>

#include <cstdlib>

#include "analysis/reservation_dependence.hpp"
#include "codegen/emit.hpp"
#include "passes/support.hpp"
#include "transforms/eliminate_dead_code.hpp"
#include "transforms/kernel_plans.hpp"
#include "transforms/lower_deterministic_atomics.hpp"
#include "transforms/lower_slot_allocation.hpp"
#include "transforms/pipeline.hpp"
#include "weft/error.hpp"

namespace {

using weft::Deterministic;
using weft::DType;
using namespace weft::ir;
using weft::test::add_function;
using weft::test::here;
using weft::test::kinds;

using weft::test::f32_array;
using weft::test::i32_array;
using weft::test::none;

ValueId i64(Builder& b, int64_t v, uint32_t line) {
    return b.constant(DType::Int64, static_cast<uint64_t>(v), here(line));
}

TEST(EliminateDeadCode, RemovesUnusedPureChainsToAFixpointAndKeepsEffects) {
    Program p = weft::test::program_named("dce");
    add_function(p, "k", true, {f32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId t = b.tid(0, 1, here(2));
        const ValueId x = b.load(a[0], {t}, 0, here(3));          // read only by the dead product
        b.binary(BinaryOp::Mul, x, x, here(4));                   // dead
        const ValueId c = b.binary(BinaryOp::Gt, x, x, here(5));  // read by the if
        b.if_(
            c, [&] { b.constant(DType::Int32, 3, here(6)); }, nullptr, here(6));  // dead, nested
        b.atomic(AtomicOp::Add, a[0], {t}, 0, b.constant(DType::Float32, 0x3f800000, here(7)), kNoValue,
                 here(7));
    });
    p = weft::transforms::eliminate_dead_code(std::move(p));
    EXPECT_EQ(kinds(p.functions[0]->body), "Param Tid Load Binary If[][] Const Atomic");
}

TEST(EliminateDeadCode, ALoadOnlyAStoreOverwritesGoes) {
    // `out[i] += v` traces a load of out[i] that the atomic does not read.
    Program p = weft::test::program_named("dce");
    add_function(p, "k", true, {f32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId t = b.tid(0, 1, here(2));
        b.load(a[0], {t}, 0, here(3));
        b.store(a[0], {t}, 0, b.constant(DType::Float32, 0, here(3)), here(3));
    });
    p = weft::transforms::eliminate_dead_code(std::move(p));
    EXPECT_EQ(kinds(p.functions[0]->body), "Param Tid Const Store");
}

// kernel(out: array<float32>, n: int32): for 0..4: out[0] += 1; while loop: out[1] -= 1;
Program accumulating() {
    Program p = weft::test::program_named("acc");
    add_function(
        p, "k", true, {f32_array, Type::scalar(DType::Int32)}, none,
        [](Builder& b, const std::vector<ValueId>& a) {
            const ValueId one = b.constant(DType::Float32, 0x3f800000, here(2));
            const ValueId i1 = b.constant(DType::Int32, 1, here(2));
            b.for_(
                b.constant(DType::Int32, 0, here(3)), b.constant(DType::Int32, 4, here(3)), i1,
                [&](ValueId) { b.atomic(AtomicOp::Add, a[0], {i64(b, 0, 4)}, 0, one, kNoValue, here(4)); },
                here(3));
            b.while_([&] { return b.binary(BinaryOp::Gt, a[1], i1, here(5)); },
                     [&] { b.atomic(AtomicOp::Sub, a[0], {i64(b, 1, 6)}, 0, one, kNoValue, here(6)); },
                     here(5));
        });
    return p;
}

TEST(LowerDeterministicAtomics, FloatAtomicsBecomeAccumulateAndThePlanListsTheTarget) {
    Program p = accumulating();
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::lower_deterministic_atomics(std::move(p), Deterministic::RunToRun, plan);
    EXPECT_EQ(kinds(p.functions[0]->body),
              "Param Param Const Const Const Const For[Const Accumulate] While[Binary][Const Accumulate]");
    ASSERT_EQ(plan.kernels.size(), 1u);
    ASSERT_EQ(plan.kernels[0].det_targets.size(), 1u);
    const weft::plan::DetTarget& t = plan.kernels[0].det_targets[0];
    EXPECT_EQ(t.arg, weft::plan::ArgPath{0});
    EXPECT_EQ(t.family, AtomicOp::Add) << "add and sub are one family";
    EXPECT_EQ(t.dtype, DType::Float32);
    EXPECT_EQ(t.records_per_thread, 5) << "four from the counted loop, one from the while body";
    EXPECT_TRUE(t.dynamic) << "the while loop's trip count is known only at run time";
}

TEST(LowerDeterministicAtomics, NotGuaranteedLeavesTheProgramAsItIs) {
    Program p = accumulating();
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::lower_deterministic_atomics(std::move(p), Deterministic::NotGuaranteed, plan);
    EXPECT_EQ(kinds(p.functions[0]->body),
              "Param Param Const Const Const Const For[Const Atomic] While[Binary][Const Atomic]");
    EXPECT_TRUE(plan.kernels[0].det_targets.empty());
}

TEST(LowerDeterministicAtomics, AConsumedFloatResultIsAUserErrorAtItsLine) {
    Program p = weft::test::program_named("acc");
    add_function(p, "k", true, {f32_array, f32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId old = b.atomic(AtomicOp::Add, a[0], {i64(b, 0, 2)}, 0,
                                     b.constant(DType::Float32, 0, here(2)), kNoValue, here(9));
        b.store(a[1], {i64(b, 0, 3)}, 0, old, here(3));
    });
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    try {
        weft::transforms::lower_deterministic_atomics(std::move(p), Deterministic::RunToRun, plan);
        FAIL() << "a consumed float atomic is rejected";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "k");
        EXPECT_EQ(e.line(), 9u);
        EXPECT_NE(e.message().find("'p0'"), std::string::npos) << e.message();
    }
}

// kernel(values, counter, out): if values[t] > 0: out[reserve(counter[0], 1)] = values[t]
// with the reservation made in a function `take` when `in_function`.
Program compacting(bool in_function) {
    Program p = weft::test::program_named("slots");
    if (in_function)
        add_function(p, "take", false, {i32_array}, Type::scalar(DType::Int32),
                     [](Builder& b, const std::vector<ValueId>& a) {
                         const ValueId slot =
                             b.atomic(AtomicOp::Add, a[0], {i64(b, 0, 2)}, 0,
                                      b.constant(DType::Int32, 1, here(2)), kNoValue, here(2));
                         b.return_(&slot, here(2));
                     });
    add_function(p, "k", true, {f32_array, i32_array, f32_array}, none,
                 [&](Builder& b, const std::vector<ValueId>& a) {
                     const ValueId t = b.tid(0, 1, here(3));
                     const ValueId v = b.load(a[0], {t}, 0, here(4));
                     b.if_(
                         b.binary(BinaryOp::Gt, v, b.constant(DType::Float32, 0, here(5)), here(5)),
                         [&] {
                             const ValueId slot =
                                 in_function
                                     ? b.call(0, *p.functions[0], {a[1]}, here(6))
                                     : b.atomic(AtomicOp::Add, a[1], {i64(b, 0, 6)}, 0,
                                                b.constant(DType::Int32, 1, here(6)), kNoValue, here(6));
                             b.store(a[2], {slot}, 0, v, here(7));
                         },
                         nullptr, here(5));
                 });
    return p;
}

TEST(LowerSlotAllocation, AConsumedCounterAtomicBecomesAReservationWithACountingPass) {
    Program p = compacting(false);
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::lower_slot_allocation(std::move(p), Deterministic::RunToRun, plan);
    ASSERT_EQ(p.functions.size(), 2u);
    EXPECT_EQ(kinds(p.functions[0]->body),
              "Param Param Param Tid Load Const Binary If[Const Const Reserve Store][]");
    EXPECT_EQ(p.functions[1]->name, "k__count");
    EXPECT_EQ(kinds(p.functions[1]->body),
              "Param Param Param Tid Load Const Binary If[Const Const Reserve][]")
        << "the counting pass reserves but does not store";
    const weft::plan::KernelPlan& k = plan.kernels[0];
    EXPECT_EQ(k.variants.forward, 0u);
    EXPECT_EQ(k.variants.counting, 1);
    ASSERT_EQ(plan.functions.size(), 2u);
    EXPECT_EQ(plan.functions[1].name, "k") << "users know the counting pass by its kernel's name";
    EXPECT_EQ(plan.functions[1].variant, weft::plan::Variant::Counting);
    ASSERT_EQ(k.slots.counters.size(), 1u);
    EXPECT_EQ(k.slots.counters[0].arg, weft::plan::ArgPath{1});
    EXPECT_EQ(k.slots.reservations_per_thread, 1);
    EXPECT_FALSE(k.slots.reservations_dynamic);
    EXPECT_FALSE(k.slots.reservations_may_diverge);
    EXPECT_TRUE(k.slots.single_counter_element);
    EXPECT_EQ(k.slots.single_counter_index, std::vector<int64_t>{0});
}

TEST(LowerSlotAllocation, CalleesAreClonedAndTheCountingPassCallsTheClones) {
    Program p = compacting(true);
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::lower_slot_allocation(std::move(p), Deterministic::RunToRun, plan);
    ASSERT_EQ(p.functions.size(), 4u);
    EXPECT_EQ(p.functions[2]->name, "k__count");
    EXPECT_EQ(p.functions[3]->name, "take__count");
    EXPECT_EQ(plan.functions[3].name, "take");
    EXPECT_EQ(plan.functions[3].variant, weft::plan::Variant::Counting);
    int calls = 0;
    for_each_node(p.functions[2]->body, [&](const Node& n) {
        if (n.kind != NodeKind::Call) return;
        ++calls;
        EXPECT_EQ(n.bits, 3u) << "the counting pass calls the counting clone of take";
    });
    EXPECT_EQ(calls, 1);
    for_each_node(p.functions[0]->body, [&](const Node& n) {
        if (n.kind == NodeKind::Call) EXPECT_EQ(n.bits, 0u) << "the kernel still calls take";
    });
    EXPECT_TRUE(plan.kernels[0].slots.single_counter_element);
}

// kernel(flags, counter): flags[t] = 1; if flags[t] > 0: flags[reserve(counter[0], 1)] = ...
Program reserving_from_scratch() {
    Program p = weft::test::program_named("slots");
    add_function(p, "k", true, {i32_array, i32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId t = b.tid(0, 1, here(2));
        b.store(a[0], {t}, 0, b.constant(DType::Int32, 1, here(3)), here(3));
        const ValueId flag = b.load(a[0], {t}, 0, here(14));
        b.if_(
            b.binary(BinaryOp::Gt, flag, b.constant(DType::Int32, 0, here(5)), here(5)),
            [&] {
                const ValueId slot = b.atomic(AtomicOp::Add, a[1], {i64(b, 0, 6)}, 0,
                                              b.constant(DType::Int32, 1, here(6)), kNoValue, here(16));
                b.store(a[0], {slot}, 0, slot, here(7));
            },
            nullptr, here(5));
    });
    return p;
}

TEST(ReservationDependence, FindsTheLoadOfAWrittenArrayThatDecidesAReservation) {
    const Program p = reserving_from_scratch();
    const auto found =
        weft::analysis::reservation_dependence(p, 0, {0}, weft::analysis::DependenceSource::Scratch);
    ASSERT_NE(found.reservation, nullptr);
    EXPECT_EQ(found.reservation->loc.line, 16u);
    ASSERT_NE(found.source, nullptr);
    EXPECT_EQ(found.source->kind, NodeKind::Load);
    EXPECT_EQ(found.source->loc.line, 14u);
    EXPECT_EQ(found.source_param, 0);
    const auto unwritten =
        weft::analysis::reservation_dependence(p, 0, {}, weft::analysis::DependenceSource::Scratch);
    EXPECT_EQ(unwritten.reservation, nullptr) << "a load of an array the kernel only reads is no scratch";
    const auto slots =
        weft::analysis::reservation_dependence(p, 0, {0}, weft::analysis::DependenceSource::Slots);
    EXPECT_EQ(slots.reservation, nullptr) << "no reservation depends on an earlier slot";
}

TEST(LowerSlotAllocation, AReservationDecidedByAWrittenArrayIsRejectedAtTheLoad) {
    Program p = reserving_from_scratch();
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    try {
        weft::transforms::lower_slot_allocation(std::move(p), Deterministic::RunToRun, plan);
        FAIL() << "the reservation depends on scratch";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.line(), 14u);
        EXPECT_NE(e.message().find("this load of 'p0'"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("at line 16"), std::string::npos) << e.message();
    }
}

TEST(LowerSlotAllocation, AReservationCountedByAnEarlierSlotMayDiverge) {
    Program p = weft::test::program_named("slots");
    add_function(p, "k", true, {i32_array, i32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId first = b.atomic(AtomicOp::Add, a[0], {i64(b, 0, 2)}, 0,
                                       b.constant(DType::Int32, 1, here(2)), kNoValue, here(2));
        const ValueId second = b.atomic(AtomicOp::Add, a[0], {i64(b, 1, 3)}, 0, first, kNoValue, here(3));
        b.store(a[1], {second}, 0, second, here(4));
    });
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    p = weft::transforms::lower_slot_allocation(std::move(p), Deterministic::RunToRun, plan);
    EXPECT_TRUE(plan.kernels[0].slots.reservations_may_diverge);
    EXPECT_EQ(plan.kernels[0].slots.reservations_per_thread, 2);
    EXPECT_FALSE(plan.kernels[0].slots.single_counter_element) << "elements 0 and 1";
}

TEST(Pipeline, PlansListWrittenParametersAndShapeReads) {
    Program p = weft::test::program_named("pipeline");
    add_function(p, "k", true, {f32_array, f32_array, Type::array(DType::Float32, 2)}, none,
                 [](Builder& b, const std::vector<ValueId>& a) {
                     const ValueId t = b.tid(0, 1, here(2));
                     const ValueId v = b.load(a[0], {t}, 0, here(3));
                     b.store(a[1], {b.shape(a[2], 1, here(4))}, 0, v, here(4));
                 });
    const weft::transforms::Lowered lowered = weft::transforms::lower(std::move(p), weft::Options{});
    const weft::plan::KernelPlan* k = lowered.plan.find("k");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->writes, (std::vector<bool>{false, true, false}));
    EXPECT_EQ(k->shape_reads, (std::vector<uint8_t>{0, 0, 2})) << "dimension 1 of the third";
    EXPECT_EQ(k->tid_ndim, 1);
    EXPECT_EQ(lowered.plan.find("missing"), nullptr);
}

TEST(Pipeline, TimesEachPassWhenAsked) {
    Program p = accumulating();
    setenv("WEFT_TIME_PASSES", "1", 1);
    testing::internal::CaptureStderr();
    weft::transforms::lower(std::move(p), weft::Options{.deterministic = Deterministic::RunToRun});
    const std::string log = testing::internal::GetCapturedStderr();
    unsetenv("WEFT_TIME_PASSES");
    for (const char* pass : {"eliminate_dead_code", "lower_deterministic_atomics", "lower_slot_allocation"})
        EXPECT_NE(log.find(std::string("pass ") + pass + " took "), std::string::npos) << log;
}

TEST(Pipeline, DumpsOnlyPassesThatChangeTheIr) {
    Program p = accumulating();
    setenv("WEFT_DUMP_IR", "1", 1);
    testing::internal::CaptureStderr();
    weft::transforms::lower(std::move(p), weft::Options{.deterministic = Deterministic::RunToRun});
    const std::string log = testing::internal::GetCapturedStderr();
    unsetenv("WEFT_DUMP_IR");
    EXPECT_NE(log.find("=== IR after trace ==="), std::string::npos) << log;
    EXPECT_NE(log.find("=== IR after lower_deterministic_atomics ==="), std::string::npos) << log;
    EXPECT_EQ(log.find("=== IR after lower_slot_allocation ==="), std::string::npos)
        << "no counter, so slot allocation changes nothing\n"
        << log;
}

TEST(Codegen, AKernelWithoutAPlanIsAnInternalError) {
    Program p = accumulating();
    weft::plan::ProgramPlan plan = weft::transforms::initial_plan(p);
    plan.kernels.clear();
    try {
        weft::codegen::emit(p, plan, {});
        FAIL() << "codegen needs each kernel's plan";
    } catch (const weft::InternalError& e) {
        EXPECT_EQ(e.pass(), "codegen");
        EXPECT_NE(e.message().find("kernel 'k'"), std::string::npos) << e.message();
    }
}

// A GPU entry whose targets are float sums can resolve them itself after a grid barrier
// (docs/design/0024); the CPU entry and a kernel with a min target cannot.
TEST(Codegen, AGpuEntryOfFloatSumsCanResolveThemInTheKernel) {
    const weft::Options run_to_run{.deterministic = Deterministic::RunToRun};
    const weft::transforms::Lowered sums = weft::transforms::lower(accumulating(), run_to_run);
    const weft::codegen::Generated gpu =
        weft::codegen::emit(sums.program, sums.plan, {.dialect = weft::codegen::Dialect::Cuda});
    ASSERT_EQ(gpu.resolving_entries.size(), sums.program.functions.size());
    EXPECT_EQ(gpu.resolving_entries[0], "weft_kernel_0_resolving");
    // The plain entry has no barrier (its registers stay the loop's); the resolving entry is in
    // a module of its own, with the functions, compiled only when used.
    EXPECT_NE(gpu.source.find("void weft_kernel_0("), std::string::npos) << gpu.source;
    EXPECT_EQ(gpu.source.find("grid_barrier"), std::string::npos) << gpu.source;
    EXPECT_EQ(gpu.source.find("weft_kernel_0_resolving"), std::string::npos) << gpu.source;
    const std::string& r = gpu.resolving_source;
    EXPECT_NE(r.find("void f0_k("), std::string::npos) << r;
    EXPECT_NE(r.find("void weft_kernel_0_resolving("), std::string::npos) << r;
    EXPECT_EQ(r.find("void weft_kernel_0("), std::string::npos) << r;
    EXPECT_NE(r.find("wf::grid_barrier(launch.resolve.barrier);"), std::string::npos) << r;
    EXPECT_NE(r.find("wf::resolve_in_kernel<float>(launch.resolve.targets[0]);"), std::string::npos) << r;
    const weft::codegen::Generated cpu = weft::codegen::emit(sums.program, sums.plan, {});
    EXPECT_EQ(cpu.resolving_entries[0], "");
    EXPECT_EQ(cpu.resolving_source, "");
    EXPECT_EQ(cpu.source.find("grid_barrier"), std::string::npos) << cpu.source;

    Program p = weft::test::program_named("minimum");
    add_function(p, "k", true, {f32_array, f32_array}, none, [](Builder& b, const std::vector<ValueId>& a) {
        const ValueId one = b.constant(DType::Float32, 0x3f800000, here(2));
        b.atomic(AtomicOp::Add, a[0], {i64(b, 0, 3)}, 0, one, kNoValue, here(3));
        b.atomic(AtomicOp::Min, a[1], {i64(b, 0, 4)}, 0, one, kNoValue, here(4));
    });
    const weft::transforms::Lowered mixed = weft::transforms::lower(std::move(p), run_to_run);
    const weft::codegen::Generated min_gpu =
        weft::codegen::emit(mixed.program, mixed.plan, {.dialect = weft::codegen::Dialect::Cuda});
    EXPECT_EQ(min_gpu.resolving_entries[0], "");
    EXPECT_EQ(min_gpu.resolving_source, "");
    EXPECT_EQ(min_gpu.source.find("grid_barrier"), std::string::npos) << min_gpu.source;
}

// A slot-allocating kernel on one counter element has a fused GPU entry that runs its counting
// pass, waits for every block's count and runs its execution pass (docs/design/0021), in a module
// of its own compiled only when used; the CPU entry has none, nor has the counting pass.
TEST(Codegen, AGpuEntryOnOneCounterElementCanRunBothPassesInOneKernel) {
    const weft::Options run_to_run{.deterministic = Deterministic::RunToRun};
    const weft::transforms::Lowered slots = weft::transforms::lower(compacting(false), run_to_run);
    const weft::codegen::Generated gpu =
        weft::codegen::emit(slots.program, slots.plan, {.dialect = weft::codegen::Dialect::Cuda});
    ASSERT_EQ(gpu.fused_entries.size(), slots.program.functions.size());
    EXPECT_EQ(gpu.fused_entries[0], "weft_kernel_0_fused");
    EXPECT_EQ(gpu.fused_entries[1], "") << "the counting pass has no fused entry";
    EXPECT_EQ(gpu.source.find("weft_kernel_0_fused"), std::string::npos)
        << "the main module has no fused entry\n"
        << gpu.source;
    EXPECT_EQ(gpu.source.find("slot_join"), std::string::npos) << gpu.source;
    const std::string& f = gpu.fused_source;
    EXPECT_NE(f.find("void f0_k("), std::string::npos) << f;
    EXPECT_EQ(f.find("void weft_kernel_0("), std::string::npos) << f;
    const size_t fused = f.find("void weft_kernel_0_fused(");
    ASSERT_NE(fused, std::string::npos) << f;
    const size_t counted = f.find("f1_k__count(ctx", fused);
    const size_t published = f.find("wf::slot_join_counted(", fused);
    const size_t waited = f.find("wf::slot_join_wait(", fused);
    const size_t executed = f.find("f0_k(ctx", fused);
    const size_t ended = f.find("wf::slot_join_end(", fused);
    EXPECT_LT(counted, published) << f;
    EXPECT_LT(published, waited) << f;
    EXPECT_LT(waited, executed) << f;
    EXPECT_LT(executed, ended) << f;
    EXPECT_NE(ended, std::string::npos) << f;
    const std::string entry = f.substr(fused, f.find("\n}\n", fused) - fused);
    EXPECT_EQ(entry.find("return"), std::string::npos) << "every thread reaches every barrier\n" << entry;
    const weft::codegen::Generated cpu = weft::codegen::emit(slots.program, slots.plan, {});
    EXPECT_EQ(cpu.fused_entries[0], "");
    EXPECT_EQ(cpu.fused_source, "");
    EXPECT_EQ(cpu.source.find("slot_join"), std::string::npos) << cpu.source;

    // A kernel that allocates no slots has no fused module.
    const weft::transforms::Lowered sums = weft::transforms::lower(accumulating(), run_to_run);
    EXPECT_EQ(
        weft::codegen::emit(sums.program, sums.plan, {.dialect = weft::codegen::Dialect::Cuda}).fused_source,
        "");
}

// A module without deterministic atomics compiles only the plain prelude (the deterministic
// headers are most of NVRTC's time); one with slot reservations or deterministic sums, the whole.
TEST(Codegen, OnlyDeterministicCodeCompilesTheDeterministicPrelude) {
    const std::string& whole = weft::codegen::prelude();
    const std::string& plain = weft::codegen::plain_prelude();
    EXPECT_LT(plain.size(), whole.size());
    EXPECT_EQ(whole.compare(0, plain.size(), plain), 0) << "the plain prelude is the whole one's start";
    for (const char* only_deterministic : {"slot_join_begin", "resolve_in_kernel", "reserve_count"}) {
        EXPECT_EQ(plain.find(only_deterministic), std::string::npos) << only_deterministic;
        EXPECT_NE(whole.find(only_deterministic), std::string::npos) << only_deterministic;
    }
    const weft::Options run_to_run{.deterministic = Deterministic::RunToRun};
    for (const weft::codegen::Dialect dialect : {weft::codegen::Dialect::Cpu, weft::codegen::Dialect::Cuda}) {
        const weft::transforms::Lowered plain_sums = weft::transforms::lower(accumulating(), {});
        const weft::codegen::Generated g =
            weft::codegen::emit(plain_sums.program, plain_sums.plan, {.dialect = dialect});
        EXPECT_FALSE(g.deterministic);
        EXPECT_EQ(&weft::codegen::prelude_for(g), &plain);
        for (Program p : {accumulating(), compacting(false), compacting(true)}) {
            const weft::transforms::Lowered det = weft::transforms::lower(std::move(p), run_to_run);
            const weft::codegen::Generated d =
                weft::codegen::emit(det.program, det.plan, {.dialect = dialect});
            EXPECT_TRUE(d.deterministic);
            EXPECT_EQ(&weft::codegen::prelude_for(d), &whole);
        }
    }
}

// The text of function `index`'s definition in generated source `source`.
std::string definition(const std::string& source, const Program& p, size_t index) {
    const std::string head = "f" + std::to_string(index) + "_" + p.functions[index]->name + "(wf::Ctx& ctx";
    const size_t at = source.find(head, source.find(head) + 1);  // (the first is the declaration)
    return at == std::string::npos ? "" : source.substr(at, source.find("\n}\n", at) - at);
}

// A kernel of at most four deterministic sites (its own, and its callees' as often as it calls
// them) inlines the accumulation path at each; a kernel of more calls its out-of-line copy at
// every site, its callees' included (docs/design/0030).
TEST(Codegen, AKernelOfMoreThanFourDeterministicSitesCallsTheOutOfLinePath) {
    Program p = weft::test::program_named("sites");
    const auto adds = [](Builder& b, ValueId array, int count) {
        const ValueId one = b.constant(DType::Float32, 0x3f800000, here(2));
        for (int k = 0; k < count; ++k)
            b.atomic(AtomicOp::Add, array, {i64(b, k, 2)}, 0, one, kNoValue, here(2));
    };
    add_function(p, "helper", false, {f32_array}, none,
                 [&](Builder& b, const std::vector<ValueId>& a) { adds(b, a[0], 3); });
    add_function(p, "few", true, {f32_array}, none,
                 [&](Builder& b, const std::vector<ValueId>& a) { adds(b, a[0], 4); });
    add_function(p, "many", true, {f32_array}, none,
                 [&](Builder& b, const std::vector<ValueId>& a) { adds(b, a[0], 5); });
    add_function(p, "twice", true, {f32_array}, none, [&](Builder& b, const std::vector<ValueId>& a) {
        b.call(0, *p.functions[0], {a[0]}, here(3));
        b.call(0, *p.functions[0], {a[0]}, here(4));
    });
    const weft::transforms::Lowered low =
        weft::transforms::lower(std::move(p), {.deterministic = Deterministic::RunToRun});
    for (const auto dialect : {weft::codegen::Dialect::Cpu, weft::codegen::Dialect::Cuda}) {
        const std::string source = weft::codegen::emit(low.program, low.plan, {.dialect = dialect}).source;
        const auto count = [&](size_t f, const std::string& what) {
            const std::string text = definition(source, low.program, f);
            int n = 0;
            for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
            return n;
        };
        EXPECT_EQ(count(1, "wf::accumulate<wf::OpAdd>("), 4) << source;
        EXPECT_EQ(count(1, "wf::accumulate_call<"), 0) << source;
        EXPECT_EQ(count(2, "wf::accumulate_call<wf::OpAdd>("), 5) << source;
        EXPECT_EQ(count(2, "wf::accumulate<"), 0) << source;
        EXPECT_EQ(count(0, "wf::accumulate_call<wf::OpAdd>("), 3) << "called twice: 6 sites\n" << source;
    }
}

}  // namespace
