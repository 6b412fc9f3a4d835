// Deterministic slot allocation (Pattern 2): exact slot layouts against a sequential host reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/exact_sum.hpp"
#include "support/slot_amounts.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::Deterministic;
using weft::Int;
using weft::test::has;

weft::Device dev() {
    return weft::test::test_device();
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// ---------------------------------------------------------------------------------------------
// The sequential reference: threads in linear index order, each thread's reservations in program
// order; a reservation of n slots on counter element e returns the element's current value and
// adds n to it.

struct Reservation {
    int element;
    int n;
};

struct Layout {
    std::vector<std::vector<int>> slots;  // per thread, per reservation in program order
    std::vector<int> counters;            // the counter's final value
};

Layout reference(std::vector<int> counters, const std::vector<std::vector<Reservation>>& threads) {
    Layout l;
    l.slots.resize(threads.size());
    for (size_t t = 0; t < threads.size(); ++t) {
        for (const Reservation& r : threads[t]) {
            l.slots[t].push_back(counters[r.element]);
            counters[r.element] += r.n;
        }
    }
    l.counters = std::move(counters);
    return l;
}

// Values whose sums are exact in any order: multiples of 0.25 in [-3, 3], about half positive.
std::vector<float> quarter_values(int n, int seed = 0) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>((i * 37 + seed * 11) % 25) - 3.0f;
    return v;
}

std::vector<int> spread(int n, int k, int seed = 0) {
    std::vector<int> b(n);
    for (int i = 0; i < n; ++i) b[i] = (i * 7 + i / 3 + seed) % k;
    return b;
}

// compact_positive's layout: positive values in thread order after `initial` slots.
std::vector<std::vector<Reservation>> positive_reservations(const std::vector<float>& values) {
    std::vector<std::vector<Reservation>> threads(values.size());
    for (size_t t = 0; t < values.size(); ++t)
        if (values[t] > 0.0f) threads[t].push_back({0, 1});
    return threads;
}

// ---------------------------------------------------------------------------------------------
// The kernels, in one module per deterministic mode.

using CompactKernel = weft::Kernel<Array<float>, Array<int>, Array<float>>;

CompactKernel compact_positive(weft::Module& m) {
    // The spec's compact_positive.
    return m.kernel("compact_positive", {"values", "count", "compacted"},
                    [](Array<float> values, Array<int> count, Array<float> compacted) {
                        auto tid = weft::tid();
                        auto v = values[tid];
                        weft::if_(v > 0.0f, [&] {
                            auto slot = weft::atomic_add(count, 0, 1);
                            compacted[slot] = v;
                        });
                    });
}

struct SlotKernels {
    weft::Module m;
    CompactKernel compact;
    // One slot on counters[bins[t]]; the slot is stored in slots[t].
    weft::Kernel<Array<int>, Array<int>, Array<int>> bin_slots;
    // Three reservations per thread: amounts[t] slots (0..3) on counters[bins[t]], one slot on
    // counters[0], one more on counters[bins[t]]. got(t, r) = the r-th slot; owner(e, s) = who has s.
    weft::Kernel<Array<int>, Array<int>, Array<int>, Array<int, 2>, Array<int, 2>> mixed;
    // Kernel-side views: counter = world_counters[worlds[t]]; one slot on counter[0], two on
    // counter[1 + t % 2].
    weft::Kernel<Array<int>, Array<int, 2>, Array<int, 2>> world_slots;
    // The form: slot = atomic_add(bin_counters[bin], 0, 1) on a 2-D counter; the
    // constant 0 inside the data-dependent view is not one counter element.
    weft::Kernel<Array<int>, Array<float>, Array<int, 2>, Array<float, 2>> view_bins;
    // The 2-D index form: one slot on world_counters(worlds[t], t % 3).
    weft::Kernel<Array<int>, Array<int, 2>, Array<int>> grid_index_slots;
    // Reservations inside a weft function, called twice.
    weft::Func<Int(Array<int>, Int, Int)> take;
    weft::Kernel<Array<int>, Array<int>, Array<int>, Array<int, 2>> via_func;
    // A 2-D launch: slots follow the row-major linear thread index.
    weft::Kernel<Array<int>, Array<int, 2>> grid_launch;
    // Reserving next to every other kind of side effect (the counting pass must suppress them).
    weft::Kernel<Array<float>, Array<int>, Array<float>, Array<float>, Array<int>, Array<int>, Array<int>,
                 Array<int>, Array<int>>
        side_effects;
    // Reserving next to deterministic float accumulation (Pattern 1).
    weft::Kernel<Array<float>, Array<int>, Array<int>, Array<float>, Array<float>> slots_and_sums;

    explicit SlotKernels(const std::string& name, Deterministic mode)
        : m(name, {.deterministic = mode}),
          compact(compact_positive(m)),
          bin_slots(m.kernel("bin_slots", {"bins", "counters", "slots"},
                             [](Array<int> bins, Array<int> counters, Array<int> slots) {
                                 auto t = weft::tid();
                                 slots[t] = weft::atomic_add(counters, bins[t], 1);
                             })),
          mixed(m.kernel("mixed", {"bins", "amounts", "counters", "got", "owner"},
                         [](Array<int> bins, Array<int> amounts, Array<int> counters, Array<int, 2> got,
                            Array<int, 2> owner) {
                             auto t = weft::tid();
                             auto b = bins[t];
                             auto n = amounts[t];
                             auto a = weft::atomic_add(counters, b, n);
                             auto c = weft::atomic_add(counters, 0, 1);
                             auto e = weft::atomic_add(counters, b, 1);
                             got(t, 0) = a;
                             got(t, 1) = c;
                             got(t, 2) = e;
                             weft::for_(n, [&](Int k) { owner(b, a + k) = t * 8 + k; });
                             owner(0, c) = t * 8 + 4;
                             owner(b, e) = t * 8 + 5;
                         })),
          world_slots(m.kernel("world_slots", {"worlds", "world_counters", "got"},
                               [](Array<int> worlds, Array<int, 2> world_counters, Array<int, 2> got) {
                                   auto t = weft::tid();
                                   auto counter = world_counters[worlds[t]];
                                   got(t, 0) = weft::atomic_add(counter, 0, 1);
                                   got(t, 1) = weft::atomic_add(counter, 1 + t % 2, 2);
                               })),
          view_bins(m.kernel(
              "view_bins", {"bins", "values", "bin_counters", "output"},
              [](Array<int> bins, Array<float> values, Array<int, 2> bin_counters, Array<float, 2> output) {
                  auto t = weft::tid();
                  auto bin = bins[t];
                  auto slot = weft::atomic_add(bin_counters[bin], 0, 1);
                  output(bin, slot) = values[t];
              })),
          grid_index_slots(m.kernel("grid_index_slots", {"worlds", "world_counters", "slots"},
                                    [](Array<int> worlds, Array<int, 2> world_counters, Array<int> slots) {
                                        auto t = weft::tid();
                                        slots[t] = weft::atomic_add(world_counters, worlds[t], t % 3, 1);
                                    })),
          take(m.func("take_slots",
                      [](Array<int> counter, Int i, Int n) { return weft::atomic_add(counter, i, n); })),
          via_func(m.kernel(
              "via_func", {"bins", "amounts", "counters", "got"},
              [take = take](Array<int> bins, Array<int> amounts, Array<int> counters, Array<int, 2> got) {
                  auto t = weft::tid();
                  got(t, 0) = take(counters, bins[t], amounts[t]);
                  got(t, 1) = take(counters, 0, 1);
              })),
          grid_launch(m.kernel("grid_launch", {"counter", "slots"},
                               [](Array<int> counter, Array<int, 2> slots) {
                                   auto ij = weft::tid<2>();
                                   auto i = ij[0];
                                   auto j = ij[1];
                                   weft::if_((i + 2 * j) % 3 != 0,
                                             [&] { slots(i, j) = weft::atomic_add(counter, 0, 1); });
                               })),
          side_effects(m.kernel(
              "side_effects",
              {"values", "count", "compacted", "stored", "executions", "down", "bits", "toggles", "maxes"},
              [](Array<float> values, Array<int> count, Array<float> compacted, Array<float> stored,
                 Array<int> executions, Array<int> down, Array<int> bits, Array<int> toggles,
                 Array<int> maxes) {
                  auto t = weft::tid();
                  auto v = values[t];
                  stored[t] = v * 2.0f;
                  executions[0] += 1;
                  weft::atomic_sub(down, t % 2, 3);
                  weft::atomic_or(bits, t % 4, 1 << (t % 29));
                  weft::atomic_xor(toggles, t % 8, 1 << (t / 8));  // twice would clear the bit again
                  weft::atomic_max(maxes, 0, t);
                  weft::if_(t < 4, [&] { weft::print("side_effects ran %d\n", t); });
                  weft::if_(v > 0.0f, [&] {
                      auto slot = weft::atomic_add(count, 0, 1);
                      compacted[slot] = v;
                      weft::if_(t < 24, [&] { weft::print("side_effects thread %d slot %d\n", t, slot); });
                  });
              })),
          slots_and_sums(m.kernel("slots_and_sums", {"values", "bins", "count", "compacted", "sums"},
                                  [](Array<float> values, Array<int> bins, Array<int> count,
                                     Array<float> compacted, Array<float> sums) {
                                      auto t = weft::tid();
                                      auto v = values[t];
                                      weft::if_(v > 0.0f, [&] {
                                          auto slot = weft::atomic_add(count, 0, 1);
                                          compacted[slot] = v;
                                      });
                                      weft::atomic_add(sums, bins[t], v);
                                  })) {}
};

struct Mode {
    const char* name;
    Deterministic mode;
};

void PrintTo(const Mode& m, std::ostream* os) {
    *os << m.name;
}

const Mode kModes[] = {{"RunToRun", Deterministic::RunToRun}, {"GpuToGpu", Deterministic::GpuToGpu}};

class SlotAllocation : public ::testing::TestWithParam<Mode> {
protected:
    // Built once per mode (compiling is the slow part).
    SlotKernels& s() const {
        static std::unique_ptr<SlotKernels> kernels[2];
        const int i = GetParam().mode == Deterministic::RunToRun ? 0 : 1;
        if (!kernels[i])
            kernels[i] =
                std::make_unique<SlotKernels>(std::string("slots_") + kModes[i].name, kModes[i].mode);
        return *kernels[i];
    }
};

// ---------------------------------------------------------------------------------------------
// Constant counter index: the spec's compact_positive.

// Runs compact_positive on `values` into `count` (holding `initial`) and `compacted`; updates the
// host copy `host_compacted` from the reference and checks both arrays against it exactly.
void check_compact(const CompactKernel& kernel, const std::vector<float>& values, int initial,
                   weft::DeviceArray<int>& count, weft::DeviceArray<float>& compacted,
                   std::vector<float>& host_compacted) {
    ASSERT_EQ(count.to_vector(), std::vector<int>{initial});
    weft::launch(kernel, static_cast<int64_t>(values.size()), weft::from_vector(values, dev()), count,
                 compacted);
    const Layout want = reference({initial}, positive_reservations(values));
    for (size_t t = 0; t < values.size(); ++t)
        if (!want.slots[t].empty()) host_compacted[want.slots[t][0]] = values[t];
    EXPECT_EQ(count.to_vector(), want.counters) << "the counter ends at its initial value plus the slots";
    EXPECT_EQ(compacted.to_vector(), host_compacted)
        << "positive values in thread order after slot " << initial;
}

TEST_P(SlotAllocation, CompactPositiveIsInThreadOrder) {
    const int n = 3000;
    const auto values = quarter_values(n);
    auto count = weft::zeros<int>(1, dev());
    auto compacted = weft::full<float>(2 * n, -100.0f, dev());
    std::vector<float> host(2 * n, -100.0f);
    check_compact(s().compact, values, 0, count, compacted, host);
}

TEST_P(SlotAllocation, NonzeroInitialCounterAppendsAfterIt) {
    const int n = 3000;
    const auto values = quarter_values(n, 3);
    auto count = weft::full<int>(1, 17, dev());
    auto compacted = weft::full<float>(2 * n, -100.0f, dev());
    std::vector<float> host(2 * n, -100.0f);
    check_compact(s().compact, values, 17, count, compacted, host);
}

TEST_P(SlotAllocation, ThreeLaunchesAppendToTheSameOutput) {
    const int n = 2500;
    auto count = weft::full<int>(1, 3, dev());
    auto compacted = weft::full<float>(3 * n + 3, -100.0f, dev());
    std::vector<float> host(3 * n + 3, -100.0f);
    int initial = 3;
    for (int launch = 0; launch < 3; ++launch) {
        SCOPED_TRACE("launch " + std::to_string(launch));
        const auto values = quarter_values(n, launch * 5 + 1);
        check_compact(s().compact, values, initial, count, compacted, host);
        initial = reference({initial}, positive_reservations(values)).counters[0];
    }
    // No positive value: the counter and the output stay as they are.
    check_compact(s().compact, std::vector<float>(n, -1.0f), initial, count, compacted, host);
}

// ---------------------------------------------------------------------------------------------
// Data-dependent counter index, varying reservation sizes, several reservations per thread.

// bin_slots over `bins` into `counters` (any 1-D view): exact slots, exact final counters.
void check_bin_slots(const SlotKernels& k, const weft::DeviceArray<int>& counters,
                     const std::vector<int>& bins) {
    const auto initial = counters.to_vector();
    std::vector<std::vector<Reservation>> threads(bins.size());
    for (size_t t = 0; t < bins.size(); ++t) threads[t] = {{bins[t], 1}};
    const Layout want = reference(initial, threads);
    auto slots = weft::full<int>(static_cast<int64_t>(bins.size()), -1, dev());
    weft::launch(k.bin_slots, static_cast<int64_t>(bins.size()), weft::from_vector(bins, dev()), counters,
                 slots);
    std::vector<int> want_slots(bins.size());
    for (size_t t = 0; t < bins.size(); ++t) want_slots[t] = want.slots[t][0];
    EXPECT_EQ(slots.to_vector(), want_slots);
    EXPECT_EQ(counters.to_vector(), want.counters);
}

TEST_P(SlotAllocation, DataDependentCounterIndex) {
    // Six counters with nonzero initial values; only the first four are used.
    auto counters = weft::from_vector(std::vector<int>{5, 0, 100, 7, 42, -3}, dev());
    check_bin_slots(s(), counters, spread(4000, 4));
    EXPECT_EQ(counters.to_vector()[4], 42) << "untouched counter elements keep their values";
    EXPECT_EQ(counters.to_vector()[5], -3);
}

struct MixedCase {
    std::vector<int> bins, amounts, initial;
    int capacity;
};

MixedCase mixed_case(int n, int elements, int seed) {
    MixedCase c{spread(n, elements, seed), {}, {}, 0};
    for (int t = 0; t < n; ++t) c.amounts.push_back((t + seed) % 4);  // 0, 1, 2 or 3 slots
    for (int e = 0; e < elements; ++e) c.initial.push_back(e * 13 % 7);
    c.capacity = 6 * n + 16;
    return c;
}

Layout mixed_reference(const MixedCase& c) {
    std::vector<std::vector<Reservation>> threads(c.bins.size());
    for (size_t t = 0; t < c.bins.size(); ++t)
        threads[t] = {{c.bins[t], c.amounts[t]}, {0, 1}, {c.bins[t], 1}};
    return reference(c.initial, threads);
}

struct MixedResult {
    std::vector<int> got, owner, counters;
    friend bool operator==(const MixedResult&, const MixedResult&) = default;
};

MixedResult run_mixed(const SlotKernels& k, const MixedCase& c) {
    const int n = static_cast<int>(c.bins.size());
    const int elements = static_cast<int>(c.initial.size());
    auto counters = weft::from_vector(c.initial, dev());
    auto got = weft::full<int>({n, 3}, -1, dev());
    auto owner = weft::full<int>({elements, c.capacity}, -1, dev());
    weft::launch(k.mixed, n, weft::from_vector(c.bins, dev()), weft::from_vector(c.amounts, dev()), counters,
                 got, owner);
    return {got.to_vector(), owner.to_vector(), counters.to_vector()};
}

MixedResult mixed_expected(const MixedCase& c) {
    const Layout l = mixed_reference(c);
    const int n = static_cast<int>(c.bins.size());
    MixedResult r{std::vector<int>(3 * n), std::vector<int>(c.initial.size() * c.capacity, -1), l.counters};
    for (int t = 0; t < n; ++t) {
        for (int i = 0; i < 3; ++i) r.got[3 * t + i] = l.slots[t][i];
        for (int k = 0; k < c.amounts[t]; ++k)
            r.owner[c.bins[t] * c.capacity + l.slots[t][0] + k] = t * 8 + k;
        r.owner[l.slots[t][1]] = t * 8 + 4;
        r.owner[c.bins[t] * c.capacity + l.slots[t][2]] = t * 8 + 5;
    }
    return r;
}

void expect_mixed(const MixedResult& got, const MixedResult& want) {
    EXPECT_EQ(got.counters, want.counters) << "final counters";
    EXPECT_EQ(got.got, want.got) << "slots per thread, per reservation (got(t, r))";
    EXPECT_EQ(got.owner, want.owner) << "who wrote each slot";
}

TEST_P(SlotAllocation, ZeroOneAndSeveralSlotsSeveralReservationsPerThread) {
    const MixedCase c = mixed_case(3000, 3, 1);
    expect_mixed(run_mixed(s(), c), mixed_expected(c));
}

// ---------------------------------------------------------------------------------------------
// Sliced counters.

// Host-side views as the counter: a row (offset), a column (strided), a 2-D block.
TEST_P(SlotAllocation, HostSideCounterViews) {
    const std::vector<int> initial = {1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 400};
    auto counters = weft::from_vector(initial, {3, 4}, dev());
    {
        SCOPED_TRACE("row counters[1]");
        check_bin_slots(s(), counters[1], spread(1000, 4, 2));
        const auto all = counters.to_vector();
        EXPECT_EQ(std::vector<int>(all.begin(), all.begin() + 4),
                  std::vector<int>(initial.begin(), initial.begin() + 4));
        EXPECT_EQ(std::vector<int>(all.begin() + 8, all.end()),
                  std::vector<int>(initial.begin() + 8, initial.end()))
            << "only the row changes";
    }
    {
        SCOPED_TRACE("column counters.select(1, 2)");
        const auto before = counters.to_vector();
        check_bin_slots(s(), counters.select(1, 2), spread(1000, 3, 5));
        const auto after = counters.to_vector();
        for (int i = 0; i < 12; ++i)
            if (i % 4 != 2) EXPECT_EQ(after[i], before[i]) << "only the column changes; element " << i;
    }
    {
        SCOPED_TRACE("rows 1..2 as world counters");
        const auto before = counters.to_vector();
        auto block = counters.slice(0, 1, 3);
        const int n = 900;
        const auto worlds = spread(n, 2, 4);
        auto got = weft::full<int>({n, 2}, -1, dev());
        const auto block_initial = block.to_vector();
        std::vector<std::vector<Reservation>> threads(n);
        for (int t = 0; t < n; ++t) threads[t] = {{worlds[t] * 4, 1}, {worlds[t] * 4 + 1 + t % 2, 2}};
        const Layout want = reference(block_initial, threads);
        weft::launch(s().world_slots, n, weft::from_vector(worlds, dev()), block, got);
        std::vector<int> want_got;
        for (int t = 0; t < n; ++t)
            want_got.insert(want_got.end(), want.slots[t].begin(), want.slots[t].end());
        EXPECT_EQ(got.to_vector(), want_got);
        EXPECT_EQ(block.to_vector(), want.counters);
        const auto after = counters.to_vector();
        EXPECT_EQ(std::vector<int>(after.begin(), after.begin() + 4),
                  std::vector<int>(before.begin(), before.begin() + 4))
            << "row 0 is outside the view";
    }
}

// Kernel-side views: counter = world_counters[world], then atomic_add(counter, 0, 1).
TEST_P(SlotAllocation, KernelSideCounterViews) {
    const int n = 3000, num_worlds = 5;
    const auto worlds = spread(n, num_worlds, 1);
    std::vector<int> initial(num_worlds * 3);
    for (int i = 0; i < num_worlds * 3; ++i) initial[i] = i * 3 % 11;
    std::vector<std::vector<Reservation>> threads(n);
    for (int t = 0; t < n; ++t) threads[t] = {{worlds[t] * 3, 1}, {worlds[t] * 3 + 1 + t % 2, 2}};
    const Layout want = reference(initial, threads);

    auto counters = weft::from_vector(initial, {num_worlds, 3}, dev());
    auto got = weft::full<int>({n, 2}, -1, dev());
    weft::launch(s().world_slots, n, weft::from_vector(worlds, dev()), counters, got);
    std::vector<int> want_got;
    for (int t = 0; t < n; ++t) want_got.insert(want_got.end(), want.slots[t].begin(), want.slots[t].end());
    EXPECT_EQ(got.to_vector(), want_got);
    EXPECT_EQ(counters.to_vector(), want.counters);
}

// The case: 96 threads into 4 bins through counters[bin] (a 4 x 1 counter), where a GPU
// handed every reservation to counters[0].
TEST_P(SlotAllocation, ConstantIndexInsideADataDependentView) {
    const int n = 96, bins = 4;
    std::vector<int> bin_of(n);
    std::vector<float> values(n);
    for (int t = 0; t < n; ++t) {
        bin_of[t] = (t * 3 + t / 24) % bins;  // 24 threads per bin
        values[t] = 0.5f * static_cast<float>(t) + 1.0f;
    }
    std::vector<std::vector<Reservation>> threads(n);
    for (int t = 0; t < n; ++t) threads[t] = {{bin_of[t], 1}};
    const Layout want = reference(std::vector<int>(bins, 0), threads);
    std::vector<float> want_output(bins * n, -1.0f);
    for (int t = 0; t < n; ++t) want_output[bin_of[t] * n + want.slots[t][0]] = values[t];

    auto counters = weft::zeros<int>({bins, 1}, dev());
    auto output = weft::full<float>({bins, n}, -1.0f, dev());
    weft::launch(s().view_bins, n, weft::from_vector(bin_of, dev()), weft::from_vector(values, dev()),
                 counters, output);
    EXPECT_EQ(counters.to_vector(), want.counters) << "each bin's counter holds its own reservations";
    EXPECT_EQ(output.to_vector(), want_output) << "each bin's values in thread order";
}

TEST_P(SlotAllocation, TwoDimensionalCounterIndex) {
    const int n = 3000, num_worlds = 4;
    const auto worlds = spread(n, num_worlds, 3);
    std::vector<int> initial(num_worlds * 3);
    for (int i = 0; i < num_worlds * 3; ++i) initial[i] = 50 - i;
    std::vector<std::vector<Reservation>> threads(n);
    for (int t = 0; t < n; ++t) threads[t] = {{worlds[t] * 3 + t % 3, 1}};
    const Layout want = reference(initial, threads);

    auto counters = weft::from_vector(initial, {num_worlds, 3}, dev());
    auto slots = weft::full<int>(n, -1, dev());
    weft::launch(s().grid_index_slots, n, weft::from_vector(worlds, dev()), counters, slots);
    std::vector<int> want_slots(n);
    for (int t = 0; t < n; ++t) want_slots[t] = want.slots[t][0];
    EXPECT_EQ(slots.to_vector(), want_slots);
    EXPECT_EQ(counters.to_vector(), want.counters);
}

// ---------------------------------------------------------------------------------------------
// Functions, N-D launches.

TEST_P(SlotAllocation, ReservationInAWeftFunction) {
    const int n = 3000;
    const auto bins = spread(n, 3, 6);
    std::vector<int> amounts(n);
    for (int t = 0; t < n; ++t) amounts[t] = t % 4;
    const std::vector<int> initial = {4, 0, 9};
    std::vector<std::vector<Reservation>> threads(n);
    for (int t = 0; t < n; ++t) threads[t] = {{bins[t], amounts[t]}, {0, 1}};
    const Layout want = reference(initial, threads);

    auto counters = weft::from_vector(initial, dev());
    auto got = weft::full<int>({n, 2}, -1, dev());
    weft::launch(s().via_func, n, weft::from_vector(bins, dev()), weft::from_vector(amounts, dev()), counters,
                 got);
    std::vector<int> want_got;
    for (int t = 0; t < n; ++t) want_got.insert(want_got.end(), want.slots[t].begin(), want.slots[t].end());
    EXPECT_EQ(got.to_vector(), want_got);
    EXPECT_EQ(counters.to_vector(), want.counters);
}

TEST_P(SlotAllocation, TwoDimensionalLaunchUsesTheLinearThreadIndex) {
    const int rows = 37, cols = 61;
    std::vector<int> want(rows * cols, -1);
    int next = 11;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            if ((i + 2 * j) % 3 != 0) want[i * cols + j] = next++;
    auto counter = weft::full<int>(1, 11, dev());
    auto slots = weft::full<int>({rows, cols}, -1, dev());
    weft::launch(s().grid_launch, {rows, cols}, counter, slots);
    EXPECT_EQ(slots.to_vector(), want);
    EXPECT_EQ(counter.to_vector(), std::vector<int>{next});
}

// ---------------------------------------------------------------------------------------------
// The counting pass suppresses stores, other atomics and prints; the float accumulation of the same
// kernel is still exact.

// Runs `launch` with stdout captured; returns what the kernel printed.
template <class F>
std::string captured(F launch) {
    testing::internal::CaptureStdout();
    launch();
    weft::synchronize(dev());
    std::fflush(stdout);
    return testing::internal::GetCapturedStdout();
}

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST_P(SlotAllocation, CountingPassSuppressesOtherSideEffects) {
    const int n = 200;  // toggles uses bit t / 8 < 25
    const auto values = quarter_values(n, 2);
    const Layout want = reference({6}, positive_reservations(values));

    auto count = weft::full<int>(1, 6, dev());
    auto compacted = weft::full<float>(n + 6, -100.0f, dev());
    auto stored = weft::full<float>(n, -100.0f, dev());
    auto executions = weft::full<int>(1, 1000, dev());
    auto down = weft::zeros<int>(2, dev());
    auto bits = weft::zeros<int>(4, dev());
    auto toggles = weft::zeros<int>(8, dev());
    auto maxes = weft::full<int>(1, -5, dev());
    const std::string printed = captured([&] {
        weft::launch(s().side_effects, n, weft::from_vector(values, dev()), count, compacted, stored,
                     executions, down, bits, toggles, maxes);
    });

    std::vector<float> want_compacted(n + 6, -100.0f), want_stored(n);
    std::vector<int> want_bits(4, 0), want_toggles(8, 0);
    std::vector<std::string> want_lines;
    for (int t = 0; t < n; ++t) {
        want_stored[t] = values[t] * 2.0f;
        want_bits[t % 4] |= 1 << (t % 29);
        want_toggles[t % 8] ^= 1 << (t / 8);
        if (t < 4) want_lines.push_back("side_effects ran " + std::to_string(t));
        if (!want.slots[t].empty()) {
            want_compacted[want.slots[t][0]] = values[t];
            if (t < 24)
                want_lines.push_back("side_effects thread " + std::to_string(t) + " slot " +
                                     std::to_string(want.slots[t][0]));
        }
    }
    std::sort(want_lines.begin(), want_lines.end());
    EXPECT_EQ(count.to_vector(), want.counters);
    EXPECT_EQ(compacted.to_vector(), want_compacted) << "no store at a counting-pass slot";
    EXPECT_EQ(stored.to_vector(), want_stored);
    EXPECT_EQ(executions.to_vector(), std::vector<int>{1000 + n}) << "the atomic_add ran once per thread";
    EXPECT_EQ(down.to_vector(), (std::vector<int>{-3 * (n / 2), -3 * (n / 2)})) << "the atomic_sub ran once";
    EXPECT_EQ(bits.to_vector(), want_bits);
    EXPECT_EQ(toggles.to_vector(), want_toggles) << "an atomic_xor applied twice clears its bit";
    EXPECT_EQ(maxes.to_vector(), std::vector<int>{n - 1});
    EXPECT_EQ(sorted_lines(printed), want_lines) << "each print once, with the final slot:\n" << printed;
}

TEST_P(SlotAllocation, SlotsAndFloatAccumulationInOneKernel) {
    const int n = 3000, num_bins = 3;
    // Sums that plain float atomics get wrong in any order: +-1e20 cancel, small values survive.
    std::vector<float> values = quarter_values(n, 4);
    for (int t = 0; t < n; t += 10) values[t] = 1e20f;
    for (int t = 5; t < n; t += 10) values[t] = -1e20f;
    const auto bins = spread(n, num_bins, 2);
    const std::vector<float> initial_sums = {0.5f, -0.0f, 3.0f};
    std::vector<std::vector<float>> contributions(num_bins);
    for (int t = 0; t < n; ++t) contributions[bins[t]].push_back(values[t]);
    const Layout want = reference({2}, positive_reservations(values));

    auto count = weft::full<int>(1, 2, dev());
    auto compacted = weft::full<float>(n + 2, -100.0f, dev());
    auto sums = weft::from_vector(initial_sums, dev());
    weft::launch(s().slots_and_sums, n, weft::from_vector(values, dev()), weft::from_vector(bins, dev()),
                 count, compacted, sums);

    std::vector<float> want_compacted(n + 2, -100.0f);
    for (int t = 0; t < n; ++t)
        if (!want.slots[t].empty()) want_compacted[want.slots[t][0]] = values[t];
    EXPECT_EQ(count.to_vector(), want.counters);
    EXPECT_EQ(compacted.to_vector(), want_compacted);
    const auto got_sums = sums.to_vector();
    for (int b = 0; b < num_bins; ++b) {
        const float exact = weft::test::exact_sum(initial_sums[b], contributions[b]);
        EXPECT_TRUE(weft::test::same_bits(got_sums[b], exact))
            << "bin " << b << ": " << weft::test::describe(got_sums[b]) << " vs the exact sum "
            << weft::test::describe(exact) << " (added once, not once per pass)";
    }
}

// ---------------------------------------------------------------------------------------------
// Repeat exactness: on the GPU, thread arrival order varies; the slots must not.

TEST_P(SlotAllocation, RepeatedRunsAreIdentical) {
    const MixedCase c = mixed_case(20000, 7, 5);
    const MixedResult want = mixed_expected(c);
    const MixedResult first = run_mixed(s(), c);
    expect_mixed(first, want);
    for (int run = 1; run < 3; ++run) EXPECT_TRUE(run_mixed(s(), c) == first) << "run " << run << " differs";
    // The compaction too, three times.
    const auto values = quarter_values(20000, 9);
    std::vector<float> results[3];
    for (auto& r : results) {
        auto count = weft::zeros<int>(1, dev());
        auto compacted = weft::full<float>(20000, -100.0f, dev());
        weft::launch(s().compact, 20000, weft::from_vector(values, dev()), count, compacted);
        r = compacted.to_vector();
    }
    std::vector<float> want_compacted(20000, -100.0f);
    const Layout l = reference({0}, positive_reservations(values));
    for (int t = 0; t < 20000; ++t)
        if (!l.slots[t].empty()) want_compacted[l.slots[t][0]] = values[t];
    EXPECT_EQ(results[0], want_compacted);
    EXPECT_EQ(results[1], results[0]);
    EXPECT_EQ(results[2], results[0]);
}

// The body of kernel `header` in printed IR.
std::string body_of(const std::string& ir, const std::string& header) {
    const size_t begin = ir.find(header);
    if (begin == std::string::npos) return "<" + header + " not found>\n" + ir;
    return ir.substr(begin, ir.find("\n}\n", begin) - begin);
}

// On the CPU threads run in order, so plain atomics would give the same layouts as above: this is
// what shows, there, that consumed atomic_add became a reservation and the other atomics did not.
TEST_P(SlotAllocation, ConsumedAtomicAddIsLoweredAndOtherAtomicsAreNot) {
    const std::string ir = s().m.ir();
    for (const char* kernel :
         {"compact_positive", "mixed", "world_slots", "grid_index_slots", "grid_launch"}) {
        const std::string body = body_of(ir, std::string("kernel ") + kernel + "(");
        EXPECT_TRUE(has(body, "reserve")) << body;
        EXPECT_FALSE(has(body, "atomic.")) << body;
    }
    const std::string func = body_of(ir, "func take_slots(");
    EXPECT_TRUE(has(func, "reserve")) << func;
    const std::string side = body_of(ir, "kernel side_effects(");
    EXPECT_TRUE(has(side, "reserve")) << side;
    for (const char* plain : {"atomic.add", "atomic.sub", "atomic.or", "atomic.xor", "atomic.max"})
        EXPECT_TRUE(has(side, plain)) << plain << " stays a plain integer atomic:\n" << side;
    const std::string sums = body_of(ir, "kernel slots_and_sums(");
    EXPECT_TRUE(has(sums, "reserve")) << sums;
    EXPECT_TRUE(has(sums, "accumulate.add")) << sums;
}

INSTANTIATE_TEST_SUITE_P(Modes, SlotAllocation, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Dynamic loops: loop_counts[t] reservations on loop_counters[bins[t]] per thread.

using LoopKernel = weft::Kernel<Array<int>, Array<int>, Array<int>, Array<int, 2>, Array<int, 2>>;

constexpr int kMaxTrips = 8;

LoopKernel loop_kernel(const std::string& name, const weft::OptionsPatch& options) {
    weft::Module m(name, options);
    return m.kernel(name, {"bins", "loop_counts", "loop_counters", "got", "owner"},
                    [](Array<int> bins, Array<int> loop_counts, Array<int> loop_counters, Array<int, 2> got,
                       Array<int, 2> owner) {
                        auto t = weft::tid();
                        auto b = bins[t];
                        weft::for_(loop_counts[t], [&](Int k) {
                            auto slot = weft::atomic_add(loop_counters, b, 1);
                            got(t, k) = slot;
                            owner(b, slot) = t * kMaxTrips + k;
                        });
                    });
}

struct LoopCase {
    std::vector<int> bins, counts, initial;
    int capacity;
};

LoopCase loop_case(int n, int min_trips, int max_trips, int seed) {
    LoopCase c{spread(n, 3, seed), {}, {9, 0, 4}, 0};
    for (int t = 0; t < n; ++t) c.counts.push_back(min_trips + (t * 5 + seed) % (max_trips - min_trips + 1));
    c.capacity = n * max_trips + 16;
    return c;
}

struct LoopRun {
    weft::DeviceArray<int> counters, got, owner;
};

LoopRun loop_arrays(const LoopCase& c) {
    const int n = static_cast<int>(c.bins.size());
    return {weft::from_vector(c.initial, dev()), weft::full<int>({n, kMaxTrips}, -1, dev()),
            weft::full<int>({3, c.capacity}, -1, dev())};
}

void launch_loop(const LoopKernel& k, const LoopCase& c, LoopRun& r) {
    weft::launch(k, static_cast<int64_t>(c.bins.size()), weft::from_vector(c.bins, dev()),
                 weft::from_vector(c.counts, dev()), r.counters, r.got, r.owner);
}

void expect_loop_layout(const LoopCase& c, const LoopRun& r) {
    const int n = static_cast<int>(c.bins.size());
    std::vector<std::vector<Reservation>> threads(n);
    for (int t = 0; t < n; ++t) threads[t].assign(c.counts[t], Reservation{c.bins[t], 1});
    const Layout l = reference(c.initial, threads);
    std::vector<int> got(n * kMaxTrips, -1), owner(3 * c.capacity, -1);
    for (int t = 0; t < n; ++t) {
        for (int k = 0; k < c.counts[t]; ++k) {
            got[t * kMaxTrips + k] = l.slots[t][k];
            owner[c.bins[t] * c.capacity + l.slots[t][k]] = t * kMaxTrips + k;
        }
    }
    EXPECT_EQ(r.counters.to_vector(), l.counters);
    EXPECT_EQ(r.got.to_vector(), got);
    EXPECT_EQ(r.owner.to_vector(), owner);
}

TEST(SlotAllocationLoops, DynamicLoopWithASufficientRecordBound) {
    const auto kernel = loop_kernel("slot_loop_bounded", {.deterministic = Deterministic::RunToRun,
                                                          .deterministic_max_records = kMaxTrips});
    const LoopCase c = loop_case(4096, 0, kMaxTrips, 1);
    LoopRun r = loop_arrays(c);
    launch_loop(kernel, c, r);
    expect_loop_layout(c, r);
}

// Runs `launch`; returns the error reported for it: at the launch on the CPU (or with
// deterministic_debug), else no later than the next synchronize of the device.
std::optional<weft::Error> launch_error(const std::function<void()>& launch, bool immediate) {
    try {
        launch();
    } catch (const weft::Error& e) {
        return e;
    }
    if (immediate) ADD_FAILURE() << "the launch returned without reporting the overflow";
    try {
        weft::synchronize(dev());
    } catch (const weft::Error& e) {
        return e;
    }
    return std::nullopt;
}

void check_loop_overflow(bool debug) {
    const std::string name = std::string("slot_loop_overflow") + (debug ? "_debug" : "");
    const auto kernel = loop_kernel(name, {.deterministic = Deterministic::RunToRun,
                                           .deterministic_max_records = 2,
                                           .deterministic_debug = debug});
    // 3 to 5 reservations per thread against a bound of 2, far beyond any 1024-record floor.
    const LoopCase c = loop_case(4096, 3, 5, 2);
    LoopRun r = loop_arrays(c);
    const auto before_got = r.got.to_vector();
    const auto before_owner = r.owner.to_vector();
    const auto error = launch_error([&] { launch_loop(kernel, c, r); }, debug || dev().is_cpu());
    ASSERT_TRUE(error.has_value()) << "a reservation overflow was not reported";
    EXPECT_EQ(error->kernel(), name) << error->what();
    EXPECT_TRUE(has(error->what(), "'loop_counters'")) << "the error names the counter: " << error->what();
    EXPECT_TRUE(has(error->what(), "deterministic_max_records")) << error->what();
    EXPECT_EQ(r.counters.to_vector(), c.initial) << "the counter keeps its pre-launch value";
    EXPECT_EQ(r.got.to_vector(), before_got) << "nothing is written";
    EXPECT_EQ(r.owner.to_vector(), before_owner) << "nothing is written";

    // Reported once; a launch within the bound then gives the exact layout.
    EXPECT_NO_THROW(weft::synchronize(dev()));
    const LoopCase ok = loop_case(4096, 0, 2, 3);
    LoopRun ok_run = loop_arrays(ok);
    launch_loop(kernel, ok, ok_run);
    expect_loop_layout(ok, ok_run);
    EXPECT_NO_THROW(weft::synchronize(dev()));
}

TEST(SlotAllocationLoops, TooSmallRecordBoundIsAnErrorAndWritesNothing) {
    check_loop_overflow(false);
}

TEST(SlotAllocationLoops, TooSmallRecordBoundWithDebugIsReportedAtTheLaunch) {
    check_loop_overflow(true);
}

// More than 2^31 - 1 reservations (the bound times the threads) is rejected before the kernel runs.
TEST(SlotAllocationLoops, MoreThanTwoToThe31ReservationsIsRejected) {
    const auto kernel = loop_kernel("slot_loop_huge", {.deterministic = Deterministic::RunToRun,
                                                       .deterministic_max_records = int64_t{1} << 20});
    LoopCase c = loop_case(4096, 1, 1, 0);  // one real trip each; 4096 x 2^20 = 2^32 planned
    LoopRun r = loop_arrays(c);
    const auto before_got = r.got.to_vector();
    std::optional<weft::Error> error;
    try {
        launch_loop(kernel, c, r);
        weft::synchronize(dev());
    } catch (const weft::Error& e) {
        error = e;
    }
    ASSERT_TRUE(error.has_value()) << "a launch planning 2^32 reservations was not rejected";
    EXPECT_EQ(error->kernel(), "slot_loop_huge") << error->what();
    EXPECT_EQ(r.counters.to_vector(), c.initial) << error->what();
    EXPECT_EQ(r.got.to_vector(), before_got) << "the kernel did not run";
}

// ---------------------------------------------------------------------------------------------
// NotGuaranteed: consumed atomic_add is a plain atomic.

TEST(SlotAllocationModes, NotGuaranteedAllowsConsumedAtomicAdd) {
    weft::Module m{"slots_not_guaranteed", {.deterministic = Deterministic::NotGuaranteed}};
    const auto compact = compact_positive(m);
    const int n = 3000;
    const auto values = quarter_values(n);
    auto count = weft::full<int>(1, 4, dev());
    auto compacted = weft::full<float>(n + 4, -100.0f, dev());
    weft::launch(compact, n, weft::from_vector(values, dev()), count, compacted);
    const Layout want = reference({4}, positive_reservations(values));
    std::vector<float> want_compacted(n + 4, -100.0f);
    for (int t = 0; t < n; ++t)
        if (!want.slots[t].empty()) want_compacted[want.slots[t][0]] = values[t];
    EXPECT_EQ(count.to_vector(), want.counters);
    auto got = compacted.to_vector();
    if (weft::test::in_thread_order(m))
        EXPECT_EQ(got, want_compacted) << "one CPU worker runs threads in order";
    std::sort(got.begin(), got.end());
    std::sort(want_compacted.begin(), want_compacted.end());
    EXPECT_EQ(got, want_compacted) << "the same slots hold the same multiset of values";
}

// ---------------------------------------------------------------------------------------------
// Rejections: each names the kernel, the array and the user's line.

int g_line = 0;
int g_other_line = 0;
int g_load_line = 0;

const weft::OptionsPatch kRunToRun{.deterministic = Deterministic::RunToRun};

// `lines` are read after `launch`, which traces the kernel and records them; the error must be at
// one of them, and name one of `arrays`. `mentioned`, if set and not the error's own line, must
// appear in the message as "line N"; so must each of `words` (in lower case).
void expect_rejection(const std::function<void()>& launch, const std::string& kernel,
                      const std::vector<std::string>& arrays, const std::vector<const int*>& lines,
                      const int* mentioned = nullptr, const std::vector<std::string>& words = {}) {
    try {
        launch();
        ADD_FAILURE() << "kernel '" << kernel << "' was not rejected";
    } catch (const weft::Error& e) {
        const std::string what = e.what();
        bool at_a_line = false;
        std::string want_lines;
        for (const int* line : lines) {
            ASSERT_GT(*line, 0);
            at_a_line = at_a_line || e.line() == static_cast<uint32_t>(*line);
            want_lines += " " + std::to_string(*line);
        }
        EXPECT_EQ(e.kernel(), kernel) << what;
        EXPECT_TRUE(at_a_line) << "the error is at line " << e.line() << ", not one of" << want_lines << ": "
                               << what;
        EXPECT_TRUE(has(e.file(), "slot_allocation_test.cpp")) << what;
        bool named = false;
        for (const std::string& array : arrays) named = named || has(what, "'" + array + "'");
        EXPECT_TRUE(named) << "the message names the array (" << arrays.front() << "): " << what;
        if (mentioned && e.line() != static_cast<uint32_t>(*mentioned))
            EXPECT_TRUE(has(what, "line " + std::to_string(*mentioned)))
                << "the message points at line " << *mentioned << ": " << what;
        for (const std::string& w : words)
            EXPECT_TRUE(has(lower(what), w)) << "the message explains (" << w << "): " << what;
    }
}

enum class Consumed { Add, Sub, Min, Max };

// slots[t] = atomic_<op>(slot_counter, 0, 1), with the result used.
template <class T>
void check_consumed_rejection(const std::string& name, Consumed op,
                              const std::vector<std::string>& words = {}) {
    SCOPED_TRACE(name);
    g_line = 0;
    weft::Module m{name, kRunToRun};
    auto rejected = m.kernel(name, {"slot_counter", "slots"}, [op](Array<T> slot_counter, Array<T> slots) {
        auto t = weft::tid();
        auto take = [&]() -> weft::Scalar<T> {
            if (op == Consumed::Add) {
                g_line = __LINE__ + 1;
                return weft::atomic_add(slot_counter, 0, 1);
            }
            if (op == Consumed::Sub) {
                g_line = __LINE__ + 1;
                return weft::atomic_sub(slot_counter, 0, 1);
            }
            if (op == Consumed::Min) {
                g_line = __LINE__ + 1;
                return weft::atomic_min(slot_counter, 0, 1);
            }
            if (op == Consumed::Max) {
                g_line = __LINE__ + 1;
                return weft::atomic_max(slot_counter, 0, 1);
            }
            return weft::Scalar<T>(0);
        };
        slots[t] = take();
    });
    auto counter = weft::full<T>(1, T(5), dev());
    auto slots = weft::full<T>(64, T(9), dev());
    expect_rejection([&] { weft::launch(rejected, 64, counter, slots); }, name, {"slot_counter"}, {&g_line},
                     nullptr, words);
    EXPECT_EQ(counter.to_vector(), std::vector<T>{T(5)}) << "a rejected kernel does not run";
    EXPECT_EQ(slots.to_vector(), std::vector<T>(64, T(9))) << "a rejected kernel does not run";
}

TEST(SlotAllocationRejections, ConsumedAtomicSubMinMaxOnAnInt32Counter) {
    check_consumed_rejection<int32_t>("consumed_sub", Consumed::Sub);
    check_consumed_rejection<int32_t>("consumed_min", Consumed::Min);
    check_consumed_rejection<int32_t>("consumed_max", Consumed::Max);
}

TEST(SlotAllocationRejections, ConsumedAtomicAddOnACounterThatIsNotInt32) {
    check_consumed_rejection<int64_t>("consumed_add_int64", Consumed::Add, {"int32"});
    check_consumed_rejection<uint32_t>("consumed_add_uint32", Consumed::Add, {"int32"});
}

TEST(SlotAllocationRejections, CounterThatAlsoGetsAnotherAtomic) {
    weft::Module m{"counter_and_max", kRunToRun};
    auto rejected = m.kernel("counter_and_max", {"shared_counter", "slots"},
                             [](Array<int> shared_counter, Array<int> slots) {
                                 auto t = weft::tid();
                                 g_line = __LINE__ + 1;
                                 auto slot = weft::atomic_add(shared_counter, 0, 1);
                                 slots[t] = slot;
                                 g_other_line = __LINE__ + 1;
                                 weft::atomic_max(shared_counter, 0, t);
                             });
    auto counter = weft::full<int>(1, 3, dev());
    auto slots = weft::full<int>(64, -1, dev());
    g_line = g_other_line = 0;
    try {
        weft::launch(rejected, 64, counter, slots);
        ADD_FAILURE() << "a counter with a second atomic was not rejected";
    } catch (const weft::Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kernel(), "counter_and_max") << what;
        EXPECT_TRUE(has(what, "'shared_counter'")) << what;
        const bool at_add = e.line() == static_cast<uint32_t>(g_line);
        const bool at_max = e.line() == static_cast<uint32_t>(g_other_line);
        EXPECT_TRUE(at_add || at_max) << "line " << e.line() << ": " << what;
        // Whichever site it is at, the message points at the other one.
        const int other = at_add ? g_other_line : g_line;
        EXPECT_TRUE(has(what, "line " + std::to_string(other))) << what;
    }
    EXPECT_EQ(counter.to_vector(), std::vector<int>{3});
    EXPECT_EQ(slots.to_vector(), std::vector<int>(64, -1));
}

// The spec's avoid_scratch_dependency: the counting pass would suppress the scratch store that
// decides the reservation. Rejected when the module compiles (not at run time), with an explanation
// that points at the load. The error names the counter or the scratch array.
TEST(SlotAllocationRejections, ScratchStoreThatDecidesAReservation) {
    weft::Module m{"scratch_dependency", kRunToRun};
    auto rejected =
        m.kernel("avoid_scratch_dependency", {"values", "scratch", "count", "out"},
                 [](Array<float> values, Array<float> scratch, Array<int> count, Array<float> out) {
                     auto tid = weft::tid();
                     g_line = __LINE__ + 1;
                     scratch[tid] = values[tid];
                     g_load_line = __LINE__ + 1;
                     weft::if_(scratch[tid] > 0.0f, [&] {
                         g_other_line = __LINE__ + 1;
                         auto slot = weft::atomic_add(count, 0, 1);
                         out[slot] = scratch[tid];
                     });
                 });
    g_line = g_load_line = g_other_line = 0;
    expect_rejection([&] { m.compile(dev()); }, "avoid_scratch_dependency", {"count", "scratch"},
                     {&g_line, &g_load_line, &g_other_line}, &g_load_line, {"counting"});
    // And at the launch: nothing runs.
    auto count = weft::full<int>(1, 2, dev());
    auto scratch = weft::full<float>(32, -1.0f, dev());
    auto out = weft::full<float>(32, -1.0f, dev());
    EXPECT_THROW(weft::launch(rejected, 32, weft::ones<float>(32, dev()), scratch, count, out), weft::Error);
    EXPECT_EQ(count.to_vector(), std::vector<int>{2});
    EXPECT_EQ(scratch.to_vector(), std::vector<float>(32, -1.0f));
    EXPECT_EQ(out.to_vector(), std::vector<float>(32, -1.0f));
}

// The same hazard where the scratch value is the number of slots (loaded on the atomic's line).
TEST(SlotAllocationRejections, ScratchStoreThatDecidesAReservationSize) {
    weft::Module m{"scratch_amount", kRunToRun};
    m.kernel("scratch_amount", {"amounts", "scratch_amounts", "count", "slots"},
             [](Array<int> amounts, Array<int> scratch_amounts, Array<int> count, Array<int> slots) {
                 auto t = weft::tid();
                 g_line = __LINE__ + 1;
                 scratch_amounts[t] = amounts[t] + 1;
                 g_load_line = __LINE__ + 1;
                 slots[t] = weft::atomic_add(count, 0, scratch_amounts[t]);
             });
    g_line = g_load_line = 0;
    expect_rejection([&] { m.compile(dev()); }, "scratch_amount", {"count", "scratch_amounts"},
                     {&g_line, &g_load_line}, &g_load_line, {"counting"});
}

// A consumed atomic on another array deciding a reservation: the counting pass turns the atomic
// into a read of that array, which it never writes, so it would see other values.
TEST(SlotAllocationRejections, ConsumedAtomicThatDecidesAReservation) {
    weft::Module m{"consumed_flag", kRunToRun};
    auto rejected = m.kernel("consumed_flag", {"flag", "count", "out"},
                             [](Array<int> flag, Array<int> count, Array<int> out) {
                                 auto t = weft::tid();
                                 g_load_line = __LINE__ + 1;
                                 auto f = weft::atomic_xor(flag, 0, 1);
                                 weft::if_(f != 0, [&] {
                                     g_other_line = __LINE__ + 1;
                                     auto slot = weft::atomic_add(count, 0, 1);
                                     out[slot] = t;
                                 });
                             });
    g_load_line = g_other_line = 0;
    expect_rejection([&] { m.compile(dev()); }, "consumed_flag", {"flag"}, {&g_load_line}, &g_other_line,
                     {"atomic_xor", "counting"});
    auto flag = weft::zeros<int>(1, dev());
    auto count = weft::zeros<int>(1, dev());
    auto out = weft::full<int>(64, -1, dev());
    EXPECT_THROW(weft::launch(rejected, 64, flag, count, out), weft::Error);
    EXPECT_EQ(flag.to_vector(), std::vector<int>{0}) << "a rejected kernel does not run";
    EXPECT_EQ(count.to_vector(), std::vector<int>{0});
    EXPECT_EQ(out.to_vector(), std::vector<int>(64, -1));
}

// The same through a function, deciding the number of slots: atomic_exch's old value.
TEST(SlotAllocationRejections, ConsumedAtomicInAFunctionThatDecidesAReservationSize) {
    weft::Module m{"consumed_exchange", kRunToRun};
    auto swap = m.func("swap_in", [](Array<int> tokens, Int i) {
        g_load_line = __LINE__ + 1;
        return weft::atomic_exch(tokens, i, 2);
    });
    m.kernel("consumed_exchange", {"tokens", "count", "slots"},
             [swap](Array<int> tokens, Array<int> count, Array<int> slots) {
                 auto t = weft::tid();
                 auto n = swap(tokens, t % 4);
                 g_other_line = __LINE__ + 1;
                 slots[t] = weft::atomic_add(count, 0, n);
             });
    g_load_line = g_other_line = 0;
    expect_rejection([&] { m.compile(dev()); }, "consumed_exchange", {"tokens"}, {&g_load_line},
                     &g_other_line, {"atomic_exch"});
}

// An atomic whose result is unused is suppressed in the counting pass and decides nothing: it may
// sit next to reservations, and under a condition the counting pass cannot see (a load of an
// array the kernel writes), as long as that condition decides no reservation.
TEST(SlotAllocationRejections, UnusedAtomicsNextToReservationsAreAccepted) {
    weft::Module m{"unused_atomics", kRunToRun};
    auto kernel = m.kernel("unused_atomics", {"values", "scratch", "histogram", "flags", "count", "out"},
                           [](Array<float> values, Array<float> scratch, Array<int> histogram,
                              Array<int> flags, Array<int> count, Array<float> out) {
                               auto t = weft::tid();
                               auto v = values[t];
                               scratch[t] = v;
                               weft::atomic_add(histogram, t % 3, 1);
                               weft::atomic_xor(flags, 0, 1);
                               weft::if_(scratch[t] > 0.0f, [&] { weft::atomic_add(histogram, 3, 1); });
                               weft::if_(v > 0.0f, [&] { out[weft::atomic_add(count, 0, 1)] = v; });
                           });
    const int n = 300;
    const auto values = quarter_values(n, 2);
    auto scratch = weft::zeros<float>(n, dev());
    auto histogram = weft::zeros<int>(4, dev());
    auto flags = weft::zeros<int>(1, dev());
    auto count = weft::zeros<int>(1, dev());
    auto out = weft::full<float>(n, -1.0f, dev());
    weft::launch(kernel, n, weft::from_vector(values, dev()), scratch, histogram, flags, count, out);
    std::vector<float> want(n, -1.0f);
    int positive = 0;
    for (float v : values)
        if (v > 0.0f) want[positive++] = v;
    EXPECT_EQ(count.to_vector(), std::vector<int>{positive});
    EXPECT_EQ(out.to_vector(), want);
    EXPECT_EQ(histogram.to_vector(), (std::vector<int>{100, 100, 100, positive}));
    EXPECT_EQ(flags.to_vector(), std::vector<int>{0}) << "300 toggles";
}

// ---------------------------------------------------------------------------------------------
// Divergence: a reservation decided by the slot an earlier one returned. The counting pass cannot
// know that slot; the launch must give the sequential layout or report an error, never wrong slots.

TEST(SlotAllocationDivergence, ReservationDecidedByAnEarlierSlotIsExactOrReported) {
    weft::Module m{"slot_decides_slot", kRunToRun};
    auto kernel = m.kernel(
        "slot_decides_slot", {"values", "first_counter", "second_counter", "got"},
        [](Array<float> values, Array<int> first_counter, Array<int> second_counter, Array<int, 2> got) {
            auto t = weft::tid();
            weft::if_(values[t] > 0.0f, [&] {
                auto a = weft::atomic_add(first_counter, 0, 1);
                got(t, 0) = a;
                weft::if_(a % 2 == 0, [&] { got(t, 1) = weft::atomic_add(second_counter, 0, 1); });
            });
        });
    const int n = 3000;
    const auto values = quarter_values(n, 7);
    auto first = weft::full<int>(1, 1, dev());
    auto second = weft::full<int>(1, 5, dev());
    auto got = weft::full<int>({n, 2}, -1, dev());
    try {
        weft::launch(kernel, n, weft::from_vector(values, dev()), first, second, got);
        weft::synchronize(dev());
    } catch (const weft::Error& e) {
        EXPECT_EQ(e.kernel(), "slot_decides_slot") << e.what();
        EXPECT_NO_THROW(weft::synchronize(dev())) << "reported once";
        return;
    }
    int next_first = 1, next_second = 5;
    std::vector<int> want(2 * n, -1);
    for (int t = 0; t < n; ++t) {
        if (values[t] <= 0.0f) continue;
        want[2 * t] = next_first++;
        if (want[2 * t] % 2 == 0) want[2 * t + 1] = next_second++;
    }
    EXPECT_EQ(got.to_vector(), want) << "not reported, so the slots must be the sequential ones";
    EXPECT_EQ(first.to_vector(), std::vector<int>{next_first});
    EXPECT_EQ(second.to_vector(), std::vector<int>{next_second});
}

// Negative amounts (slots handed back) in long runs, from a counter near int32's top: every
// thread's slot is the counter plus the amounts of the threads before it, whatever the launch's
// size (one chunk or many) and block size.
TEST(SlotAllocationAmounts, NegativeRunsTakeSlotsInThreadOrder) {
    for (int block : {32, 256}) {
        SCOPED_TRACE("block_dim " + std::to_string(block));
        weft::Module m{"slot_negative_runs_" + std::to_string(block),
                       {.deterministic = Deterministic::RunToRun, .block_dim = block}};
        const auto k = m.kernel("negative_runs", {"amounts", "count", "slots"},
                                [](Array<int> amounts, Array<int> count, Array<int> slots) {
                                    auto t = weft::tid();
                                    slots[t] = weft::atomic_add(count, 0, amounts[t]);
                                });
        for (int n : {1000, 65536, 100003}) {
            SCOPED_TRACE(std::to_string(n) + " threads");
            const std::vector<int> amounts = weft::test::negative_runs(n, static_cast<uint32_t>(n + block));
            const int initial = 2000000000;
            std::vector<int> want(static_cast<size_t>(n));
            int64_t next = initial;
            for (int i = 0; i < n; ++i) {
                want[static_cast<size_t>(i)] = static_cast<int>(next);
                next += amounts[static_cast<size_t>(i)];
            }
            auto count = weft::full<int>(1, initial, dev());
            auto slots = weft::full<int>(n, -1, dev());
            weft::launch(k, n, weft::from_vector(amounts, dev()), count, slots);
            EXPECT_EQ(count.to_vector(), std::vector<int>{static_cast<int>(next)});
            EXPECT_EQ(slots.to_vector(), want);
        }
    }
}

}  // namespace
