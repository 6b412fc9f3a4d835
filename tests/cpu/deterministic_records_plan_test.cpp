// The records strategy's plan: where record cursors are split into regions, every region has room
// for the bound of the threads that append to it; and appending (wf::append_record, run on the
// host as the kernels run it) keeps each thread's records in its region.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/deterministic.h"
// clang-format on

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

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
    return det::plan({t}, {&array}, {"out"}, options, site, false).at(0);
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

// Threads append (slot, bits) through wf::append_record into a target of `regions` regions of
// 2^shift threads and `per_region` records each (the last ending at `capacity`): each region's
// cursor counts its threads' records, which lie in its own range up to its room, and nothing is
// written past a region's room (an overflow is only counted).
void expect_records_in_their_regions(int regions, int shift, int64_t per_region, int64_t capacity) {
    SCOPED_TRACE(std::to_string(regions) + " regions");
    constexpr wf::u64 kUnwritten = ~wf::u64{0};
    std::vector<wf::u64> cursors(static_cast<size_t>(wf::kMaxRegions) * wf::kCursorStride, 0);
    std::vector<wf::u64> records(static_cast<size_t>(capacity), kUnwritten);
    std::vector<wf::u32> record_slots(static_cast<size_t>(capacity), 0);
    wf::DetTarget t{};
    t.cursor = cursors.data();
    t.records = records.data();
    t.record_slots = record_slots.data();
    t.capacity = capacity;
    t.regions = regions;
    t.region_shift = shift;
    t.region_records = per_region;
    const int threads = (regions + 1) << shift;  // the last region's threads, and as many past them
    std::vector<std::vector<std::pair<wf::u32, wf::u64>>> want(static_cast<size_t>(std::max(regions, 1)));
    for (int thread = 0; thread < threads; ++thread) {
        const int region = regions > 1 ? std::min(thread >> shift, regions - 1) : 0;
        for (int k = 0; k <= thread % 3; ++k) {
            const auto slot = static_cast<wf::u32>(1000 * thread + k);
            const wf::u64 bits = 0x100000000ull * static_cast<wf::u64>(thread) + static_cast<wf::u64>(k);
            wf::append_record(thread, &t, slot, bits);
            want[static_cast<size_t>(region)].emplace_back(slot, bits);
        }
    }
    for (size_t r = 0; r < want.size(); ++r) {
        const int64_t first = regions > 1 ? static_cast<int64_t>(r) * per_region : 0;
        const int64_t room = regions > 1 ? std::min(per_region, capacity - first) : capacity;
        EXPECT_EQ(cursors[r * wf::kCursorStride], want[r].size()) << "region " << r;
        const auto kept = std::min<int64_t>(room, static_cast<int64_t>(want[r].size()));
        for (int64_t i = 0; i < kept; ++i) {  // appended one after another: in order
            EXPECT_EQ(record_slots[static_cast<size_t>(first + i)], want[r][static_cast<size_t>(i)].first);
            EXPECT_EQ(records[static_cast<size_t>(first + i)], want[r][static_cast<size_t>(i)].second);
        }
        for (int64_t i = kept; i < room; ++i)
            EXPECT_EQ(records[static_cast<size_t>(first + i)], kUnwritten)
                << "past region " << r << "'s records";
    }
}

TEST(DeterministicRecordsPlan, AppendedRecordsStayInTheirThreadsRegions) {
    expect_records_in_their_regions(3, 2, 9, 23);  // room 9, 9, 5: the last region overflows
    expect_records_in_their_regions(4, 3, 100, 400);
    expect_records_in_their_regions(1, 0, 0, 40);  // one cursor for the whole capacity
    expect_records_in_their_regions(1, 0, 0, 10);  // ... which overflows
}

}  // namespace
