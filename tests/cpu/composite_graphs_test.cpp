// Graphs and recorded launches of kernels with struct parameters and composite values: captured
// launches replayed as direct launches, and RecordedLaunch::set of a whole struct (or nested
// struct field) and of a composite scalar parameter, all leaves or none.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>
#include <weft/weft.hpp>

#include "support/composite_bits.hpp"
#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::test::bits;

using weft::Array;
using weft::ArrayField;
using weft::Deterministic;
using weft::Field;
using weft::host_side;
using weft::kernel_side;
using weft::test::error_from;
using weft::test::has;
using weft::test::test_device;

template <class Side = host_side>
struct Springs {
    ArrayField<Side, int> bins;
    Field<Side, float> k;
};
WEFT_STRUCT(Springs, bins, k)

template <class Side = host_side>
struct World {
    ArrayField<Side, weft::vec3> pos;
    ArrayField<Side, weft::vec3> vel;
    Field<Side, float> dt;
    Field<Side, weft::vec3> gravity;
    Springs<Side> springs;
};
WEFT_STRUCT(World, pos, vel, dt, gravity, springs)

template <class Side = host_side>
struct Other {
    ArrayField<Side, weft::vec3> pos;
    Field<Side, float> dt;
};
WEFT_STRUCT(Other, pos, dt)

// One step: vel += gravity dt - k pos; pos += rot vel dt; sums[bins[i]] += pos (deterministic).
struct Step {
    weft::Module module{"composite_graph_step", {.deterministic = Deterministic::RunToRun}};
    weft::Kernel<World<kernel_side>, Array<weft::mat33>, Array<weft::vec3>> kernel =
        module.kernel("step", {"world", "rot", "sums"},
                      [](World<kernel_side> w, Array<weft::mat33> rot, Array<weft::vec3> sums) {
                          auto i = weft::tid();
                          const weft::vec3 v = w.vel[i] + w.gravity * w.dt - w.pos[i] * w.springs.k;
                          w.vel[i] = v;
                          const weft::vec3 p = w.pos[i] + rot[0] * v * w.dt;
                          w.pos[i] = p;
                          sums[w.springs.bins[i]] += p;
                      });
};

const int kBodies = 500;
const int kBins = 7;

World<> make_world(const weft::Device& dev) {
    std::vector<weft::host::vec3f> pos(kBodies), vel(kBodies);
    std::vector<int> bins(kBodies);
    for (int i = 0; i < kBodies; ++i) {
        pos[i] = {0.01f * i, 1.0f - 0.003f * i, 0.5f};
        vel[i] = {0.0f, 0.1f * (i % 5), -0.2f};
        bins[i] = (i * 13) % kBins;
    }
    return {.pos = weft::from_vector<weft::vec3>(pos, dev),
            .vel = weft::from_vector<weft::vec3>(vel, dev),
            .dt = 0.01f,
            .gravity = {0.0f, -9.8f, 0.0f},
            .springs = {.bins = weft::from_vector(bins, dev), .k = 0.3f}};
}

weft::DeviceArray<weft::mat33> rotation(const weft::Device& dev) {
    weft::host::mat33f r;
    r[0] = {0.0f, -1.0f, 0.0f};
    r[1] = {1.0f, 0.0f, 0.0f};
    r[2] = {0.0f, 0.0f, 1.0f};
    return weft::from_vector<weft::mat33>(std::vector<weft::host::mat33f>{r}, dev);
}

TEST(CompositeGraphs, CapturedStructAndCompositeLaunchesReplayAsDirectLaunches) {
    const auto dev = test_device();
    Step step;
    const auto rot = rotation(dev);
    World<> direct = make_world(dev);
    auto direct_sums = weft::zeros<weft::vec3>(kBins, dev);
    World<> replayed = make_world(dev);
    auto replayed_sums = weft::zeros<weft::vec3>(kBins, dev);
    const auto before = bits(replayed.pos.to_vector());

    const weft::Graph graph = weft::capture(dev, [&] {
        weft::launch(step.kernel, kBodies, replayed, rot, replayed_sums);
        weft::launch(step.kernel, kBodies, replayed, rot, replayed_sums);
    });
    EXPECT_EQ(bits(replayed.pos.to_vector()), before) << "capturing runs nothing";
    EXPECT_EQ(bits(replayed_sums.to_vector()), bits(std::vector<weft::host::vec3f>(kBins)))
        << "capturing runs nothing";
    for (int replay = 1; replay <= 4; ++replay) {
        graph.launch();
        weft::synchronize(dev);
        weft::launch(step.kernel, kBodies, direct, rot, direct_sums);
        weft::launch(step.kernel, kBodies, direct, rot, direct_sums);
        EXPECT_EQ(bits(replayed.pos.to_vector()), bits(direct.pos.to_vector())) << "replay " << replay;
        EXPECT_EQ(bits(replayed.vel.to_vector()), bits(direct.vel.to_vector())) << "replay " << replay;
        EXPECT_EQ(bits(replayed_sums.to_vector()), bits(direct_sums.to_vector())) << "replay " << replay;
    }
    EXPECT_NE(bits(replayed.pos.to_vector()), before) << "the replays ran";
}

// A captured recorded launch with a struct argument keeps it; set() of a whole struct after the
// capture changes the recorded launch, not the graph.
TEST(CompositeGraphs, RecordedLaunchSetOfAStructRebindsEveryLeaf) {
    const auto dev = test_device();
    Step step;
    const auto rot = rotation(dev);
    World<> a = make_world(dev);
    auto sums = weft::zeros<weft::vec3>(kBins, dev);
    weft::RecordedLaunch recorded(step.kernel, kBodies, a, rot, sums);
    const weft::Graph graph = weft::capture(dev, [&] { recorded.launch(); });

    // Another world: other arrays, other scalar and composite fields, a nested struct.
    World<> b = make_world(dev);
    b.dt = 0.02f;
    b.gravity = {1.0f, 0.0f, 0.0f};
    b.springs.k = 0.0f;
    std::vector<int> zero_bins(kBodies, 0);
    b.springs.bins = weft::from_vector(zero_bins, dev);
    recorded.set("world", b);
    recorded.launch();

    World<> want = make_world(dev);
    want.dt = 0.02f;
    want.gravity = {1.0f, 0.0f, 0.0f};
    want.springs.k = 0.0f;
    want.springs.bins = weft::from_vector(zero_bins, dev);
    auto want_sums = weft::zeros<weft::vec3>(kBins, dev);
    weft::launch(step.kernel, kBodies, want, rot, want_sums);
    EXPECT_EQ(bits(b.pos.to_vector()), bits(want.pos.to_vector()));
    EXPECT_EQ(bits(b.vel.to_vector()), bits(want.vel.to_vector()));
    EXPECT_EQ(bits(sums.to_vector()), bits(want_sums.to_vector()));
    const World<> untouched = make_world(dev);
    EXPECT_EQ(bits(a.pos.to_vector()), bits(untouched.pos.to_vector())) << "the old world is not written";

    // The graph keeps the arguments of its capture: it steps `a`.
    graph.launch();
    weft::synchronize(dev);
    World<> once = make_world(dev);
    auto once_sums = weft::zeros<weft::vec3>(kBins, dev);
    weft::launch(step.kernel, kBodies, once, rot, once_sums);
    EXPECT_EQ(bits(a.pos.to_vector()), bits(once.pos.to_vector()));
    EXPECT_EQ(bits(b.pos.to_vector()), bits(want.pos.to_vector())) << "the graph does not step b";

    // A nested struct field by its path: only the springs change.
    Springs<> stiff{.bins = weft::from_vector(zero_bins, dev), .k = 2.0f};
    recorded.set("world.springs", stiff);
    auto more = weft::zeros<weft::vec3>(kBins, dev);
    recorded.set("sums", more);
    recorded.launch();
    want.springs = stiff;
    auto want_more = weft::zeros<weft::vec3>(kBins, dev);
    weft::launch(step.kernel, kBodies, want, rot, want_more);
    EXPECT_EQ(bits(b.pos.to_vector()), bits(want.pos.to_vector()));
    EXPECT_EQ(bits(more.to_vector()), bits(want_more.to_vector()));
}

// out[i] = m * x[i] * s + g: set() of the composite parameters `g` (vec3) and `m` (mat33).
TEST(CompositeGraphs, RecordedLaunchSetOfACompositeParameter) {
    const auto dev = test_device();
    weft::Module module{"composite_recorded_value"};
    auto k = module.kernel(
        "k", {"x", "m", "s", "g", "out"},
        [](Array<weft::vec3> x, weft::mat33 m, weft::Float s, weft::vec3 g, Array<weft::vec3> out) {
            auto i = weft::tid();
            out[i] = m * x[i] * s + g;
        });
    auto x = weft::from_vector<weft::vec3>({{1, 2, 3}, {-1, 0, 1}}, dev);
    auto out = weft::zeros<weft::vec3>(2, dev);
    weft::host::mat33f id;
    for (int r = 0; r < 3; ++r) id[r][r] = 1.0f;
    weft::RecordedLaunch recorded(k, 2, x, id, 1.0f, weft::host::vec3f{0, 0, 0}, out);
    recorded.launch();
    EXPECT_EQ(out.to_vector(), (std::vector<weft::host::vec3f>{{1, 2, 3}, {-1, 0, 1}}));

    recorded.set("g", weft::host::vec3f{10, 20, 30});
    weft::host::mat33f swap;
    swap[0] = {0, 1, 0};
    swap[1] = {1, 0, 0};
    swap[2] = {0, 0, 2};
    recorded.set("m", swap);
    recorded.set("g[2]", 40.0f);  // one component, as before
    recorded.launch();
    EXPECT_EQ(out.to_vector(), (std::vector<weft::host::vec3f>{{12, 21, 46}, {10, 19, 42}}));

    // Captured, the recorded launch keeps its values; later sets do not change the graph.
    const weft::Graph graph = weft::capture(dev, [&] { recorded.launch(); });
    recorded.set("g", weft::host::vec3f{0, 0, 0});
    out.zero_();
    graph.launch();
    weft::synchronize(dev);
    EXPECT_EQ(out.to_vector(), (std::vector<weft::host::vec3f>{{12, 21, 46}, {10, 19, 42}}));
    recorded.launch();
    EXPECT_EQ(out.to_vector(), (std::vector<weft::host::vec3f>{{2, 1, 6}, {0, -1, 2}}));
}

// Every refused set() names the caller's line and changes nothing: not one leaf.
TEST(CompositeGraphs, AFailedSetChangesNothing) {
    const auto dev = test_device();
    Step step;
    const auto rot = rotation(dev);
    World<> a = make_world(dev);
    auto sums = weft::zeros<weft::vec3>(kBins, dev);
    weft::RecordedLaunch recorded(step.kernel, kBodies, a, rot, sums);

    weft::Module module{"composite_recorded_refusals"};
    auto k =
        module.kernel("k", {"g", "out"}, [](weft::vec3 g, Array<weft::vec3> out) { out[weft::tid()] = g; });
    auto out = weft::zeros<weft::vec3>(1, dev);
    weft::RecordedLaunch value(k, 1, weft::host::vec3f{1, 2, 3}, out);

    auto expect_refused = [](const weft::Error& e, int line, const std::string& what) {
        EXPECT_TRUE(has(e.message(), what)) << e.message();
        EXPECT_TRUE(has(e.file(), "composite_graphs_test.cpp")) << e.file();
        EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.message();
    };

    // A struct whose last leaf does not fit: the earlier leaves (pos, vel, dt, gravity) must not
    // have been set either.
    World<> bad = make_world(dev);
    bad.dt = 5.0f;
    bad.gravity = {100, 100, 100};
    bad.springs.bins = weft::zeros<int>({2, 2}, dev);  // 2-D: another shape class
    int line = __LINE__ + 1;
    weft::Error e = error_from([&] { recorded.set("world", bad); });
    expect_refused(e, line, "'world.springs.bins' was recorded as a 1-D contiguous array of int32");
    // An empty array in a leaf.
    World<> empty = make_world(dev);
    empty.vel = weft::DeviceArray<weft::vec3>();
    line = __LINE__ + 1;
    e = error_from([&] { recorded.set("world", empty); });
    expect_refused(e, line, "the array for 'world.vel' is empty");
    // A struct of another type: its leaves are not the parameter's.
    Other<> other{.pos = weft::zeros<weft::vec3>(kBodies, dev), .dt = 1.0f};
    line = __LINE__ + 1;
    e = error_from([&] { recorded.set("world", other); });
    expect_refused(e, line, "has 2 leaves ('world.pos', 'world.dt')");
    // A struct for a name that is no struct.
    line = __LINE__ + 1;
    e = error_from([&] { recorded.set("sums", bad.springs); });
    expect_refused(e, line, "has a leaf 'sums.bins' that the kernel does not have");
    // A struct for a parameter of another struct type with a leaf of the same name.
    Springs<> springs{.bins = weft::zeros<int>(kBodies, dev), .k = 1.0f};
    line = __LINE__ + 1;
    e = error_from([&] { recorded.set("world", springs); });
    expect_refused(e, line, "'world.bins' that the kernel does not have");

    // Composites: another element type, another component count, a scalar parameter.
    line = __LINE__ + 1;
    e = error_from([&] { value.set("g", weft::host::vec3d{4, 5, 6}); });
    expect_refused(e, line, "'g[0]' is a float32 scalar but the value is a float64");
    line = __LINE__ + 1;
    e = error_from([&] { value.set("g", weft::host::vec4f{4, 5, 6, 7}); });
    expect_refused(e, line, "'g[3]' that the kernel does not have");
    line = __LINE__ + 1;
    e = error_from([&] { value.set("g", weft::host::vec2f{4, 5}); });
    expect_refused(e, line, "has 2 leaves ('g[0]', 'g[1]') but 'g' has 'g[0]', 'g[1]', 'g[2]'");
    line = __LINE__ + 1;
    e = error_from([&] { value.set("out", weft::host::vec3f{4, 5, 6}); });
    expect_refused(e, line, "'out[0]' that the kernel does not have");

    // Nothing changed: the launches run with their first arguments.
    recorded.launch();
    value.launch();
    World<> want = make_world(dev);
    auto want_sums = weft::zeros<weft::vec3>(kBins, dev);
    weft::launch(step.kernel, kBodies, want, rot, want_sums);
    EXPECT_EQ(bits(a.pos.to_vector()), bits(want.pos.to_vector()));
    EXPECT_EQ(bits(a.vel.to_vector()), bits(want.vel.to_vector()));
    EXPECT_EQ(bits(sums.to_vector()), bits(want_sums.to_vector()));
    EXPECT_EQ(out.to_vector()[0], (weft::host::vec3f{1, 2, 3}));
}

// What set() accepts is decided by the value's type: a host struct or a host composite (never a
// kernel-side struct).
template <class V>
concept Settable = requires(weft::RecordedLaunch& r, const V& v) {
    r.set("x", v);
};
static_assert(Settable<World<>>);
static_assert(Settable<Springs<>>);
static_assert(Settable<weft::host::vec3f>);
static_assert(Settable<weft::host::transformd>);
static_assert(Settable<float>);
static_assert(!Settable<World<kernel_side>>);
static_assert(std::is_same_v<weft::traced_t<weft::host::mat33d>, weft::mat33d>);
static_assert(std::is_same_v<weft::traced_t<weft::host::quatf>, weft::quat>);

}  // namespace
