// A deterministic launch that fails after its kernel ran (a records overflow, a slot divergence)
// leaves every array it writes as it was, or, where a GPU finds the failure only after the launch
// has returned, says exactly what stays applied.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Int;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

// The error `launch` reports, and whether it came at the launch (else at the next synchronize).
struct Failure {
    weft::Error error;
    bool at_launch;
};

std::optional<Failure> failure_of(const std::function<void()>& launch) {
    try {
        launch();
    } catch (const weft::Error& e) {
        return Failure{e, true};
    }
    try {
        weft::synchronize(dev());
    } catch (const weft::Error& e) {
        return Failure{e, false};
    }
    return std::nullopt;
}

// Arrays the kernels below write, with their values before the launch.
struct Written {
    weft::DeviceArray<float> stored = weft::full<float>(kThreads, -1.0f, dev());
    weft::DeviceArray<float> sums = weft::full<float>(4, 0.5f, dev());
    weft::DeviceArray<int> count = weft::full<int>(2, 7, dev());
    // Room for every slot a diverged execution pass may use (up to two per thread past 7).
    weft::DeviceArray<int> out = weft::full<int>(3 * kThreads, -1, dev());
    static constexpr int kThreads = 4096;

    void expect_unchanged() const {
        EXPECT_EQ(stored.to_vector(), std::vector<float>(kThreads, -1.0f)) << "plain stores are undone";
        EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 0.5f)) << "the accumulation target is as before";
        EXPECT_EQ(count.to_vector(), (std::vector<int>{7, 7})) << "the counter is as before";
        EXPECT_EQ(out.to_vector(), std::vector<int>(3 * kThreads, -1)) << "stores at slots are undone";
    }

    // An error found after the launch says "its writes to 'a', 'b' were applied": exactly those
    // arrays changed, and every other one holds its value from before the launch.
    void expect_applied_as_said(const std::string& what) const {
        const size_t from = what.find("its writes to ");
        const size_t to = what.find(" were applied");
        const std::string applied =
            from == std::string::npos || to == std::string::npos ? "" : what.substr(from, to - from);
        const auto said = [&](const std::string& name) { return has(applied, "'" + name + "'"); };
        EXPECT_EQ(said("stored"), stored.to_vector() != std::vector<float>(kThreads, -1.0f)) << what;
        EXPECT_EQ(said("sums"), sums.to_vector() != std::vector<float>(4, 0.5f)) << what;
        EXPECT_EQ(said("count"), count.to_vector() != (std::vector<int>{7, 7})) << what;
        EXPECT_EQ(said("out"), out.to_vector() != std::vector<int>(3 * kThreads, -1)) << what;
    }
};

// Checks a failure: found at the launch (on the CPU, with deterministic_debug, or where a GPU
// synchronizes anyway), the launch is undone; found later, the error lists the arrays whose
// writes stay.
void expect_undone_or_explained(const std::optional<Failure>& f, const Written& w, const std::string& kernel,
                                bool found_at_launch, const std::vector<std::string>& applied_later) {
    ASSERT_TRUE(f.has_value()) << "the failure was not reported";
    const std::string what = f->error.what();
    EXPECT_EQ(f->error.kernel(), kernel) << what;
    EXPECT_TRUE(has(f->error.file(), "failed_launch_test.cpp")) << what;
    if (found_at_launch) {
        EXPECT_TRUE(f->at_launch) << what;
        EXPECT_TRUE(has(what, "The launch was undone")) << what;
        EXPECT_FALSE(has(what, "keep their values") || has(what, "keeps its value"))
            << "an undone launch keeps every array, not only those named: " << what;
        w.expect_unchanged();
    } else {
        EXPECT_TRUE(has(what, "not undone")) << what;
        for (const std::string& name : applied_later)
            EXPECT_TRUE(has(what, "'" + name + "'")) << "the error says " << name << " was written: " << what;
        w.expect_applied_as_said(what);
    }
    EXPECT_NO_THROW(weft::synchronize(dev())) << "reported once";
}

// Each thread stores, reserves a slot when its value is positive, and adds its value to sums three
// times in a data-dependent loop: 3 records per thread against a bound of 1.
void check_records_overflow(bool debug) {
    const std::string name = std::string("records_overflow") + (debug ? "_debug" : "");
    weft::Module m{name,
                   {.deterministic = Deterministic::RunToRun,
                    .deterministic_strategy = weft::DeterministicStrategy::Records,
                    .deterministic_max_records = 1,
                    .deterministic_debug = debug}};
    auto kernel = m.kernel(name, {"values", "trips", "stored", "sums", "count", "out"},
                           [](Array<float> values, Array<int> trips, Array<float> stored, Array<float> sums,
                              Array<int> count, Array<int> out) {
                               auto t = weft::tid();
                               auto v = values[t];
                               stored[t] = v * 2.0f;
                               weft::if_(v > 0.0f, [&] { out[weft::atomic_add(count, 0, 1)] = t; });
                               weft::for_(trips[t], [&](Int) { weft::atomic_add(sums, t % 4, v); });
                           });
    const int n = Written::kThreads;
    std::vector<float> values(n);
    for (int t = 0; t < n; ++t) values[t] = 0.25f * static_cast<float>(t % 9) - 1.0f;
    Written w;
    const auto f = failure_of([&] {
        weft::launch(kernel, n, weft::from_vector(values, dev()),
                     weft::from_vector(std::vector<int>(n, 3), dev()), w.stored, w.sums, w.count, w.out);
    });
    if (f) EXPECT_TRUE(has(f->error.what(), "deterministic_max_records")) << f->error.what();
    expect_undone_or_explained(f, w, name, dev().is_cpu() || debug, {"stored", "count", "out"});
}

TEST(FailedLaunch, RecordsOverflowUndoesTheWholeLaunch) {
    check_records_overflow(false);
}

TEST(FailedLaunch, RecordsOverflowWithDebugUndoesTheWholeLaunch) {
    check_records_overflow(true);
}

// A record bound below the static estimate (a loop of constant length 3) can overflow too.
TEST(FailedLaunch, RecordBoundBelowTheEstimateUndoesTheLaunch) {
    weft::Module m{"bound_below_estimate",
                   {.deterministic = Deterministic::RunToRun,
                    .deterministic_strategy = weft::DeterministicStrategy::Records,
                    .deterministic_max_records = 1,
                    .deterministic_debug = true}};
    auto kernel = m.kernel("bound_below_estimate", {"values", "stored", "sums"},
                           [](Array<float> values, Array<float> stored, Array<float> sums) {
                               auto t = weft::tid();
                               stored[t] = values[t];
                               weft::for_(0, 3, 1, [&](Int) { weft::atomic_add(sums, t % 4, values[t]); });
                           });
    Written w;
    const auto f = failure_of([&] {
        weft::launch(kernel, Written::kThreads, weft::ones<float>(Written::kThreads, dev()), w.stored,
                     w.sums);
    });
    expect_undone_or_explained(f, w, "bound_below_estimate", true, {});
}

// The second reservation depends on the first one's slot, which the counting pass does not know:
// there every thread reserves twice, in the execution pass only some do.
template <class Body>
void check_divergence_with(const std::string& name, weft::DeterministicStrategy strategy, bool debug,
                           bool found_at_launch, Body body, const std::vector<std::string>& applied) {
    weft::Module m{name,
                   {.deterministic = Deterministic::RunToRun,
                    .deterministic_strategy = strategy,
                    .deterministic_debug = debug}};
    auto kernel = m.kernel(name, {"values", "stored", "sums", "count", "out"}, body);
    const int n = Written::kThreads;
    Written w;
    const auto f = failure_of(
        [&] { weft::launch(kernel, n, weft::ones<float>(n, dev()), w.stored, w.sums, w.count, w.out); });
    if (f) EXPECT_TRUE(has(f->error.what(), "reserved slots differently")) << f->error.what();
    if (f) EXPECT_TRUE(has(f->error.what(), "'count'")) << f->error.what();
    expect_undone_or_explained(f, w, name, found_at_launch, applied);
}

// Under every strategy of the accumulation target beside the counters, what the error says stays
// applied is what did.
template <class Body>
void check_divergence(const std::string& name, bool debug, bool found_at_launch, Body body,
                      const std::vector<std::string>& applied) {
    using weft::DeterministicStrategy;
    for (const auto strategy : {DeterministicStrategy::Auto, DeterministicStrategy::Exact,
                                DeterministicStrategy::Compact, DeterministicStrategy::Records}) {
        const std::string named = name + "_" + std::to_string(static_cast<int>(strategy));
        SCOPED_TRACE(named);
        check_divergence_with(named, strategy, debug, found_at_launch, body, applied);
    }
}

// Threads whose first slot is even reserve once more, in counter element `second`: the same one,
// or another (grouped on the device, docs/design/0021). A GPU finds either divergence at the next
// synchronization.
template <int second>
const auto diverging =
    [](Array<float> values, Array<float> stored, Array<float> sums, Array<int> count, Array<int> out) {
        auto t = weft::tid();
        stored[t] = values[t];
        weft::atomic_add(sums, t % 4, values[t]);
        auto a = weft::atomic_add(count, 0, 1);
        out[a] = t;
        weft::if_(a % 2 == 0, [&] { out[weft::atomic_add(count, second, 1)] = t; });
    };

TEST(FailedLaunch, DivergenceOnOneCounterElement) {
    check_divergence("diverge_one_element", false, dev().is_cpu(), diverging<0>, {"stored", "sums", "out"});
}

TEST(FailedLaunch, DivergenceOnOneCounterElementWithDebug) {
    check_divergence("diverge_one_element_debug", true, true, diverging<0>, {});
}

TEST(FailedLaunch, DivergenceOnTwoCounterElements) {
    check_divergence("diverge_two_elements", false, dev().is_cpu(), diverging<1>, {"stored", "sums", "out"});
}

TEST(FailedLaunch, DivergenceOnTwoCounterElementsWithDebug) {
    check_divergence("diverge_two_elements_debug", true, true, diverging<1>, {});
}

}  // namespace
