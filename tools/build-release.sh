#!/usr/bin/env bash
# Shared by run-demo.sh and run-tests.sh: installs missing Debian packages, then builds the
# release preset. Sourced, with the caller's name in $caller.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Install only what is missing: machines without apt network access already have the tools,
# and must never reach apt-get. GoogleTest too: the release preset configures the tests.
missing=()
for tool in g++:g++ cmake:cmake ninja:ninja-build; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
# GoogleTest has no command; a dpkg record or its header (on systems without dpkg) shows it.
[[ "$(dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null)" == "install ok installed" ]] ||
    [[ -f /usr/include/gtest/gtest.h || -f /usr/local/include/gtest/gtest.h ]] ||
    missing+=(libgtest-dev)
if ((${#missing[@]})); then
    if ((EUID != 0)); then
        echo "${caller:-build-release.sh}: missing packages: ${missing[*]}; run as root or install them" >&2
        exit 1
    fi
    echo "${caller:-build-release.sh}: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The options are passed explicitly because a build tree keeps values from earlier configures.
cmake --preset release -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=ON
cmake --build --preset release -j"$(nproc)"
