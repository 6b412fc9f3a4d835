// The records strategy's plan: where record cursors are split into regions, every region has room
// for the bound of the threads that append to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <weft/weft.hpp>

#include "device/abi.h"
#include "runtime/det/accumulation.hpp"

namespace {

namespace det = weft::runtime::det;

det::TargetPlan records_plan(int64_t threads, int64_t per_thread, bool dynamic, int64_t max_records = 0) {
    weft::plan::DetTarget t;
    t.dtype = weft::DType::Float32;
    t.records_per_thread = per_thread;
    t.dynamic = dynamic;
    auto array = weft::zeros<float>(16, weft::Device::cpu());
    weft::Options options;
    options.deterministic = weft::Deterministic::RunToRun;
    options.deterministic_strategy = weft::DeterministicStrategy::Records;
    options.deterministic_max_records = max_records;
    const det::LaunchSite site{"k", "f.cpp", 1, threads};
    return det::plan({t}, {&array}, {"out"}, options, site).at(0);
}

// Regions: at most wf::kMaxRegions, covering every thread, each with room for its threads' bound.
void expect_regions_hold_their_threads(int64_t threads, int64_t per_thread) {
    SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(per_thread) + " per thread");
    const det::TargetPlan p = records_plan(threads, per_thread, false);
    ASSERT_GE(p.regions, 1);
    ASSERT_LE(p.regions, wf::kMaxRegions);
    if (p.regions == 1) return;
    const int64_t run = int64_t{1} << p.region_shift;
    EXPECT_GE(p.regions * run, threads) << "every thread has a region";
    EXPECT_LT((p.regions - 1) * run, threads) << "no region is empty";
    EXPECT_EQ(p.region_records, per_thread * run);
    for (int k = 0; k < p.regions; ++k) {
        const int64_t first = k * p.region_records;
        const int64_t room = std::min(p.region_records, p.capacity - first);
        const int64_t its_threads = std::min(run, threads - k * run);
        EXPECT_GE(room, per_thread * its_threads) << "region " << k;
    }
}

TEST(DeterministicRecordsPlan, RegionsHoldTheBoundOfTheirThreads) {
    for (const int64_t threads : {1025, 3000, 65536, 1000003, 1 << 20, (1 << 24) + 7})
        for (const int64_t per_thread : {1, 3, 64})
            if (per_thread * threads < (int64_t{1} << 31))
                expect_regions_hold_their_threads(threads, per_thread);
    const det::TargetPlan hot = records_plan(1 << 20, 1, false);
    EXPECT_EQ(hot.regions, 64);
    EXPECT_EQ(hot.region_records, 16384);
    EXPECT_GE(det::workspace_bytes(hot), 64 * wf::kCursorStride * 8) << "the regions' cursors";
}

// One cursor for the whole capacity where a thread's bound is not proven: a data-dependent loop,
// or deterministic_max_records below the static estimate (a thread may then emit more than its
// share, and only the whole capacity may overflow); and for small launches.
TEST(DeterministicRecordsPlan, OneCursorWhereTheBoundIsNotProven) {
    EXPECT_EQ(records_plan(1 << 20, 1, true).regions, 1) << "a data-dependent loop";
    EXPECT_EQ(records_plan(1 << 20, 4, false, 2).regions, 1)
        << "deterministic_max_records below the estimate";
    EXPECT_EQ(records_plan(1024, 1, false).regions, 1) << "one region's worth of threads";
    const det::TargetPlan above = records_plan(1 << 20, 4, false, 8);
    EXPECT_EQ(above.regions, 64) << "deterministic_max_records above the estimate";
    EXPECT_EQ(above.region_records, 8 << above.region_shift);
}

}  // namespace
