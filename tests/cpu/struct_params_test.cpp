// Structs (WEFT_STRUCT) and composite values as kernel and function parameters: fields read and
// written, deterministic accumulation into a struct's array field, a slot counter that is a
// struct's field (directly and from a helper function), leaf names that cannot collide, nested
// structs, recorded launches re-bound by a field's path, and what does not compile.
#include <gtest/gtest.h>

#include <vector>
#include <weft/weft.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::ArrayField;
using weft::Field;
using weft::host_side;
using weft::kernel_side;
using weft::test::test_device;

template <class Side = host_side>
struct Grid {
    ArrayField<Side, int> counts;
    ArrayField<Side, int> items;
    Field<Side, float> cell;
};
WEFT_STRUCT(Grid, counts, items, cell)

template <class Side = host_side>
struct Model {
    Field<Side, float> k;
    Field<Side, weft::vec3> gravity;
    ArrayField<Side, weft::vec3> forces;
    Grid<Side> grid;
};
WEFT_STRUCT(Model, k, gravity, forces, grid)

template <class Side = host_side>
struct Unregistered {
    Field<Side, float> k;
};

TEST(StructParams, FieldsAreReadAndArrayFieldsWritten) {
    weft::Module m{"struct_fields"};
    auto k = m.kernel("k", [](Model<kernel_side> model, Array<weft::vec3> out) {
        auto i = weft::tid();
        out[i] = model.gravity * model.k + weft::vec3(model.grid.cell);
        model.forces[i].z = model.k;
        model.grid.items[i] = model.grid.counts[i] * 2;
    });
    const auto dev = test_device();
    Model<> model{.k = 2.0f,
                  .gravity = {0.0f, -1.0f, 0.5f},
                  .forces = weft::zeros<weft::vec3>(3, dev),
                  .grid = {.counts = weft::from_vector<int>({1, 2, 3}, dev),
                           .items = weft::zeros<int>(3, dev),
                           .cell = 0.25f}};
    auto out = weft::zeros<weft::vec3>(3, dev);
    weft::launch(k, 3, model, out);
    for (const auto& o : out.to_vector()) EXPECT_EQ(o, (weft::host::vec3f{0.25f, -1.75f, 1.25f}));
    for (const auto& f : model.forces.to_vector()) EXPECT_EQ(f, (weft::host::vec3f{0, 0, 2.0f}));
    EXPECT_EQ(model.grid.items.to_vector(), (std::vector<int>{2, 4, 6}));
}

// A parameter `model_k` beside field `k` of parameter `model`: the leaves are `model_k` and
// `model.k`, so each argument reaches its own parameter (and a recorded launch re-binds by path).
TEST(StructParams, FlattenedNamesStayDistinct) {
    weft::Module m{"struct_names"};
    auto k = m.kernel("k", {"model", "model_k", "out"},
                      [](Model<kernel_side> model, weft::Float model_k, Array<float> out) {
                          out[0] = model.k;
                          out[1] = model_k;
                          out[2] = model.forces[0].x;
                      });
    const auto dev = test_device();
    Model<> model{.k = 3.0f,
                  .forces = weft::from_vector<weft::vec3>({{5, 0, 0}}, dev),
                  .grid = {.counts = weft::zeros<int>(1, dev), .items = weft::zeros<int>(1, dev)}};
    auto out = weft::zeros<float>(3, dev);
    weft::launch(k, 1, model, 7.0f, out);
    EXPECT_EQ(out.to_vector(), (std::vector<float>{3.0f, 7.0f, 5.0f}));

    weft::RecordedLaunch recorded(k, 1, model, 7.0f, out);
    recorded.set("model.k", 11.0f);
    recorded.set("model.forces", weft::from_vector<weft::vec3>({{13, 0, 0}}, dev));
    recorded.launch();
    EXPECT_EQ(out.to_vector(), (std::vector<float>{11.0f, 7.0f, 13.0f}));
    EXPECT_THROW(recorded.set("model_forces", out), weft::Error);
}

TEST(StructParams, DeterministicAccumulationIntoAStructArrayField) {
    const auto dev = test_device();
    std::vector<float> values;
    for (int i = 0; i < 4000; ++i)
        values.push_back(1.0f / static_cast<float>(i + 1) * (i % 3 == 0 ? -1.0f : 1.0f));
    std::vector<uint32_t> first;
    for (auto mode : {weft::Deterministic::RunToRun, weft::Deterministic::GpuToGpu}) {
        weft::Module m{"struct_det", {.deterministic = mode}};
        auto k = m.kernel("k", [](Model<kernel_side> model, Array<float> v) {
            auto i = weft::tid();
            model.forces[i % 4] += weft::vec3(v[i], -v[i], 2.0f * v[i]);
        });
        for (int rep = 0; rep < 2; ++rep) {
            Model<> model{.forces = weft::zeros<weft::vec3>(4, dev),
                          .grid = {.counts = weft::zeros<int>(1, dev), .items = weft::zeros<int>(1, dev)}};
            weft::launch(k, 4000, model, weft::from_vector(values, dev));
            const auto got = model.forces.to_vector();
            for (int o = 0; o < 4; ++o) {
                std::vector<float> c;
                for (int i = o; i < 4000; i += 4) c.push_back(values[i]);
                EXPECT_EQ(got[o].x, weft::test::exact_sum(0.0f, c));
                for (float& x : c) x = -x;
                EXPECT_EQ(got[o].y, weft::test::exact_sum(0.0f, c));
            }
        }
    }
}

// Slot allocation whose counter is a struct's array field, used in the kernel and in a helper
// function that takes the struct: slots follow thread order, as for a plain counter.
TEST(StructParams, SlotCounterInAStructFieldDirectlyAndFromAHelper) {
    weft::Module m{"struct_slots", {.deterministic = weft::Deterministic::RunToRun}};
    auto push = m.func("push", [](Grid<kernel_side> grid, weft::Int v) {
        auto slot = weft::atomic_add(grid.counts, 0, 1);
        grid.items[slot] = v;
    });
    auto direct = m.kernel("direct", [](Grid<kernel_side> grid, Array<int> v) {
        auto i = weft::tid();
        weft::if_(v[i] % 2 == 0, [&] {
            auto slot = weft::atomic_add(grid.counts, 0, 1);
            grid.items[slot] = v[i];
        });
    });
    auto helper = m.kernel("helper", [push](Grid<kernel_side> grid, Array<int> v) {
        auto i = weft::tid();
        weft::if_(v[i] % 2 == 0, [&] { push(grid, v[i]); });
    });
    const auto dev = test_device();
    std::vector<int> v;
    for (int i = 0; i < 1000; ++i) v.push_back((i * 7919) % 1000);
    std::vector<int> want;
    for (int x : v)
        if (x % 2 == 0) want.push_back(x);
    auto values = weft::from_vector(v, dev);
    for (int which = 0; which < 2; ++which) {
        Grid<> grid{.counts = weft::zeros<int>(1, dev), .items = weft::zeros<int>(1000, dev)};
        if (which == 0)
            weft::launch(direct, 1000, grid, values);
        else
            weft::launch(helper, 1000, grid, values);
        EXPECT_EQ(grid.counts.to_vector()[0], static_cast<int>(want.size())) << which;
        auto items = grid.items.to_vector();
        items.resize(want.size());
        EXPECT_EQ(items, want) << which;
    }
}

TEST(StructParams, CompositeFunctionParameters) {
    weft::Module m{"composite_func_params"};
    auto scaled =
        m.func("scaled", [](weft::vec3 a, weft::mat33 r, weft::Float s) { return weft::dot(r * a, a) * s; });
    auto k = m.kernel("k", [scaled](Array<weft::vec3> a, Array<float> out, weft::mat33 r) {
        auto i = weft::tid();
        out[i] = scaled(a[i], r, 2.0f);
    });
    const auto dev = test_device();
    auto a = weft::from_vector<weft::vec3>({{1, 2, 3}}, dev);
    auto out = weft::zeros<float>(1, dev);
    weft::host::mat33f r{};
    r[0][0] = 1;
    r[1][1] = 2;
    r[2][2] = 3;
    weft::launch(k, 1, a, out, r);
    EXPECT_EQ(out.to_vector()[0], 2.0f * (1 + 8 + 27));
}

// A function returning a composite is inlined at each call: its result is the composite, its
// scalar parameters are its own copies, and its side effects happen once per call.
TEST(StructParams, CompositeFunctionResults) {
    weft::Module m{"composite_func_results"};
    auto reflect = m.func("reflect", [](weft::vec3 v, weft::vec3 n, Array<int> calls) {
        weft::atomic_add(calls, 0, 1);
        v.x = v.x;  // a write to a parameter stays in the function
        return v - 2.0f * weft::dot(v, n) * n;
    });
    auto twice = m.func("twice", [reflect](weft::vec3 v, weft::vec3 n, Array<int> calls) {
        return weft::mat33(reflect(v, n, calls), v, n);
    });
    auto k = m.kernel("k", [twice](Array<weft::vec3> v, Array<weft::mat33> out, Array<int> calls) {
        auto i = weft::tid();
        weft::vec3 n(0.0f, 1.0f, 0.0f);
        out[i] = twice(v[i], n, calls);
        n.y = 5.0f;  // the caller's vector, unchanged by the calls
        out[i][2][1] += n.y;
    });
    const auto dev = test_device();
    auto v = weft::from_vector<weft::vec3>({{1, 2, 3}, {-1, -4, 0.5f}}, dev);
    auto out = weft::zeros<weft::mat33>(2, dev);
    auto calls = weft::zeros<int>(1, dev);
    weft::launch(k, 2, v, out, calls);
    const auto got = out.to_vector();
    EXPECT_EQ(got[0][0], (weft::host::vec3f{1, -2, 3}));
    EXPECT_EQ(got[0][1], (weft::host::vec3f{1, 2, 3}));
    EXPECT_EQ(got[0][2], (weft::host::vec3f{0, 6, 0}));
    EXPECT_EQ(got[1][0], (weft::host::vec3f{-1, 4, 0.5f}));
    EXPECT_EQ(calls.to_vector()[0], 2);
}

TEST(StructParams, CompositeResultsHaveNoCustomAdjointNorEarlyReturn) {
    weft::Module m{"composite_func_limits"};
    auto f = m.func("f", [](weft::vec3 v) { return v * 2.0f; });
    EXPECT_THROW(m.func_grad(f, [](weft::vec3, weft::vec3) {}), weft::Error);
    auto g = m.func("g", [](weft::vec3 v) {
        weft::if_(v.x > 0.0f, [] { weft::return_(); });
        return v;
    });
    m.kernel("k", [g](Array<weft::vec3> a) { a[weft::tid()] = g(a[weft::tid()]); });
    try {
        (void)m.ir();
        ADD_FAILURE() << "expected a weft::Error";
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find("weft::return_ in function 'g'"), std::string::npos) << e.message();
    }
}

// A struct that is not registered is not a parameter type, and a struct argument of another
// type than the parameter's does not fit it (weft::launch's static_assert names the argument).
TEST(StructParams, WrongStructsDoNotCompile) {
    static_assert(!weft::detail::Param<Unregistered<kernel_side>>);
    using weft::detail::ArgFits;
    static_assert(ArgFits<Grid<kernel_side>, Grid<>>::value);
    static_assert(!ArgFits<Grid<kernel_side>, Model<>>::value);
    static_assert(!ArgFits<Grid<kernel_side>, Grid<kernel_side>>::value);
    static_assert(!ArgFits<weft::vec3, weft::host::vec4f>::value);
    SUCCEED();
}

}  // namespace
