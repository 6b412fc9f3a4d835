#!/usr/bin/env bash
# Checks that a project can use Weft (run by run-tests.sh after the release build): installs
# build/release into a temporary prefix, moves it (the package must be relocatable), then builds
# and runs tests/consumer against it with find_package, and against this source tree with
# add_subdirectory. Output goes to build/release/consumers.log; prints one line per check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
log="$root/build/release/consumers.log"
: >"$log"
work="$(mktemp -d "${TMPDIR:-/tmp}/weft-consumers-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The consumers compile their kernel into a cache of their own, never the user's.
export WEFT_CACHE_DIR="$work/cache"

# Runs "$@" with its output in the log; on failure shows the log's end and stops.
step() {
    echo "== $*" >>"$log"
    if ! "$@" >>"$log" 2>&1; then
        echo "check-consumers.sh: failed: $*" >&2
        tail -n 40 "$log" >&2
        echo "check-consumers.sh: the whole log is $log" >&2
        exit 1
    fi
}

# Builds tests/consumer into $1 with the cmake arguments that follow, and runs it.
build_and_run() {
    local dir="$1"
    shift
    step cmake -S tests/consumer -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
    step cmake --build "$dir" -j"$(nproc)"
    step "$dir/weft_consumer"
}

step cmake --install build/release --prefix "$work/staged"
mv "$work/staged" "$work/prefix"
if grep -rlF -e "$root" -e "$work/staged" "$work/prefix" >>"$log"; then
    echo "check-consumers.sh: the installed package names build paths (files listed in $log)" >&2
    exit 1
fi
build_and_run "$work/installed" -DCMAKE_PREFIX_PATH="$work/prefix"
echo "check-consumers.sh: find_package(weft 0.1) from a moved install prefix: built and ran"

build_and_run "$work/subdirectory" -DWEFT_SUBDIRECTORY="$root"
echo "check-consumers.sh: add_subdirectory(weft) without tests, benchmarks or examples: built and ran"
