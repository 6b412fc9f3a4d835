// The exact sum over ranks (src/distributed/exact_sum.cpp) against the independent oracle, with
// 1 to 5 ranks simulated by threads of one process: window and fallback elements, special
// values, signed zeros, initial values, and partial sums split differently among the ranks.
// clang-format off
#include "device/prelude.h"
#include "device/half.h"
#include "device/resolve.h"
// clang-format on

#include "distributed/exact_sum.hpp"

#include <gtest/gtest.h>

#include <barrier>
#include <bit>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "support/exact_sum.hpp"

namespace {

using weft::distributed::Engine;

// Ranks as threads: each collective copies every rank's buffer into a shared table, waits for
// all, combines the table into its own buffer, and waits again before the table is reused.
struct Group {
    explicit Group(int n) : size(n), sync(n), table(static_cast<size_t>(n)) {}
    int size;
    std::barrier<> sync;
    std::vector<std::vector<unsigned char>> table;
};

class ThreadEngine final : public Engine {
public:
    ThreadEngine(Group& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return g_.size; }
    std::string name() const override { return "threads"; }
    void max_i32(int32_t* d, size_t n, const char*) const override {
        combine(d, n, [](int32_t a, int32_t b) { return a > b ? a : b; });
    }
    void max_i64(int64_t* d, size_t n, const char*) const override {
        combine(d, n, [](int64_t a, int64_t b) { return a > b ? a : b; });
    }
    void sum_i64(int64_t* d, size_t n, const char*) const override {
        combine(d, n, [](int64_t a, int64_t b) {
            return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
        });
    }
    std::string unusable(const weft::AnyArray&, bool) const override { return {}; }
    void plain_sum(const weft::AnyArray&, const char*) const override { FAIL() << "not used"; }
    void broadcast(void*, size_t, int, const char*) const override { FAIL() << "not used"; }
    void barrier() const override { g_.sync.arrive_and_wait(); }
    std::shared_ptr<Engine> split(int) const override { return nullptr; }
    [[noreturn]] void abort(const std::string& m) const override {
        std::fprintf(stderr, "%s\n", m.c_str());
        std::abort();
    }

private:
    template <class T, class F>
    void combine(T* d, size_t n, F f) const {
        auto& mine = g_.table[static_cast<size_t>(rank_)];
        mine.assign(reinterpret_cast<unsigned char*>(d), reinterpret_cast<unsigned char*>(d + n));
        g_.sync.arrive_and_wait();
        for (int r = 0; r < g_.size; ++r) {
            if (r == rank_) continue;
            const T* other = reinterpret_cast<const T*>(g_.table[static_cast<size_t>(r)].data());
            for (size_t i = 0; i < n; ++i) d[i] = f(d[i], other[i]);
        }
        g_.sync.arrive_and_wait();
    }
    Group& g_;
    int rank_;
};

// Runs body(engine) on `ranks` threads.
void on_ranks(int ranks, const std::function<void(const Engine&)>& body) {
    Group g(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            ThreadEngine e(g, r);
            body(e);
        });
    for (auto& t : threads) t.join();
}

template <class T>
weft::DType dtype_of() {
    return std::is_same_v<T, float> ? weft::DType::Float32 : weft::DType::Float64;
}

// Contributions per element: ordinary values, values whose exponents span far more than a window
// (the fallback), specials, signed zeros and subnormals, by element index.
template <class T>
std::vector<std::vector<T>> contributions(size_t elements, int per_element, uint32_t seed) {
    std::mt19937_64 rng(seed);
    constexpr int kMax = std::numeric_limits<T>::max_exponent - 4;
    constexpr int kMin = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits + 1;
    std::vector<std::vector<T>> c(elements);
    for (size_t e = 0; e < elements; ++e) {
        for (int j = 0; j < per_element; ++j) {
            T v;
            switch (e % 8) {
                case 0: v = weft::test::random_value<T>(rng, -4, 4); break;
                case 1: v = weft::test::random_value<T>(rng, kMin, kMax); break;       // far beyond a window
                case 2: v = weft::test::random_value<T>(rng, kMin, kMin + 30); break;  // subnormals
                case 3: v = j == 1 ? std::numeric_limits<T>::infinity() : T(1); break;
                case 4: v = j == 0 ? std::numeric_limits<T>::quiet_NaN() : T(2); break;
                case 5: v = (j % 2) ? T(-0.0) : T(0.0); break;
                case 6: v = weft::test::random_value<T>(rng, -60, 60); break;  // near the window's width
                default: v = j % 2 ? T(1.5) : T(-1.5); break;  // cancels exactly for even counts
            }
            c[e].push_back(v);
        }
    }
    return c;
}

template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i;
        } else {
            EXPECT_EQ(weft::test::bits_of(got[i]), weft::test::bits_of(want[i]))
                << what << " element " << i << ": " << weft::test::describe(got[i]) << " want "
                << weft::test::describe(want[i]);
        }
    }
}

template <class T>
void all_reduce_matches_oracle() {
    constexpr size_t kElements = 64;
    for (int ranks = 1; ranks <= 5; ++ranks) {
        const auto c = contributions<T>(kElements, ranks, 17u + static_cast<uint32_t>(ranks));
        std::vector<T> want(kElements);
        for (size_t e = 0; e < kElements; ++e) want[e] = weft::test::exact_sum<T>(T(0.0), c[e]);
        std::vector<std::vector<T>> got(static_cast<size_t>(ranks));
        on_ranks(ranks, [&](const Engine& engine) {
            std::vector<T> v(kElements);
            for (size_t e = 0; e < kElements; ++e) v[e] = c[e][static_cast<size_t>(engine.rank())];
            weft::distributed::exact_allreduce(engine, dtype_of<T>(), v.data(), kElements);
            got[static_cast<size_t>(engine.rank())] = v;
        });
        for (int r = 0; r < ranks; ++r)
            expect_same(got[static_cast<size_t>(r)], want,
                        std::to_string(ranks) + " ranks, rank " + std::to_string(r));
    }
}

TEST(ExactAllReduce, Float32MatchesTheOracleForOneToFiveRanks) {
    all_reduce_matches_oracle<float>();
}
TEST(ExactAllReduce, Float64MatchesTheOracleForOneToFiveRanks) {
    all_reduce_matches_oracle<double>();
}

// A rank's partial sums of its share of the contributions, as a launch's exact state holds them.
template <class T>
weft::distributed::PartialSums partial_of(const std::vector<std::vector<T>>& c, int rank, int ranks) {
    weft::distributed::PartialSums p;
    p.reset(dtype_of<T>(), c.size());
    for (size_t e = 0; e < c.size(); ++e) {
        const size_t n = c[e].size();
        // Contiguous shares of different lengths: rank r takes [n r / ranks, n (r + 1) / ranks).
        for (size_t j = n * static_cast<size_t>(rank) / ranks; j < n * static_cast<size_t>(rank + 1) / ranks;
             ++j) {
            using Bits = weft::test::BitsOf<T>;
            wf::add_record<T>(p.at(e), &p.flags[e], static_cast<wf::u64>(std::bit_cast<Bits>(c[e][j])),
                              false);
        }
        p.normalize(e, e + 1);
    }
    return p;
}

template <class T>
void states_give_the_same_bits_for_every_split() {
    constexpr size_t kElements = 64;
    const auto c = contributions<T>(kElements, 12, 5u);
    // Initial values, the same on every rank: zeros of both signs, a NaN, ordinary values.
    std::vector<T> initial(kElements);
    for (size_t e = 0; e < kElements; ++e)
        initial[e] = e % 5 == 0    ? T(-0.0)
                     : e % 5 == 1  ? T(0.0)
                     : e % 13 == 2 ? std::numeric_limits<T>::quiet_NaN()
                                   : T(0.25) * static_cast<T>(e);
    std::vector<T> want(kElements);
    for (size_t e = 0; e < kElements; ++e) want[e] = weft::test::exact_sum<T>(initial[e], c[e]);
    for (int ranks = 1; ranks <= 5; ++ranks) {
        std::vector<std::vector<T>> got(static_cast<size_t>(ranks));
        on_ranks(ranks, [&](const Engine& engine) {
            const auto p = partial_of(c, engine.rank(), ranks);
            std::vector<T> v = initial;
            weft::distributed::exact_reduce(engine, p, v.data(), kElements);
            got[static_cast<size_t>(engine.rank())] = v;
        });
        for (int r = 0; r < ranks; ++r)
            expect_same(got[static_cast<size_t>(r)], want,
                        std::to_string(ranks) + " ranks, rank " + std::to_string(r));
    }
}

TEST(ExactReduce, Float32StatesGiveTheSameBitsForEverySplit) {
    states_give_the_same_bits_for_every_split<float>();
}
TEST(ExactReduce, Float64StatesGiveTheSameBitsForEverySplit) {
    states_give_the_same_bits_for_every_split<double>();
}

// The sign of a zero sum into a -0.0 target is decided by every rank's +0.0: one rank's suffices.
TEST(ExactReduce, OneRanksPositiveZeroDecidesTheSignOfAZeroSum) {
    for (int adder = 0; adder < 3; ++adder) {
        std::vector<float> got(3);
        on_ranks(3, [&](const Engine& engine) {
            weft::distributed::PartialSums p;
            p.reset(weft::DType::Float32, 1);
            if (engine.rank() == adder) p.flags[0] = wf::kFlagPosZero;
            float v = -0.0f;
            weft::distributed::exact_reduce(engine, p, &v, 1);
            got[static_cast<size_t>(engine.rank())] = v;
        });
        for (float v : got) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u) << "rank " << adder << " added +0.0";
    }
    float untouched = 1.0f;
    on_ranks(2, [&](const Engine& engine) {
        weft::distributed::PartialSums p;
        p.reset(weft::DType::Float32, 1);
        float v = -0.0f;
        weft::distributed::exact_reduce(engine, p, &v, 1);
        if (engine.rank() == 0) untouched = v;
    });
    EXPECT_EQ(std::bit_cast<uint32_t>(untouched), 0x80000000u) << "no contribution: -0.0 stays";
}

}  // namespace
