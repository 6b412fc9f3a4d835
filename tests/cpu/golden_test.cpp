// Golden tests of printed IR and generated CPU source; WEFT_UPDATE_GOLDEN=1 rewrites the files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <weft/weft.hpp>

#include "support/test_device.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path golden_dir = fs::path(WEFT_TEST_DATA_DIR) / "golden";

bool updating() {
    const char* env = std::getenv("WEFT_UPDATE_GOLDEN");
    return env && std::string(env) == "1";
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Where `actual` first departs from `expected`, as a readable hint.
std::string first_difference(const std::string& expected, const std::string& actual) {
    const auto e = lines_of(expected), a = lines_of(actual);
    for (size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
        const std::string want = i < e.size() ? e[i] : "<end of file>";
        const std::string got = i < a.size() ? a[i] : "<end of output>";
        if (want != got)
            return "first difference at line " + std::to_string(i + 1) + ":\n  expected: " + want +
                   "\n  actual:   " + got;
    }
    return "the texts differ only in line endings or a final newline";
}

// Compares `actual` with golden file `name`, or (re)writes it when WEFT_UPDATE_GOLDEN=1.
void check_golden(const std::string& name, const std::string& actual) {
    const fs::path path = golden_dir / name;
    if (updating()) {
        fs::create_directories(golden_dir);
        std::ofstream(path, std::ios::binary) << actual;
        ASSERT_EQ(read_text(path), actual) << "cannot write " << path;
        return;
    }
    ASSERT_TRUE(fs::exists(path)) << path
                                  << " is missing; run this test with WEFT_UPDATE_GOLDEN=1 to create it";
    const std::string expected = read_text(path);
    EXPECT_EQ(expected, actual)
        << name << ": " << first_difference(expected, actual)
        << "\nIf the change is intended, rerun with WEFT_UPDATE_GOLDEN=1 and review the diff.";
}

// The golden files hold the CPU dialect; they are checked (or written) by the "cpu" run only.
void check_module(const weft::Module& m, const std::string& stem) {
    const std::string ir = m.ir();
    const std::string source = m.generated_source(weft::Device::cpu());
    ASSERT_FALSE(ir.empty());
    ASSERT_FALSE(source.empty());
    check_golden(stem + ".ir", ir);
    check_golden(stem + ".cpp", source);
}

// For each row, the first column whose value exceeds the threshold (or -1): the kernel of the
// first_above golden files, and of the test that runs it.
auto define_first_above(weft::Module& m) {
    return m.kernel("first_above", {"grid", "threshold", "first"},
                    [](weft::Array<float, 2> grid, weft::Float threshold, weft::Array<int, 2> first) {
                        auto [row, lane] = weft::tid<2>();
                        weft::Int col = 0;
                        weft::Int found = -1;
                        weft::while_([&] { return col < grid.shape(1); },
                                     [&] {
                                         weft::if_(grid(row, col) > threshold, [&] {
                                             found = col;
                                             weft::break_();
                                         });
                                         col += 1;
                                     });
                        first(row, lane) = found;
                    });
}

TEST(Golden, Accumulate) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{"accumulate"};
    m.kernel("accumulate", {"values", "bins", "out"},
             [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
                 auto tid = weft::tid();
                 weft::atomic_add(out, bins[tid], values[tid]);
             });
    m.kernel("accumulate_shorthand", {"values", "bins", "out"},
             [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out) {
                 auto tid = weft::tid();
                 out[bins[tid]] += values[tid];
             });
    check_module(m, "accumulate");
}

TEST(Golden, CompactPositive) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{"compact_positive"};
    m.kernel("compact_positive", {"values", "count", "compacted"},
             [](weft::Array<float> values, weft::Array<int> count, weft::Array<float> compacted) {
                 auto tid = weft::tid();
                 auto v = values[tid];
                 weft::if_(v > 0.0f, [&] {
                     auto slot = weft::atomic_add(count, 0, 1);
                     compacted[slot] = v;
                 });
             });
    check_module(m, "compact_positive");
}

// The deterministic lowering: accumulation atomics as Accumulate nodes (a sum, and a max whose
// target the launch resolves with order keys).
TEST(Golden, AccumulateDeterministic) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{"accumulate_deterministic", {.deterministic = weft::Deterministic::RunToRun}};
    m.kernel("accumulate", {"values", "bins", "out", "peak"},
             [](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out,
                weft::Array<float> peak) {
                 auto tid = weft::tid();
                 out[bins[tid]] += values[tid];
                 weft::for_(3, [&](weft::Int) { weft::atomic_max(peak, 0, values[tid]); });
             });
    check_module(m, "accumulate_deterministic");
}

// Slot allocation: the reservation (also inside a function), the kernel's counting pass and the
// function's counting clone, which reserve without storing.
TEST(Golden, ReserveAndCountingPass) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{"reserve", {.deterministic = weft::Deterministic::RunToRun}};
    auto take = m.func("take", [](weft::Array<int> count) { return weft::atomic_add(count, 0, 1); });
    m.kernel("compact_positive", {"values", "count", "compacted"},
             [take](weft::Array<float> values, weft::Array<int> count, weft::Array<float> compacted) {
                 auto tid = weft::tid();
                 auto v = values[tid];
                 weft::if_(v > 0.0f, [&] {
                     auto slot = take(count);
                     compacted[slot] = v;
                 });
                 weft::if_(v < -1.0f, [&] { compacted[weft::atomic_add(count, 0, 2)] = -v; });
             });
    check_module(m, "reserve");
}

TEST(Golden, ReduceByBinWithFunc) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{"reduce_by_bin"};
    // A real function boundary: the contribution of input i to bin b.
    auto contribution = m.func(
        "contribution",
        [](weft::Array<float> values, weft::Array<int> bins, weft::Int i, weft::Int bin_id) -> weft::Float {
            return weft::select(bins[i] == bin_id, values[i], 0.0f);
        });
    m.kernel("reduce_by_bin", {"values", "bins", "out", "n"},
             [contribution](weft::Array<float> values, weft::Array<int> bins, weft::Array<float> out,
                            weft::Int n) {
                 auto bin_id = weft::tid();
                 weft::Float total = 0.0f;
                 weft::for_(n, [&](weft::Int i) { total += contribution(values, bins, i, bin_id); });
                 out[bin_id] = total;
             });
    check_module(m, "reduce_by_bin");
}

TEST(Golden, TwoDimensionalWhileBreak) {
    WEFT_SKIP_UNLESS_CPU();
    weft::Module m{"first_above"};
    define_first_above(m);
    check_module(m, "first_above");
}

// The golden kernels compute what they claim, so the golden files pin working code.
TEST(Golden, TwoDimensionalKernelRuns) {
    weft::Module m{"first_above_run"};
    auto first_above = define_first_above(m);
    const auto dev = weft::test::test_device();
    // Row r holds 0, 1, 2, ... shifted down by r; the threshold 2.5 is first exceeded at column 3 + r.
    const int rows = 4, cols = 6;
    std::vector<float> host(rows * cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) host[r * cols + c] = static_cast<float>(c - r);
    auto grid = weft::from_vector(host, {rows, cols}, dev);
    auto first = weft::full<int>({rows, 2}, 99, dev);
    weft::launch(first_above, {rows, 2}, grid, 2.5f, first);
    EXPECT_EQ(first.to_vector(), (std::vector<int>{3, 3, 4, 4, 5, 5, -1, -1}));
}

}  // namespace
