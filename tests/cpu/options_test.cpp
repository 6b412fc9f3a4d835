// The three option scopes (process config, module options, unique modules) and option validation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <weft/weft.hpp>

#include "base/options_environment.hpp"
#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

weft::Device dev() {
    return weft::test::test_device();
}

int count_of(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// Saves the process config before each test and restores every field after it.
class OptionsTest : public ::testing::Test {
protected:
    void SetUp() override { saved_ = weft::config(); }
    void TearDown() override {
        weft::replace_config(saved_);
        EXPECT_TRUE(weft::config() == saved_) << "the config was not restored";
    }
    weft::Options saved_;
};

TEST_F(OptionsTest, DefaultsAreDocumented) {
    const weft::Options o;
    EXPECT_EQ(o.deterministic, weft::Deterministic::NotGuaranteed);
    EXPECT_EQ(o.deterministic_max_records, 0);
    EXPECT_FALSE(o.deterministic_debug);
    EXPECT_FALSE(o.bounds_check);
    EXPECT_TRUE(weft::config() == weft::options_from_environment(std::getenv("WEFT_BOUNDS_CHECK")))
        << "the process config starts at the defaults, with WEFT_BOUNDS_CHECK applied";
}

// WEFT_BOUNDS_CHECK sets the process default of bounds_check (the end-to-end run with it set is
// tests/environment/bounds_check_environment_test.cpp).
TEST(OptionsEnvironment, WeftBoundsCheckSetsTheDefaultAndRefusesOtherValues) {
    EXPECT_TRUE(weft::options_from_environment("1").bounds_check);
    EXPECT_FALSE(weft::options_from_environment("0").bounds_check);
    EXPECT_TRUE(weft::options_from_environment(nullptr) == weft::Options{});
    EXPECT_TRUE(weft::options_from_environment("") == weft::Options{});
    weft::Options only_the_check;
    only_the_check.bounds_check = true;
    EXPECT_TRUE(weft::options_from_environment("1") == only_the_check) << "no other field changes";
    for (const char* bad : {"yes", "true", "2", " 1"}) {
        const weft::Error e = weft::test::error_from([&] { weft::options_from_environment(bad); });
        EXPECT_TRUE(weft::test::has(e.what(), "WEFT_BOUNDS_CHECK is '" + std::string(bad) + "'")) << e.what();
        EXPECT_TRUE(weft::test::has(e.what(), "set it to 1")) << e.what();
    }
}

TEST_F(OptionsTest, ModuleCapturesConfigAtCreation) {
    weft::set_config({.deterministic = weft::Deterministic::RunToRun, .deterministic_max_records = 8});
    weft::Module before{"captured_before"};
    EXPECT_EQ(before.options().deterministic, weft::Deterministic::RunToRun);
    EXPECT_EQ(before.options().deterministic_max_records, 8);

    // Later config changes leave the existing module alone...
    weft::set_config({.deterministic = weft::Deterministic::GpuToGpu, .deterministic_max_records = 3});
    EXPECT_EQ(before.options().deterministic, weft::Deterministic::RunToRun);
    EXPECT_EQ(before.options().deterministic_max_records, 8);

    // ...and apply to modules created afterwards.
    weft::Module after{"captured_after"};
    EXPECT_EQ(after.options().deterministic, weft::Deterministic::GpuToGpu);
    EXPECT_EQ(after.options().deterministic_max_records, 3);

    // A patch given at creation overrides the config for that module only.
    weft::Module patched{"captured_patched", {.deterministic = weft::Deterministic::NotGuaranteed}};
    EXPECT_EQ(patched.options().deterministic, weft::Deterministic::NotGuaranteed);
    EXPECT_EQ(patched.options().deterministic_max_records, 3) << "unpatched fields come from the config";
}

TEST_F(OptionsTest, ConfigOptionByName) {
    weft::set_config_option("deterministic", weft::Deterministic::GpuToGpu);
    weft::set_config_option("deterministic_max_records", int64_t{16});
    EXPECT_EQ(weft::config().deterministic, weft::Deterministic::GpuToGpu);
    EXPECT_EQ(weft::config().deterministic_max_records, 16);
    weft::Module m{"config_by_name"};
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::GpuToGpu);
    EXPECT_EQ(m.options().deterministic_max_records, 16);
}

TEST_F(OptionsTest, SetOptionsOverridesOneModule) {
    weft::Module a{"override_a"};
    weft::Module b{"override_b"};
    a.set_options({.deterministic = weft::Deterministic::RunToRun, .bounds_check = true});
    EXPECT_EQ(a.options().deterministic, weft::Deterministic::RunToRun);
    EXPECT_TRUE(a.options().bounds_check);
    EXPECT_EQ(a.options().deterministic_max_records, 0) << "fields not in the patch keep their values";
    EXPECT_EQ(b.options().deterministic, weft::Deterministic::NotGuaranteed)
        << "other modules are unaffected";
    EXPECT_FALSE(b.options().bounds_check);
    EXPECT_TRUE(weft::config() == saved_) << "module options never write the process config";

    // Toggling back and forth, as the spec suggests for an existing module.
    a.set_options({.deterministic = weft::Deterministic::NotGuaranteed});
    EXPECT_EQ(a.options().deterministic, weft::Deterministic::NotGuaranteed);
    EXPECT_TRUE(a.options().bounds_check);
}

TEST_F(OptionsTest, UniqueKernelHasItsOwnModule) {
    weft::Module shared{"shared"};
    auto plain = shared.kernel("plain", [](weft::Array<float> a) {
        auto tid = weft::tid();
        a[tid] = a[tid] * 2.0f;
    });
    auto unique = weft::unique_kernel("unique_scale", {.deterministic = weft::Deterministic::RunToRun},
                                      [](weft::Array<float> a) {
                                          auto tid = weft::tid();
                                          a[tid] = a[tid] * 3.0f;
                                      });
    auto other =
        weft::unique_kernel("unique_other", {.deterministic_max_records = 4}, [](weft::Array<float> a) {
            auto tid = weft::tid();
            a[tid] = a[tid] + 1.0f;
        });

    EXPECT_EQ(unique.name(), "unique_scale");
    EXPECT_EQ(unique.module().options().deterministic, weft::Deterministic::RunToRun);
    EXPECT_EQ(other.module().options().deterministic, weft::Deterministic::NotGuaranteed);
    EXPECT_EQ(other.module().options().deterministic_max_records, 4);
    EXPECT_EQ(plain.module().options().deterministic, weft::Deterministic::NotGuaranteed);
    EXPECT_NE(unique.module().state(), other.module().state());
    EXPECT_NE(unique.module().state(), shared.state());
    EXPECT_EQ(plain.module().state(), shared.state());

    // Changing the shared module's options does not reach the unique kernel's module.
    shared.set_options({.deterministic = weft::Deterministic::GpuToGpu});
    EXPECT_EQ(plain.module().options().deterministic, weft::Deterministic::GpuToGpu);
    EXPECT_EQ(unique.module().options().deterministic, weft::Deterministic::RunToRun);

    // A unique kernel launches like any other.
    auto a = weft::from_vector(std::vector<float>{1.0f, 2.0f, 3.0f}, dev());
    weft::launch(unique, 3, a);
    EXPECT_EQ(a.to_vector(), (std::vector<float>{3.0f, 6.0f, 9.0f}));
    weft::launch(other, 3, a);
    EXPECT_EQ(a.to_vector(), (std::vector<float>{4.0f, 7.0f, 10.0f}));
}

TEST_F(OptionsTest, UniqueKernelTakesConfigDefaults) {
    weft::set_config({.deterministic_max_records = 12});
    auto k = weft::unique_kernel("unique_defaults", {.deterministic = weft::Deterministic::GpuToGpu},
                                 [](weft::Array<int> a) { a[weft::tid()] = 1; });
    EXPECT_EQ(k.module().options().deterministic, weft::Deterministic::GpuToGpu);
    EXPECT_EQ(k.module().options().deterministic_max_records, 12);
}

// A whole Options (not only an OptionsPatch) makes a module's options exactly that, for a Module
// and a unique kernel alike.
TEST_F(OptionsTest, WholeOptionsAreAccepted) {
    weft::Options options = weft::config();
    options.bounds_check = true;
    options.deterministic = weft::Deterministic::RunToRun;
    options.block_dim = 128;
    const weft::Module module{"whole_options", options};
    EXPECT_EQ(module.options(), options);
    auto k =
        weft::unique_kernel("whole_unique", options, [](weft::Array<float> a) { a[weft::tid()] = 1.0f; });
    EXPECT_EQ(k.module().options(), options);
    auto named =
        weft::unique_kernel("whole_named", options, {"a"}, [](weft::Array<float> a) { a[0] = 2.0f; });
    EXPECT_EQ(named.module().options(), options);
    // patch_of sets every field: applied to any base it gives `options`.
    weft::Options other;
    other.verbose = true;
    other.cpu_threads = 3;
    EXPECT_EQ(weft::apply(other, weft::patch_of(options)), options);
}

TEST_F(OptionsTest, SetOptionByNameAcceptsEachKind) {
    weft::Module m{"by_name"};
    m.set_option("deterministic", weft::Deterministic::RunToRun);
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::RunToRun);
    m.set_option("deterministic_max_records", int64_t{8});
    EXPECT_EQ(m.options().deterministic_max_records, 8);
    m.set_option("deterministic_max_records", 5);  // a plain int literal is an integer
    EXPECT_EQ(m.options().deterministic_max_records, 5);
    m.set_option("deterministic_debug", true);
    EXPECT_TRUE(m.options().deterministic_debug);
    m.set_option("bounds_check", true);
    EXPECT_TRUE(m.options().bounds_check);
    m.set_option("optimization_level", int64_t{1});
    EXPECT_EQ(m.options().optimization_level, 1);
    m.set_option("block_dim", int64_t{128});
    EXPECT_EQ(m.options().block_dim, 128);
    m.set_option("verbose", true);
    EXPECT_TRUE(m.options().verbose);
}

TEST_F(OptionsTest, DeterministicModeNames) {
    weft::Module m{"mode_names"};
    m.set_option("deterministic", std::string("run_to_run"));
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::RunToRun);
    m.set_option("deterministic", std::string("gpu_to_gpu"));
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::GpuToGpu);
    m.set_option("deterministic", std::string("not_guaranteed"));
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::NotGuaranteed);
    // A string literal is a string, not a bool.
    m.set_option("deterministic", "run_to_run");
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::RunToRun);

    EXPECT_THROW(m.set_option("deterministic", std::string("fastest")), weft::Error);
    EXPECT_THROW(m.set_option("deterministic", std::string("")), weft::Error);
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::RunToRun) << "a rejected value changes nothing";

    for (auto mode :
         {weft::Deterministic::NotGuaranteed, weft::Deterministic::RunToRun, weft::Deterministic::GpuToGpu}) {
        m.set_option("deterministic", std::string(weft::deterministic_name(mode)));
        EXPECT_EQ(m.options().deterministic, mode) << "names round-trip";
    }
}

TEST_F(OptionsTest, DeterministicStrategyNames) {
    weft::Module m{"strategy_names"};
    for (auto strategy : {weft::DeterministicStrategy::Auto, weft::DeterministicStrategy::Exact,
                          weft::DeterministicStrategy::Records, weft::DeterministicStrategy::Compact}) {
        m.set_option("deterministic_strategy", std::string(weft::strategy_name(strategy)));
        EXPECT_EQ(m.options().deterministic_strategy, strategy) << "names round-trip";
    }
    EXPECT_STREQ(weft::strategy_name(weft::DeterministicStrategy::Compact), "compact");
    try {
        m.set_option("deterministic_strategy", std::string("fastest"));
        FAIL() << "expected weft::Error";
    } catch (const weft::Error& e) {
        EXPECT_NE(e.message().find("\"compact\""), std::string::npos) << e.what();
    }
    EXPECT_EQ(m.options().deterministic_strategy, weft::DeterministicStrategy::Compact);
}

TEST_F(OptionsTest, WrongKindIsRejectedNotCoerced) {
    weft::Module m{"wrong_kind"};
    m.set_option("deterministic_max_records", int64_t{6});
    EXPECT_THROW(m.set_option("deterministic_max_records", true), weft::Error);
    EXPECT_THROW(m.set_option("deterministic_max_records", std::string("8")), weft::Error);
    EXPECT_THROW(m.set_option("deterministic_max_records", 8.0), weft::Error);
    EXPECT_THROW(m.set_option("deterministic", int64_t{1}), weft::Error);
    EXPECT_THROW(m.set_option("deterministic", true), weft::Error);
    EXPECT_THROW(m.set_option("bounds_check", int64_t{1}), weft::Error);
    EXPECT_THROW(m.set_option("bounds_check", std::string("true")), weft::Error);
    EXPECT_THROW(m.set_option("verbose", weft::Deterministic::RunToRun), weft::Error);
    EXPECT_EQ(m.options().deterministic_max_records, 6);
    EXPECT_EQ(m.options().deterministic, weft::Deterministic::NotGuaranteed);
    EXPECT_FALSE(m.options().bounds_check);

    // The error names the option and what it takes.
    try {
        m.set_option("deterministic_max_records", true);
        FAIL() << "expected weft::Error";
    } catch (const weft::Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("deterministic_max_records"), std::string::npos) << what;
        EXPECT_NE(what.find("integer"), std::string::npos) << what;
    }
}

TEST_F(OptionsTest, InvalidValuesAreRejected) {
    weft::Module m{"invalid_values"};
    EXPECT_THROW(m.set_option("deterministic_max_records", int64_t{-1}), weft::Error);
    EXPECT_THROW(m.set_options({.deterministic_max_records = -5}), weft::Error);
    EXPECT_THROW(m.set_options({.deterministic = static_cast<weft::Deterministic>(7)}), weft::Error);
    EXPECT_THROW(m.set_option("deterministic", static_cast<weft::Deterministic>(7)), weft::Error);
    EXPECT_THROW(m.set_options({.optimization_level = 4}), weft::Error);
    EXPECT_THROW(m.set_options({.block_dim = 100}), weft::Error);
    EXPECT_TRUE(m.options() == weft::Options{}) << "a rejected patch changes nothing";

    EXPECT_THROW(weft::Module("bad_module", {.deterministic_max_records = -1}), weft::Error);
    EXPECT_THROW(weft::unique_kernel("bad_unique", {.deterministic = static_cast<weft::Deterministic>(7)},
                                     [](weft::Array<int> a) { a[weft::tid()] = 0; }),
                 weft::Error);

    EXPECT_THROW(weft::set_config({.deterministic_max_records = -1}), weft::Error);
    EXPECT_THROW(weft::set_config({.deterministic = static_cast<weft::Deterministic>(7)}), weft::Error);
    EXPECT_THROW(weft::set_config_option("deterministic", int64_t{2}), weft::Error);
    EXPECT_TRUE(weft::config() == saved_) << "a rejected config change changes nothing";

    // A zero bound means "use the static estimate" and is valid.
    EXPECT_NO_THROW(m.set_option("deterministic_max_records", int64_t{0}));
}

TEST_F(OptionsTest, UnknownOptionNameIsRejected) {
    weft::Module m{"unknown_name"};
    EXPECT_THROW(m.set_option("determinism", weft::Deterministic::RunToRun), weft::Error);
    EXPECT_THROW(m.set_option("", true), weft::Error);
    EXPECT_THROW(m.set_option("Deterministic", weft::Deterministic::RunToRun), weft::Error);
    EXPECT_THROW(weft::set_config_option("max_records", int64_t{8}), weft::Error);
    try {
        m.set_option("determinism", weft::Deterministic::RunToRun);
        FAIL() << "expected weft::Error";
    } catch (const weft::Error& e) {
        EXPECT_NE(std::string(e.what()).find("determinism"), std::string::npos) << e.what();
    }
}

TEST_F(OptionsTest, BoundsCheckChangesGeneratedSource) {
    weft::Module m{"bounds_source"};
    m.kernel("copy", {"src", "dst"}, [](weft::Array<float> src, weft::Array<float> dst) {
        auto tid = weft::tid();
        dst[tid] = src[tid];
    });
    const std::string unchecked = m.generated_source(weft::Device::cpu());
    EXPECT_EQ(unchecked.find("wf::checked"), std::string::npos) << unchecked;
    m.set_options({.bounds_check = true});
    const std::string checked = m.generated_source(weft::Device::cpu());
    EXPECT_NE(checked.find("wf::checked"), std::string::npos) << checked;
    m.set_option("bounds_check", false);
    EXPECT_EQ(m.generated_source(weft::Device::cpu()), unchecked);
}

// Changing options after a compile recompiles: the next launch runs with the new options.
TEST_F(OptionsTest, ChangingOptionsAfterCompileRecompiles) {
    weft::Module m{"recompile", {.verbose = true}};
    auto gather = m.kernel("gather", {"src", "index", "dst"},
                           [](weft::Array<float> src, weft::Array<int> index, weft::Array<float> dst) {
                               auto tid = weft::tid();
                               dst[tid] = src[index[tid]];
                           });
    auto src = weft::from_vector(std::vector<float>{10.0f, 11.0f, 12.0f, 13.0f}, dev());
    auto in_bounds = weft::from_vector(std::vector<int>{3}, dev());
    // Index 5 of a 4-float array lies inside the allocation's 64-byte rounding, so even an
    // unchecked read (if the module failed to recompile) stays in mapped memory.
    auto out_of_bounds = weft::from_vector(std::vector<int>{5}, dev());
    auto dst = weft::zeros<float>(1, dev());

    testing::internal::CaptureStderr();
    weft::launch(gather, 1, src, in_bounds, dst);  // compiles without bounds checks
    weft::launch(gather, 1, src, in_bounds, dst);  // reuses the compiled module
    m.set_options({.bounds_check = true});
    std::string log;
    try {
        weft::launch(gather, 1, src, out_of_bounds, dst);
        log = testing::internal::GetCapturedStderr();
        FAIL() << "an out-of-bounds read after enabling bounds_check must raise weft::Error\n" << log;
    } catch (const weft::Error& e) {
        log = testing::internal::GetCapturedStderr();
        const std::string what = e.what();
        EXPECT_NE(what.find("out of bounds"), std::string::npos) << what;
        EXPECT_NE(what.find("gather"), std::string::npos) << what;
    }
    EXPECT_EQ(dst.to_vector(), std::vector<float>{13.0f}) << "the faulting launch was undone";
    EXPECT_EQ(count_of(log, "weft: module 'recompile'"), 2) << "one compile per option set\n" << log;

    // And back: with bounds checks off again, in-bounds launches keep working.
    m.set_options({.bounds_check = false});
    auto in_bounds_0 = weft::from_vector(std::vector<int>{1}, dev());
    weft::launch(gather, 1, src, in_bounds_0, dst);
    EXPECT_EQ(dst.to_vector(), std::vector<float>{11.0f});
}

TEST_F(OptionsTest, ReplaceConfigValidatesAndReplacesEveryField) {
    weft::Options o;
    o.deterministic = weft::Deterministic::GpuToGpu;
    o.deterministic_strategy = weft::DeterministicStrategy::Records;
    o.block_dim = 128;
    o.debug = true;
    weft::replace_config(o);
    EXPECT_TRUE(weft::config() == o);
    weft::Options bad = o;
    bad.deterministic_max_records = -1;
    EXPECT_THROW(weft::replace_config(bad), weft::Error);
    EXPECT_TRUE(weft::config() == o) << "a rejected config changes nothing";
}

}  // namespace
