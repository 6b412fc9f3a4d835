// Launches that reach few elements of a large target, one after another into the same state: the
// CPU's resolve visits only the slots a launch reached (wf::DetTarget::touched), and every later
// launch must find those slots clean and list them again. Every element is checked against the
// exact oracle after each launch, under each sum strategy, on one worker and on two.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/exact_sum.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::DeterministicStrategy;

constexpr int kElements = 1 << 18;

struct Contributions {
    std::vector<int> index;
    std::vector<float> values;
};

// `n` contributions into elements of the target, most of magnitude near 1, some far from it
// (they spill a compact window); `special` adds one +inf. Every other one goes to an element the
// launch before reached (`before`), the rest to random elements.
Contributions contributions(std::mt19937_64& rng, int n, bool special, const std::vector<int>& before) {
    Contributions c;
    for (int i = 0; i < n; ++i) {
        const bool again = i % 2 == 0 && !before.empty();
        c.index.push_back(again ? before[rng() % before.size()] : static_cast<int>(rng() % kElements));
        const bool far = rng() % 8 == 0;
        c.values.push_back(far ? weft::test::random_value<float>(rng, -140, 120)
                               : weft::test::random_value<float>(rng, -4, 4));
    }
    // A second contribution into each of the first few elements: a slot reached twice is listed once.
    for (int i = 0; i < n && i < 8; ++i) {
        c.index.push_back(c.index[static_cast<size_t>(i)]);
        c.values.push_back(weft::test::random_value<float>(rng, -4, 4));
    }
    if (special) {
        c.index.push_back(c.index.front());
        c.values.push_back(std::numeric_limits<float>::infinity());
    }
    return c;
}

void expect_exact_sequence(DeterministicStrategy strategy, int workers) {
    SCOPED_TRACE(std::string(weft::strategy_name(strategy)) + ", " + std::to_string(workers) + " workers");
    const weft::Device dev = weft::test::test_device();
    weft::Module m{"touched_" + std::string(weft::strategy_name(strategy)) + "_" + std::to_string(workers),
                   {.deterministic = weft::Deterministic::RunToRun,
                    .deterministic_strategy = strategy,
                    .cpu_threads = workers}};
    auto scatter = m.kernel("scatter", {"index", "values", "out"},
                            [](Array<int> index, Array<float> values, Array<float> out) {
                                auto i = weft::tid();
                                weft::atomic_add(out, index[i], values[i]);
                            });
    std::vector<float> expected(kElements, 0.0f);
    auto out = weft::from_vector(expected, dev);
    std::mt19937_64 rng(41 + static_cast<uint64_t>(strategy) * 7 + static_cast<uint64_t>(workers));
    // Sparse launches, then one reaching more than half the elements (the resolve walks every
    // slot), then sparse ones again into the same state.
    const std::vector<std::pair<int, bool>> launches = {{40, false},     {40, true},  {3, false},
                                                        {600000, false}, {40, false}, {1, false}};
    std::vector<int> before;
    for (size_t l = 0; l < launches.size(); ++l) {
        SCOPED_TRACE("launch " + std::to_string(l) + " of " + std::to_string(launches[l].first) + " threads");
        const Contributions c = contributions(rng, launches[l].first, launches[l].second, before);
        before = c.index;
        weft::launch(scatter, static_cast<int64_t>(c.index.size()), weft::from_vector(c.index, dev),
                     weft::from_vector(c.values, dev), out);
        expected = weft::test::reduce_by_destination(weft::test::Reduction::Sum, expected, c.index, c.values);
        const std::string diff = weft::test::mismatches(out.to_vector(), expected, true);
        ASSERT_EQ(diff, "");
    }
}

TEST(DeterministicTouched, SparseLaunchesIntoOneStateGiveTheExactSums) {
    for (const DeterministicStrategy s :
         {DeterministicStrategy::Auto, DeterministicStrategy::Exact, DeterministicStrategy::Compact})
        for (const int workers : {1, 2}) expect_exact_sequence(s, workers);
}

}  // namespace
