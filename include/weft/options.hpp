// Compilation options and their three scopes: process config, module options, unique modules.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <variant>

namespace weft {

/// The spec's three modes (docs/kernel-language.md); a value outside them is a weft::Error.
enum class Deterministic : uint8_t {
    NotGuaranteed,  ///< The default: atomics add in whatever order the threads run.
    RunToRun,       ///< The same bits on every run: float atomics give the exact sums, rounded once.
    GpuToGpu        ///< RunToRun, and the same bits on every GPU and the CPU (no FMA contraction).
};

/// The mode's name in options and messages: "not_guaranteed", "run_to_run" or "gpu_to_gpu".
const char* deterministic_name(Deterministic mode);

/// How deterministic accumulation is carried out (see docs/design/0008-deterministic-accumulation.md).
/// Every strategy gives the same bits; the choice only moves cost between memory and time.
enum class DeterministicStrategy : uint8_t {
    Auto,     ///< See docs/design/0023: exact digits for small targets, compact windows for large
              ///< float32/float16/bfloat16 ones (of any size in a CPU launch run as one chunk,
              ///< docs/design/0032); float64: exact up to 65,536 elements, else records.
    Exact,    ///< Per-element exact digit accumulators updated with integer atomics.
    Records,  ///< Per-thread records, grouped by element, then an exact per-element reduction.
    Compact,  ///< Per-element exact windows (one integer atomic per contribution) that spill what
              ///< they cannot hold; float64 targets use exact digits.
};

/// The strategy's name in options and messages: "auto", "exact", "records" or "compact".
const char* strategy_name(DeterministicStrategy strategy);

/// The most worker threads a CPU launch may use (the option cpu_threads, WEFT_CPU_THREADS).
inline constexpr int kMaxCpuThreads = 1024;

/// Options that decide how a module is compiled. A module captures a copy of `config()` when it
/// is created; later changes to the config leave it alone (the spec's rule).
struct Options {
    /// Whether atomics are deterministic, and how far (see Deterministic).
    Deterministic deterministic = Deterministic::NotGuaranteed;
    /// How deterministic accumulation is carried out; the bits are the same for every strategy.
    DeterministicStrategy deterministic_strategy = DeterministicStrategy::Auto;
    /// Per-thread, per-target record bound for record-based deterministic strategies; 0 means
    /// "use the static estimate".
    int64_t deterministic_max_records = 0;
    /// Check deterministic capacity and errors at every launch (synchronizes).
    bool deterministic_debug = false;
    /// Check every array index against the array's shape; report kernel, array, index, line.
    bool bounds_check = false;
    /// Host compiler optimisation level for the CPU backend (0..3).
    int optimization_level = 2;
    /// CUDA threads per block.
    int block_dim = 256;
    /// Worker threads a CPU launch uses (1: serial); 0 means the environment variable
    /// WEFT_CPU_THREADS when it is set, else every hardware thread.
    int cpu_threads = 0;
    /// Check every launch at once (waits for each GPU launch) instead of at the next
    /// synchronization.
    bool debug = false;
    /// One line per module compile, with its time, on stderr.
    bool verbose = false;
    /// Autodiff: whether the module's kernels have backward passes. When false, a tape records
    /// none of its launches and a manual adjoint launch is an error (docs/autodiff.md).
    bool enable_backward = true;

    /// Field by field.
    friend bool operator==(const Options&, const Options&) = default;
};

/// A partial update: only the fields that are set change. Designated initializers read well:
/// `module.set_options({.deterministic = weft::Deterministic::RunToRun})`.
struct OptionsPatch {
    /// Each field, when set, replaces the Options field of the same name.
    ///@{
    std::optional<Deterministic> deterministic;
    std::optional<DeterministicStrategy> deterministic_strategy;
    std::optional<int64_t> deterministic_max_records;
    std::optional<bool> deterministic_debug;
    std::optional<bool> bounds_check;
    std::optional<int> optimization_level;
    std::optional<int> block_dim;
    std::optional<int> cpu_threads;
    std::optional<bool> debug;
    std::optional<bool> verbose;
    std::optional<bool> enable_backward;
    ///@}
};

/// Every field of `options` set: a patch that makes a module's options exactly `options`.
inline OptionsPatch patch_of(const Options& options) {
    return {options.deterministic,
            options.deterministic_strategy,
            options.deterministic_max_records,
            options.deterministic_debug,
            options.bounds_check,
            options.optimization_level,
            options.block_dim,
            options.cpu_threads,
            options.debug,
            options.verbose,
            options.enable_backward};
}

/// A dynamically typed option value, for options that come from strings (files, environment,
/// command lines). A value of the wrong kind for its option is an error, never coerced.
using OptionValue = std::variant<bool, int64_t, double, std::string, Deterministic, DeterministicStrategy>;

// Each function below throws weft::Error for an unknown name or a bad value, naming the
// caller's line.

/// Validates `patch` against `base` and returns the result.
Options apply(const Options& base, const OptionsPatch& patch,
              std::source_location s = std::source_location::current());
/// Sets one option by name on `options`.
void set_option(Options& options, std::string_view name, const OptionValue& value,
                std::source_location s = std::source_location::current());

/// The process-wide defaults (the spec's `wp.config`). Thread-safe copies in and out.
Options config();
/// Changes the fields `patch` sets in the process-wide defaults (validated first: on an error
/// nothing changes). Modules created afterwards see them.
void set_config(const OptionsPatch& patch, std::source_location s = std::source_location::current());
/// Replaces the whole config (validated), e.g. to restore a copy taken with config().
void replace_config(const Options& options, std::source_location s = std::source_location::current());
/// Sets one option of the process-wide defaults by name, as set_option does.
void set_config_option(std::string_view name, const OptionValue& value,
                       std::source_location s = std::source_location::current());

}  // namespace weft
