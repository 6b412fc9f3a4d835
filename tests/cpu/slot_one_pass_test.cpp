// Which slot-allocating kernels run in one pass on a GPU (plan::one_pass_slots): at most one
// reservation per thread, outside any data-dependent loop, on one constant counter element, and
// no deterministic accumulation.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "api/module_state.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Int;

struct Kernels {
    weft::Module m{"slot_one_pass_plans", {.deterministic = Deterministic::RunToRun}};
    Kernels() {
        m.kernel("compact", {"values", "count", "out"},
                 [](Array<float> values, Array<int> count, Array<float> out) {
                     auto t = weft::tid();
                     weft::if_(values[t] > 0.0f, [&] { out[weft::atomic_add(count, 0, 1)] = values[t]; });
                 });
        m.kernel("twice", {"count", "out"}, [](Array<int> count, Array<int> out) {
            auto t = weft::tid();
            out[weft::atomic_add(count, 0, 1)] = t;
            out[weft::atomic_add(count, 0, 1)] = t;
        });
        m.kernel("in_a_loop", {"trips", "count", "out"},
                 [](Array<int> trips, Array<int> count, Array<int> out) {
                     auto t = weft::tid();
                     weft::for_(trips[t], [&](Int) { out[weft::atomic_add(count, 0, 1)] = t; });
                 });
        m.kernel("binned", {"bins", "counters", "out"},
                 [](Array<int> bins, Array<int> counters, Array<int> out) {
                     auto t = weft::tid();
                     out[t] = weft::atomic_add(counters, bins[t], 1);
                 });
        m.kernel("with_sums", {"values", "count", "sums"},
                 [](Array<float> values, Array<int> count, Array<float> sums) {
                     auto t = weft::tid();
                     weft::atomic_add(sums, 0, values[t] * weft::cast<float>(weft::atomic_add(count, 0, 1)));
                 });
    }
    bool one_pass(const std::string& kernel) {
        const auto compiled = m.state()->compile(weft::test::test_device());
        keep.push_back(compiled);
        return weft::plan::one_pass_slots(*compiled->plan->find(kernel));
    }
    std::vector<std::shared_ptr<const weft::detail::CompiledModule>> keep;
};

TEST(SlotOnePass, OnlyOneReservationOnOneConstantElementRunsInOnePass) {
    Kernels k;
    EXPECT_TRUE(k.one_pass("compact")) << "the spec's compact_positive";
    EXPECT_FALSE(k.one_pass("twice")) << "two reservations per thread";
    EXPECT_FALSE(k.one_pass("in_a_loop")) << "a reservation in a data-dependent loop";
    EXPECT_FALSE(k.one_pass("binned")) << "a data-dependent counter element";
    EXPECT_FALSE(k.one_pass("with_sums")) << "deterministic accumulation beside the reservation";
}

}  // namespace
