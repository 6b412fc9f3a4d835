#!/usr/bin/env bash
# Shared by run-demo.sh and run-tests.sh: installs missing Debian packages, then configures the
# release preset. Sourced, with the caller's name in $caller and $with_tests set to ON (the tests
# too, which need GoogleTest) or OFF (the library and the demo are built), and optionally
# $with_mpi set to ON (MPI, for an example that runs over ranks; the tests always get it).
# Each phase prints one line; its full output goes to the script's log in build/, whose end is
# shown when the phase fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p build
# Each script keeps its own log (build/setup-run-demo.log, build/setup-run-tests.log), so running
# one does not erase the other's.
setup_log="build/setup-${caller%.sh}.log"
: >"$setup_log"

# Prints "$caller: MESSAGE" (the first argument), then runs the rest with its output in
# $setup_log; on failure shows the log's end and stops.
phase() {
    local message="$1"
    shift
    echo "$caller: $message"
    echo "== $*" >>"$setup_log"
    if ! "$@" >>"$setup_log" 2>&1; then
        echo "$caller: failed: $*" >&2
        tail -n 30 "$setup_log" >&2
        echo "$caller: the whole log is $setup_log" >&2
        exit 1
    fi
}

# Install only what is missing: machines without apt network access already have the tools,
# and must never reach apt-get. `make` too: the README's "use it from your project" commands
# pass no generator, so CMake picks Unix Makefiles.
missing=()
# python3: the README's pictures are redrawn by tools/plot-*.py from the programs' output.
for tool in g++:g++ cmake:cmake ninja:ninja-build make:make python3:python3; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
# A package that has no command: its dpkg record, or its header (on systems without dpkg).
need_header() {
    local package="$1" header="$2"
    [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" == "install ok installed" ]] ||
        [[ -f /usr/include/$header || -f /usr/local/include/$header ]] ||
        missing+=("$package")
}
if [[ "$with_tests" == ON ]]; then
    need_header libgtest-dev gtest/gtest.h
    # DLPack interchange is built when its header is there (optional elsewhere, tested here);
    # Doxygen builds the API reference, whose warnings the test command checks.
    need_header libdlpack-dev dlpack/dlpack.h
    command -v doxygen >/dev/null 2>&1 || missing+=(doxygen)
fi
# MPI for the distributed tests (mpirun at 1 to 4 ranks; a build without it skips them) and the
# data-parallel example.
if [[ "$with_tests" == ON || "${with_mpi:-OFF}" == ON ]]; then
    command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
    command -v mpicxx >/dev/null 2>&1 || need_header libopenmpi-dev mpi.h
fi
if ((${#missing[@]})); then
    if ((EUID != 0)); then
        echo "$caller: missing packages: ${missing[*]}; run as root or install them" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    phase "updating the package lists (apt-get update)" apt-get update
    phase "installing ${#missing[@]} packages (${missing[*]}) and what they need; a minute or two" \
        apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The options are passed explicitly because a build tree keeps values from earlier configures.
# Benchmarks need no GoogleTest and are built only when named, so both scripts configure them
# (the README's benchmark commands work after the demo script); tests are turned off only in a
# tree that has never been configured, so the demo script keeps what the test script set up.
configure=(cmake --preset release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_EXAMPLES=ON)
if [[ "$with_tests" == ON || ! -f build/release/CMakeCache.txt ]]; then
    configure+=(-DWEFT_BUILD_TESTS="$with_tests")
fi
phase "configuring the release preset into build/release" "${configure[@]}"

# Builds the release preset's targets "$@" (all with none), printing a count at every tenth of
# the steps; ninja's output goes to the script's build log in build/release/. (The first line's
# total can be that of CMake's own regeneration, so no total is announced before the build.)
build_targets() {
    local log="build/release/build-${caller%.sh}.log"
    local what="${*:-everything}"
    set +e
    cmake --build --preset release -j"$(nproc)" ${1:+--target "$@"} 2>&1 | tee "$log" | awk \
        -v caller="$caller" -v what="$what" '
        match($0, /^\[[0-9]+\/[0-9]+\]/) {
            split(substr($0, 2, RLENGTH - 2), p, "/")
            if (!announced) {
                printf "%s: building %s (minutes on a small machine)\n", caller, what
                announced = 1
            }
            tenth = int(10 * p[1] / p[2])
            if (tenth > shown) { printf "  %d/%d\n", p[1], p[2]; shown = tenth; fflush() }
        }
        END { if (!announced) printf "%s: building %s: up to date\n", caller, what }'
    local status=${PIPESTATUS[0]}
    set -e
    if ((status != 0)); then
        echo "$caller: the build failed; its end:" >&2
        grep -E -A12 '^FAILED:' "$log" | head -n 60 >&2 || tail -n 40 "$log" >&2
        echo "$caller: the whole build log is $log" >&2
        exit "$status"
    fi
}
