// Which counter element a slot reservation reaches: through kernel-side views, and through counter
// arguments that share memory.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "api/module_state.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;

weft::Device dev() {
    return weft::test::test_device();
}

// ---------------------------------------------------------------------------------------------
// The one-element path (a GPU scans the counts instead of grouping them per element) is right only
// when every reservation reaches the same element; the lowering records that decision in the kernel's plan.

const weft::plan::Slots& lowered(const weft::Module& m, const std::string& kernel) {
    const auto compiled = m.state()->compile(dev());
    static std::vector<std::shared_ptr<const weft::detail::CompiledModule>> keep;
    keep.push_back(compiled);
    return compiled->plan->find(kernel)->slots;
}

struct OneElementKernels {
    weft::Module m{"slot_one_element", {.deterministic = Deterministic::RunToRun}};
    weft::Func<weft::Int(Array<int>)> take =
        m.func("take_first", [](Array<int> counter) { return weft::atomic_add(counter, 0, 1); });
    weft::Kernel<Array<int>, Array<int>, Array<int>> constant =
        m.kernel("constant_element", {"bins", "counter", "slots"},
                 [](Array<int> bins, Array<int> counter, Array<int> slots) {
                     auto t = weft::tid();
                     slots[t] = weft::atomic_add(counter, 0, 1) + bins[t] * 0;
                 });
    weft::Kernel<Array<int>, Array<int, 2>, Array<int>> variable_view =
        m.kernel("variable_view", {"bins", "counters", "slots"},
                 [](Array<int> bins, Array<int, 2> counters, Array<int> slots) {
                     auto t = weft::tid();
                     slots[t] = weft::atomic_add(counters[bins[t]], 0, 1);
                 });
    weft::Kernel<Array<int>, Array<int, 2>, Array<int>> constant_view =
        m.kernel("constant_view", {"bins", "counters", "slots"},
                 [](Array<int> bins, Array<int, 2> counters, Array<int> slots) {
                     auto t = weft::tid();
                     slots[t] = weft::atomic_add(counters[2], 1, 1) + bins[t] * 0;
                 });
    weft::Kernel<Array<int>, Array<int, 2>, Array<int>> variable_view_in_func =
        m.kernel("variable_view_in_func", {"bins", "counters", "slots"},
                 [take = take](Array<int> bins, Array<int, 2> counters, Array<int> slots) {
                     auto t = weft::tid();
                     slots[t] = take(counters[bins[t]]);
                 });
    weft::Kernel<Array<int>, Array<int, 2>, Array<int>> constant_view_in_func =
        m.kernel("constant_view_in_func", {"bins", "counters", "slots"},
                 [take = take](Array<int> bins, Array<int, 2> counters, Array<int> slots) {
                     auto t = weft::tid();
                     slots[t] = take(counters[1]) + bins[t] * 0;
                 });
};

OneElementKernels& one_element() {
    static OneElementKernels k;
    return k;
}

TEST(SlotCounterElement, OnlyOneConstantElementTakesTheOneElementPath) {
    const OneElementKernels& k = one_element();
    const auto& constant = lowered(k.m, "constant_element");
    EXPECT_TRUE(constant.single_counter_element);
    EXPECT_EQ(constant.single_counter_index, std::vector<int64_t>{0});
    const auto& constant_view = lowered(k.m, "constant_view");
    EXPECT_TRUE(constant_view.single_counter_element) << "counters[2] with index 1 is element (2, 1)";
    EXPECT_EQ(constant_view.single_counter_index, (std::vector<int64_t>{2, 1}));
    const auto& in_func = lowered(k.m, "constant_view_in_func");
    EXPECT_TRUE(in_func.single_counter_element);
    EXPECT_EQ(in_func.single_counter_index, (std::vector<int64_t>{1, 0}));
    EXPECT_FALSE(lowered(k.m, "variable_view").single_counter_element)
        << "counters[bins[t]] with index 0 is a different element per bin";
    EXPECT_FALSE(lowered(k.m, "variable_view_in_func").single_counter_element)
        << "the view is made in the kernel, the reservation in the function";
}

// counters is 4 x 3; bins[t] in 0..3. Checks the slots and counters `kernel` gives against the
// sequential reference, where thread t reserves one slot on element element_of(t).
void check_one_slot_each(const weft::Kernel<Array<int>, Array<int, 2>, Array<int>>& kernel,
                         const std::function<int(int bin)>& element_of) {
    const int n = 300;
    std::vector<int> bins(n), initial(12);
    for (int t = 0; t < n; ++t) bins[t] = (t * 5 + t / 7) % 4;
    for (int e = 0; e < 12; ++e) initial[e] = 3 * e + 1;
    std::vector<int> next = initial, want_slots(n);
    for (int t = 0; t < n; ++t) want_slots[t] = next[element_of(bins[t])]++;

    auto counters = weft::from_vector(initial, {4, 3}, dev());
    auto slots = weft::full<int>(n, -1, dev());
    weft::launch(kernel, n, weft::from_vector(bins, dev()), counters, slots);
    EXPECT_EQ(slots.to_vector(), want_slots);
    EXPECT_EQ(counters.to_vector(), next);
}

TEST(SlotCounterElement, ReservationsThroughViewsReachTheirElements) {
    const OneElementKernels& k = one_element();
    {
        SCOPED_TRACE("counters[bins[t]], index 0");
        check_one_slot_each(k.variable_view, [](int bin) { return bin * 3; });
    }
    {
        SCOPED_TRACE("counters[2], index 1");
        check_one_slot_each(k.constant_view, [](int) { return 7; });
    }
    {
        SCOPED_TRACE("take(counters[bins[t]])");
        check_one_slot_each(k.variable_view_in_func, [](int bin) { return bin * 3; });
    }
    {
        SCOPED_TRACE("take(counters[1])");
        check_one_slot_each(k.constant_view_in_func, [](int) { return 3; });
    }
}

// ---------------------------------------------------------------------------------------------
// Counter arguments that share memory hand out each slot of an element once, as one counter would.

using ThreeCounters =
    weft::Kernel<Array<int>, Array<int>, Array<int>, Array<int>, Array<int>, Array<int>, Array<int, 2>>;

ThreeCounters& three_counters() {
    static weft::Module m{"slot_aliases", {.deterministic = Deterministic::RunToRun}};
    static ThreeCounters k =
        m.kernel("three_counters", {"first_at", "second_at", "third_at", "first", "second", "third", "got"},
                 [](Array<int> first_at, Array<int> second_at, Array<int> third_at, Array<int> first,
                    Array<int> second, Array<int> third, Array<int, 2> got) {
                     auto t = weft::tid();
                     got(t, 0) = weft::atomic_add(first, first_at[t], 1);
                     got(t, 1) = weft::atomic_add(second, second_at[t], 2);
                     got(t, 2) = weft::atomic_add(third, third_at[t], 1);
                 });
    return k;
}

// A counter argument: a view of `base`, and for each of its indices the base element it is.
struct CounterView {
    weft::AnyArray view;
    std::vector<int> elements;
};

// Thread t reserves 1, 2 and 1 slots on first[t % |first|], second[(t / 2) % |second|] and
// third[(t * 7) % |third|], in that order; checks the slots and `base` against doing so in thread
// order on base's elements.
void check_aliases(const weft::DeviceArray<int>& base, const CounterView& first, const CounterView& second,
                   const CounterView& third) {
    const int n = 500;
    std::vector<int> first_at(n), second_at(n), third_at(n);
    for (int t = 0; t < n; ++t) {
        first_at[t] = t % static_cast<int>(first.elements.size());
        second_at[t] = (t / 2) % static_cast<int>(second.elements.size());
        third_at[t] = (t * 7) % static_cast<int>(third.elements.size());
    }
    std::vector<int> next = base.to_vector(), want_got;
    for (int t = 0; t < n; ++t) {
        want_got.push_back(next[first.elements[first_at[t]]]);
        next[first.elements[first_at[t]]] += 1;
        want_got.push_back(next[second.elements[second_at[t]]]);
        next[second.elements[second_at[t]]] += 2;
        want_got.push_back(next[third.elements[third_at[t]]]);
        next[third.elements[third_at[t]]] += 1;
    }
    auto got = weft::full<int>({n, 3}, -1, dev());
    weft::launch(three_counters(), n, weft::from_vector(first_at, dev()), weft::from_vector(second_at, dev()),
                 weft::from_vector(third_at, dev()), first.view, second.view, third.view, got);
    EXPECT_EQ(got.to_vector(), want_got) << "slots per thread: first, second, third";
    EXPECT_EQ(base.to_vector(), next) << "each element advances by every reservation on it";
}

std::vector<int> base_values(int n) {
    std::vector<int> v(n);
    for (int i = 0; i < n; ++i) v[i] = 10 * i + 3;
    return v;
}

TEST(SlotCounterAliases, OneArrayPassedAsThreeCounters) {
    auto base = weft::from_vector(base_values(3), dev());
    const CounterView all{base, {0, 1, 2}};
    check_aliases(base, all, all, all);
}

TEST(SlotCounterAliases, OverlappingSlicesJoinedByALaterOne) {
    // first = [0, 2), second = [4, 6): apart; third = [1, 5) overlaps both.
    auto base = weft::from_vector(base_values(8), dev());
    check_aliases(base, {base.slice(0, 0, 2), {0, 1}}, {base.slice(0, 4, 6), {4, 5}},
                  {base.slice(0, 1, 5), {1, 2, 3, 4}});
    EXPECT_EQ(base.to_vector()[6], 63) << "elements outside every view keep their values";
    EXPECT_EQ(base.to_vector()[7], 73);
}

TEST(SlotCounterAliases, RowsAndAColumnOfOneMatrix) {
    // A 2 x 3 matrix: row 0, column 1 (elements 1 and 4) and row 1.
    auto base = weft::from_vector(base_values(6), {2, 3}, dev());
    check_aliases(base, {base[0], {0, 1, 2}}, {base.select(1, 1), {1, 4}}, {base[1], {3, 4, 5}});
}

TEST(SlotCounterAliases, InterleavedViewsAndASeparateOne) {
    // Even and odd elements share no element but their address ranges overlap; [6, 8) is apart.
    auto base = weft::from_vector(base_values(8), dev());
    check_aliases(base, {base.slice(0, 0, 6, 2), {0, 2, 4}}, {base.slice(0, 1, 6, 2), {1, 3, 5}},
                  {base.slice(0, 6, 8), {6, 7}});
}

}  // namespace
