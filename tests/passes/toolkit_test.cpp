// The pass toolkit on hand-built IR: the facts table, the block rewriter, the builder's constant
// lookups and the internal-error channel.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/internal_check.hpp"
#include "ir/facts.hpp"
#include "ir/rewriter.hpp"
#include "ir/verifier.hpp"
#include "passes/support.hpp"
#include "weft/error.hpp"

namespace {

using weft::DType;
using namespace weft::ir;
using weft::test::add_function;
using weft::test::here;
using weft::test::kinds;

const Type f32 = Type::scalar(DType::Float32);
const Type i32 = Type::scalar(DType::Int32);

// kernel(a: array<float32, 2>): v = a[1]; x = 2; loop: x = x + 1; a[1][0] = load
struct Sample {
    Program program = weft::test::program_named("sample");
    ValueId array = 0, view = 0, two = 0, mutable_x = 0, loaded = 0, unused = 0;

    Sample() {
        add_function(program, "k", true, {Type::array(DType::Float32, 2)}, Type::void_type(),
                     [&](Builder& b, const std::vector<ValueId>& p) {
                         array = p[0];
                         const ValueId one = b.constant(DType::Int32, 1, here(2));
                         view = b.view(array, one, here(3));
                         two = b.constant(DType::Int32, 2, here(4));
                         mutable_x = b.constant(DType::Int32, 7, here(5));
                         const ValueId zero = b.constant(DType::Int32, 0, here(6));
                         b.for_(
                             zero, two, one,
                             [&](ValueId) {
                                 b.assign(mutable_x, b.binary(BinaryOp::Add, mutable_x, one, here(7)),
                                          here(7));
                             },
                             here(7));
                         const ValueId i0 = b.cast(DType::Int32, zero, here(8));
                         loaded = b.load(view, {i0}, 0, here(8));
                         unused = b.binary(BinaryOp::Mul, loaded, loaded, here(9));
                         b.store(view, {i0}, 0, loaded, here(10));
                     });
    }
    Function& fn() { return *program.functions[0]; }
};

TEST(Facts, DefinitionsUsesConstantsAndRoots) {
    Sample s;
    const Facts facts(s.fn());
    ASSERT_NE(facts.definition(s.view), nullptr);
    EXPECT_EQ(facts.definition(s.view)->kind, NodeKind::View);
    EXPECT_EQ(facts.definition(s.array)->kind, NodeKind::Param);
    EXPECT_EQ(facts.uses(s.loaded), 3) << "twice in the product, once in the store";
    EXPECT_FALSE(facts.used(s.unused));
    EXPECT_EQ(facts.integer(s.two), 2);
    EXPECT_EQ(facts.constant(s.mutable_x), nullptr) << "an assigned value is no constant";
    EXPECT_EQ(facts.root(s.view), s.array);
    EXPECT_EQ(facts.param_of(s.view), 0);
    EXPECT_EQ(facts.param_of(s.two), -1);
    EXPECT_EQ(facts.root(s.two), kNoValue);
}

TEST(Facts, MutableLocalsListTheirAssignmentsAndLoops) {
    Sample s;
    const Facts facts(s.fn());
    EXPECT_TRUE(facts.mutable_local(s.mutable_x));
    ASSERT_EQ(facts.assignments(s.mutable_x).size(), 1u);
    EXPECT_EQ(facts.assignments(s.mutable_x)[0]->kind, NodeKind::Assign);
    EXPECT_TRUE(facts.assigned_in_loop(s.mutable_x));
    EXPECT_FALSE(facts.mutable_local(s.two));
    EXPECT_FALSE(facts.defined_in_loop(s.mutable_x)) << "defined before the loop, overwritten in it";
    const Node& loop = s.fn().body.nodes[6];
    ASSERT_EQ(loop.kind, NodeKind::For);
    EXPECT_TRUE(facts.defined_in_loop(loop.blocks[0].nodes[0].result)) << "the sum, one per iteration";
    EXPECT_FALSE(facts.defined_in_loop(loop.result)) << "the loop variable is the For node's own";
}

TEST(Rewriter, DropsReplacesAndRemapsValues) {
    Sample s;
    // Drop the unused product, and make every read of the load read a fresh constant instead.
    struct Rewrite : Rewriter {
        ValueId loaded, unused, fresh = kNoValue;
        void rewrite(Node&& n, std::vector<Node>& out) override {
            if (n.result == unused) return;
            if (n.result == loaded) {
                fresh = new_value(function().type_of(loaded));
                out.push_back(std::move(n));
                out.push_back({.kind = NodeKind::Const, .result = fresh, .bits = 0x3f800000, .loc = n.loc});
                replace_uses(loaded, fresh);
                return;
            }
            out.push_back(std::move(n));
        }
    } r;
    r.loaded = s.loaded;
    r.unused = s.unused;
    const size_t values = s.fn().values.size();
    r.run(s.fn());
    ASSERT_EQ(s.fn().values.size(), values + 1);
    EXPECT_EQ(kinds(s.fn().body),
              "Param Const View Const Const Const For[Binary Assign] Cast Load Const Store");
    const Node& store = s.fn().body.nodes.back();
    EXPECT_EQ(store.args.back(), r.fresh) << "the store reads the replacement";
    EXPECT_NO_THROW(verify(s.program, "rewriter test"));
}

TEST(Rewriter, RewritesNestedBlocksBeforeTheirNode) {
    Sample s;
    std::vector<NodeKind> order;
    rewrite_nodes(s.fn(), [&](Node&& n, std::vector<Node>& out) {
        order.push_back(n.kind);
        out.push_back(std::move(n));
    });
    const auto binary = std::find(order.begin(), order.end(), NodeKind::Binary);
    const auto loop = std::find(order.begin(), order.end(), NodeKind::For);
    EXPECT_LT(binary, loop) << "the loop body is rewritten before the loop node";
    EXPECT_EQ(kinds(s.fn().body),
              "Param Const View Const Const Const For[Binary Assign] Cast Load Binary Store");
}

TEST(Builder, AZeroStepIsFoundWithoutTheConstantBeingTheLastNode) {
    weft::ir::Program p = weft::test::program_named("steps");
    try {
        add_function(p, "k", true, {}, Type::void_type(), [&](Builder& b, const std::vector<ValueId>&) {
            const ValueId zero = b.constant(DType::Int32, 0, here(2));
            const ValueId ten = b.constant(DType::Int32, 10, here(3));
            b.for_(
                ten, ten, zero, [](ValueId) {}, here(4));
        });
        FAIL() << "a step of 0 is rejected";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.line(), 4u);
        EXPECT_NE(e.message().find("step of 0"), std::string::npos) << e.message();
    }
}

TEST(Builder, AnAssignedConstantIsNoLongerAConstantStep) {
    weft::ir::Program p = weft::test::program_named("steps");
    EXPECT_NO_THROW(
        add_function(p, "k", true, {}, Type::void_type(), [&](Builder& b, const std::vector<ValueId>&) {
            const ValueId step = b.constant(DType::Int32, 0, here(2));
            b.assign(step, b.constant(DType::Int32, 1, here(3)), here(3));
            b.for_(
                b.constant(DType::Int32, 0, here(4)), b.constant(DType::Int32, 3, here(4)), step,
                [](ValueId) {}, here(4));
        }));
}

TEST(Builder, TheLoopVariableCannotBeAssigned) {
    weft::ir::Program p = weft::test::program_named("loops");
    try {
        add_function(p, "k", true, {}, Type::void_type(), [&](Builder& b, const std::vector<ValueId>&) {
            const ValueId one = b.constant(DType::Int32, 1, here(2));
            b.for_(
                b.constant(DType::Int32, 0, here(3)), one, one, [&](ValueId i) { b.assign(i, one, here(5)); },
                here(4));
        });
        FAIL() << "assigning the loop variable is rejected";
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.line(), 5u);
        EXPECT_NE(e.message().find("loop variable"), std::string::npos) << e.message();
    }
}

TEST(InternalError, IsABugNamingThePassNotAUserError) {
    try {
        WEFT_INTERNAL_CHECK(1 + 1 == 3, "arithmetic", "two and one");
        FAIL();
    } catch (const weft::Error&) {
        FAIL() << "an internal failure is not a weft::Error";
    } catch (const weft::InternalError& e) {
        EXPECT_EQ(e.pass(), "arithmetic");
        const std::string what = e.what();
        EXPECT_NE(what.find("a bug"), std::string::npos) << what;
        EXPECT_NE(what.find("pass 'arithmetic'"), std::string::npos) << what;
    }
}

TEST(InternalError, TheVerifierReportsBrokenIrAsOne) {
    Sample s;
    s.fn().body.nodes.erase(s.fn().body.nodes.begin() + 2);  // the View: its users now read nothing
    try {
        verify(s.program, "a broken pass");
        FAIL() << "the verifier finds the undefined operand";
    } catch (const weft::InternalError& e) {
        EXPECT_EQ(e.pass(), "a broken pass");
        EXPECT_EQ(e.function(), "k");
    }
}

}  // namespace
