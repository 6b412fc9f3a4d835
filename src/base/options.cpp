// Option validation, the by-name setter, and the process-wide config.
#include "weft/options.hpp"

#include <cstdlib>
#include <mutex>

#include "base/options_environment.hpp"
#include "weft/error.hpp"

namespace weft {

namespace {

std::mutex config_mutex;

// The process-wide defaults, from the environment when first used (an invalid value is an
// error at every use until it is mended, never a silent default).
Options& global_config() {
    static Options config = options_from_environment(std::getenv("WEFT_BOUNDS_CHECK"));
    return config;
}

void validate(const Options& o) {
    if (o.deterministic != Deterministic::NotGuaranteed && o.deterministic != Deterministic::RunToRun &&
        o.deterministic != Deterministic::GpuToGpu)
        throw Error("option 'deterministic' has an invalid value " +
                    std::to_string(static_cast<int>(o.deterministic)) +
                    "; use Deterministic::NotGuaranteed, RunToRun or GpuToGpu");
    if (o.deterministic_strategy != DeterministicStrategy::Auto &&
        o.deterministic_strategy != DeterministicStrategy::Exact &&
        o.deterministic_strategy != DeterministicStrategy::Records &&
        o.deterministic_strategy != DeterministicStrategy::Compact)
        throw Error("option 'deterministic_strategy' has an invalid value " +
                    std::to_string(static_cast<int>(o.deterministic_strategy)) +
                    "; use DeterministicStrategy::Auto, Exact or Records");
    if (o.deterministic_max_records < 0)
        throw Error("option 'deterministic_max_records' must be >= 0 (0: use the static estimate), got " +
                    std::to_string(o.deterministic_max_records));
    if (o.optimization_level < 0 || o.optimization_level > 3)
        throw Error("option 'optimization_level' must be 0 to 3, got " +
                    std::to_string(o.optimization_level));
    if (o.block_dim < 1 || o.block_dim > 1024 || o.block_dim % 32 != 0)
        throw Error("option 'block_dim' must be a multiple of 32 from 32 to 1024, got " +
                    std::to_string(o.block_dim));
    if (o.cpu_threads < 0 || o.cpu_threads > kMaxCpuThreads)
        throw Error("option 'cpu_threads' must be 0 (WEFT_CPU_THREADS, else every hardware thread) or 1 to " +
                    std::to_string(kMaxCpuThreads) + ", got " + std::to_string(o.cpu_threads));
}

const char* kind_name(const OptionValue& v) {
    switch (v.index()) {
        case 0: return "a bool";
        case 1: return "an integer";
        case 2: return "a floating-point number";
        case 3: return "a string";
        case 4: return "a Deterministic mode";
        default: return "a DeterministicStrategy";
    }
}

template <class T>
T expect(std::string_view name, const OptionValue& v, const char* wanted) {
    if (const T* x = std::get_if<T>(&v)) return *x;
    throw Error("option '" + std::string(name) + "' takes " + wanted + ", got " + kind_name(v));
}

Deterministic parse_mode(std::string_view name, const OptionValue& v) {
    if (const auto* m = std::get_if<Deterministic>(&v)) return *m;
    if (const auto* s = std::get_if<std::string>(&v)) {
        if (*s == "not_guaranteed") return Deterministic::NotGuaranteed;
        if (*s == "run_to_run") return Deterministic::RunToRun;
        if (*s == "gpu_to_gpu") return Deterministic::GpuToGpu;
        throw Error("option 'deterministic' has no mode '" + *s +
                    "'; use \"not_guaranteed\", \"run_to_run\" or \"gpu_to_gpu\"");
    }
    throw Error("option '" + std::string(name) + "' takes a Deterministic mode or its name, got " +
                kind_name(v));
}

DeterministicStrategy parse_strategy(std::string_view name, const OptionValue& v) {
    if (const auto* m = std::get_if<DeterministicStrategy>(&v)) return *m;
    if (const auto* s = std::get_if<std::string>(&v)) {
        if (*s == "auto") return DeterministicStrategy::Auto;
        if (*s == "exact") return DeterministicStrategy::Exact;
        if (*s == "records") return DeterministicStrategy::Records;
        if (*s == "compact") return DeterministicStrategy::Compact;
        throw Error("option 'deterministic_strategy' has no strategy '" + *s +
                    "'; use \"auto\", \"exact\", \"records\" or \"compact\"");
    }
    throw Error("option '" + std::string(name) + "' takes a DeterministicStrategy or its name, got " +
                kind_name(v));
}

// Runs `f`; an error it throws without a source line gets the caller's.
template <class F>
auto at_line(const std::source_location& s, F f) {
    try {
        return f();
    } catch (const Error& e) {
        if (!e.file().empty()) throw;
        throw Error(e.message(), e.kernel(), s.file_name(), s.line());
    }
}

Options apply_patch(const Options& base, const OptionsPatch& p) {
    Options o = base;
    if (p.deterministic) o.deterministic = *p.deterministic;
    if (p.deterministic_strategy) o.deterministic_strategy = *p.deterministic_strategy;
    if (p.deterministic_max_records) o.deterministic_max_records = *p.deterministic_max_records;
    if (p.deterministic_debug) o.deterministic_debug = *p.deterministic_debug;
    if (p.bounds_check) o.bounds_check = *p.bounds_check;
    if (p.optimization_level) o.optimization_level = *p.optimization_level;
    if (p.block_dim) o.block_dim = *p.block_dim;
    if (p.cpu_threads) o.cpu_threads = *p.cpu_threads;
    if (p.debug) o.debug = *p.debug;
    if (p.verbose) o.verbose = *p.verbose;
    if (p.enable_backward) o.enable_backward = *p.enable_backward;
    validate(o);
    return o;
}

int to_int(std::string_view name, int64_t v) {
    if (v < INT32_MIN || v > INT32_MAX) throw Error("option '" + std::string(name) + "' is out of range");
    return static_cast<int>(v);
}

}  // namespace

const char* deterministic_name(Deterministic mode) {
    switch (mode) {
        case Deterministic::NotGuaranteed: return "not_guaranteed";
        case Deterministic::RunToRun: return "run_to_run";
        case Deterministic::GpuToGpu: return "gpu_to_gpu";
    }
    return "invalid";
}

const char* strategy_name(DeterministicStrategy strategy) {
    switch (strategy) {
        case DeterministicStrategy::Auto: return "auto";
        case DeterministicStrategy::Exact: return "exact";
        case DeterministicStrategy::Records: return "records";
        case DeterministicStrategy::Compact: return "compact";
    }
    return "invalid";
}

Options apply(const Options& base, const OptionsPatch& patch, std::source_location s) {
    return at_line(s, [&] { return apply_patch(base, patch); });
}

void set_option(Options& options, std::string_view name, const OptionValue& v, std::source_location s) {
    at_line(s, [&] {
        OptionsPatch p;
        if (name == "deterministic")
            p.deterministic = parse_mode(name, v);
        else if (name == "deterministic_strategy")
            p.deterministic_strategy = parse_strategy(name, v);
        else if (name == "deterministic_max_records")
            p.deterministic_max_records = expect<int64_t>(name, v, "an integer");
        else if (name == "deterministic_debug")
            p.deterministic_debug = expect<bool>(name, v, "a bool");
        else if (name == "bounds_check")
            p.bounds_check = expect<bool>(name, v, "a bool");
        else if (name == "optimization_level")
            p.optimization_level = to_int(name, expect<int64_t>(name, v, "an integer"));
        else if (name == "block_dim")
            p.block_dim = to_int(name, expect<int64_t>(name, v, "an integer"));
        else if (name == "cpu_threads")
            p.cpu_threads = to_int(name, expect<int64_t>(name, v, "an integer"));
        else if (name == "debug")
            p.debug = expect<bool>(name, v, "a bool");
        else if (name == "verbose")
            p.verbose = expect<bool>(name, v, "a bool");
        else if (name == "enable_backward")
            p.enable_backward = expect<bool>(name, v, "a bool");
        else
            throw Error("unknown option '" + std::string(name) +
                        "'; options are deterministic, deterministic_strategy, deterministic_max_records, "
                        "deterministic_debug, "
                        "bounds_check, optimization_level, block_dim, cpu_threads, debug, verbose, "
                        "enable_backward");
        options = apply_patch(options, p);
    });
}

Options options_from_environment(const char* bounds_check) {
    Options o;
    if (!bounds_check || !*bounds_check) return o;
    const std::string_view v = bounds_check;
    if (v != "0" && v != "1")
        throw Error("WEFT_BOUNDS_CHECK is '" + std::string(v) +
                    "'; set it to 1 (check every array index of every module whose options do not set "
                    "bounds_check) or 0, or unset it");
    o.bounds_check = v == "1";
    return o;
}

Options config() {
    std::lock_guard lock(config_mutex);
    return global_config();
}

void set_config(const OptionsPatch& patch, std::source_location s) {
    std::lock_guard lock(config_mutex);
    global_config() = apply(global_config(), patch, s);
}

void replace_config(const Options& options, std::source_location s) {
    at_line(s, [&] { validate(options); });
    std::lock_guard lock(config_mutex);
    global_config() = options;
}

void set_config_option(std::string_view name, const OptionValue& value, std::source_location s) {
    std::lock_guard lock(config_mutex);
    set_option(global_config(), name, value, s);
}

}  // namespace weft
