#!/usr/bin/env bash
# Checks that a project can use Weft exactly as the README says (run by run-tests.sh after the
# release build). The program, the CMakeLists.txt files and the commands are taken from the
# README's blocks marked `<!-- consumer: NAME -->`, so the README cannot drift from what works;
# only the paths /opt/weft and /path/to/weft are replaced. It installs build/release, moves the
# prefix (the package must be relocatable), builds and runs the program with find_package, then
# with FetchContent from this source tree. Then, as a user who ran both set-up scripts would, the
# demo script, the README's benchmark commands and its golden-file commands, in that order, and
# the demo script's configuration of a fresh tree. Output goes to build/release/consumers.log; it
# prints one line per check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
log="$root/build/release/consumers.log"
: >"$log"
work="$(mktemp -d "${TMPDIR:-/tmp}/weft-consumers-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The consumers compile their kernel into a cache of their own, never the user's.
export WEFT_CACHE_DIR="$work/cache"

fail() {
    echo "check-consumers.sh: $*" >&2
    exit 1
}

# The text of the README's fenced block after the line `<!-- consumer: $1 ...-->`.
block() {
    local text
    text="$(awk -v key="$1" '
        $0 ~ "^<!-- consumer: " key "( |-->)" { armed = 1; next }
        armed && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' README.md)"
    [[ -n "$text" ]] || fail "README.md has no block marked '<!-- consumer: $1 -->'"
    printf '%s\n' "$text"
}

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

# Runs the README block $1 as a bash script in folder $2, with /opt/weft replaced by $3.
run_commands() {
    block "$1" | sed "s|/opt/weft|$3|g" >"$work/$1.sh"
    (cd "$2" && step bash -euo pipefail "$work/$1.sh")
}

# Makes project folder $1 from the README's program and its CMakeLists block $2 (with
# /path/to/weft replaced by this source tree), builds it with the README's commands against
# prefix $3, and checks that the program printed its result.
build_project() {
    local dir="$1"
    mkdir -p "$dir"
    block main.cpp >"$dir/main.cpp"
    block "$2" | sed "s|/path/to/weft|$root|g" >"$dir/CMakeLists.txt"
    local before
    before=$(wc -l <"$log")
    run_commands build "$dir" "$3"
    tail -n +"$((before + 1))" "$log" | grep -q "out = {1.75, 1}, 3 positive values" ||
        fail "the README's program did not print 'out = {1.75, 1}, 3 positive values' (see $log)"
}

run_commands install "$root" "$work/staged"
mv "$work/staged" "$work/prefix"
if grep -rlF -e "$root" -e "$work/staged" "$work/prefix" >>"$log"; then
    fail "the installed package names build paths (files listed in $log)"
fi
build_project "$work/installed" find_package "$work/prefix"
echo "check-consumers.sh: the README's install and find_package(weft 0.1) commands, from a moved prefix: built and ran"

build_project "$work/fetched" FetchContent "$work/no-prefix"
# As a subproject Weft builds only its library, so a consumer needs no GoogleTest.
for target in weft_demo weft_test_support weft_compile_bench; do
    if cmake --build "$work/fetched/build" --target help | grep -qw "$target"; then
        fail "Weft as a subproject defines $target; only the library should be built"
    fi
done
echo "check-consumers.sh: the README's FetchContent project (Weft as a subproject, without tests, benchmarks or examples): built and ran"

# The set-up scripts keep each other's configuration: the demo script, run after the test
# script, leaves the tests on, and the README's benchmark and golden commands work after it.
step tools/run-demo.sh
grep -qx 'WEFT_BUILD_TESTS:BOOL=ON' build/release/CMakeCache.txt ||
    fail "tools/run-demo.sh turned off the tests that tools/run-tests.sh had configured"
run_commands benchmark "$root" /opt/weft
run_commands golden "$root" /opt/weft
echo "check-consumers.sh: the demo script after the test script, then the README's benchmark and golden commands: ran"

# A fresh tree configured by the demo script alone has the benchmark targets (built only when
# named), so the README's benchmark command finds its target there too.
mkdir "$work/fresh"
for f in *; do [[ "$f" == build ]] || cp -r "$f" "$work/fresh/"; done
(cd "$work/fresh" && step bash -c 'caller=check-consumers.sh with_tests=OFF; source tools/build-release.sh')
(cd "$work/fresh" && cmake --build --preset release --target help) | grep -qw weft_compile_bench ||
    fail "a tree configured by tools/run-demo.sh has no target weft_compile_bench (the README's benchmark command)"
echo "check-consumers.sh: a fresh tree configured as tools/run-demo.sh does has the README's benchmark target"
