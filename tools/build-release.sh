#!/usr/bin/env bash
# Shared by run-demo.sh and run-tests.sh: installs missing Debian packages, then configures the
# release preset. Sourced, with the caller's name in $caller and $with_tests set to ON (tests and
# benchmarks too, which need GoogleTest) or OFF (the library and the demo only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Install only what is missing: machines without apt network access already have the tools,
# and must never reach apt-get.
missing=()
for tool in g++:g++ cmake:cmake ninja:ninja-build; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
# GoogleTest has no command; a dpkg record or its header (on systems without dpkg) shows it.
if [[ "$with_tests" == ON ]]; then
    [[ "$(dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null)" == "install ok installed" ]] ||
        [[ -f /usr/include/gtest/gtest.h || -f /usr/local/include/gtest/gtest.h ]] ||
        missing+=(libgtest-dev)
    # MPI for the distributed tests (mpirun at 1 to 4 ranks); a build without it skips them.
    command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
    [[ "$(dpkg-query -W -f='${Status}' libopenmpi-dev 2>/dev/null)" == "install ok installed" ]] ||
        command -v mpicxx >/dev/null 2>&1 || missing+=(libopenmpi-dev)
fi
if ((${#missing[@]})); then
    if ((EUID != 0)); then
        echo "$caller: missing packages: ${missing[*]}; run as root or install them" >&2
        exit 1
    fi
    echo "$caller: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The options are passed explicitly because a build tree keeps values from earlier configures.
cmake --preset release -DWEFT_BUILD_TESTS="$with_tests" -DWEFT_BUILD_BENCH="$with_tests" \
    -DWEFT_BUILD_EXAMPLES=ON
