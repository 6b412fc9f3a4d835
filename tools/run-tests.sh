#!/usr/bin/env bash
# Builds Weft (release preset: library, demo, tests, benchmarks), runs the whole test suite and
# checks that projects can use Weft; installs missing Debian packages first. Ends with a summary;
# exits with ctest's status (or the consumer check's, when the tests passed).
set -euo pipefail
caller=run-tests.sh
with_tests=ON
# shellcheck source=tools/build-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-release.sh"
build_targets

log=build/release/tests.log
details=build/release/Testing/Temporary/LastTest.log
# Every test runs: "cpu" tests everywhere; "gpu" tests skip themselves where there is no GPU.
# Passed and skipped tests become a progress count here; everything else (failures, with their
# output) is shown as ctest prints it.
# CPU launches run on 2 worker threads at least (WEFT_CPU_THREADS may ask for more), so every
# cpu test exercises the parallel CPU backend even on a one-core machine; tests of the worker
# pool itself also run with 1, 2, 7 and all hardware threads.
export WEFT_CPU_THREADS="${WEFT_CPU_THREADS:-2}"
total="$(ctest --preset release -N | sed -n 's/^Total Tests: //p')"
echo "$caller: running ${total:-the} tests (CPU launches on $WEFT_CPU_THREADS worker threads; minutes)"
set +e
ctest --preset release -j"$(nproc)" 2>&1 | tee "$log" | awk '
    /^ +Start +[0-9]+: / { next }
    / Test +#[0-9]+: .*(Passed|\*\*\*Skipped) +[0-9.]+ sec$/ {
        if (++done % 100 == 0) { printf "  %d tests finished\n", done; fflush() }
        next
    }
    /^The following tests did not run:$/ || / \(Skipped\)$/ { next }
    { print; fflush() }'
ctest_status=${PIPESTATUS[0]}
echo "$caller: checking the README's \"use it from your project\" commands (two small projects; minutes)"
tools/check-consumers.sh
consumers_status=$?
set -e

# A gpu test program on a machine without a GPU prints why and skips all its tests.
no_gpu="$(grep -m1 -o 'SKIPPED \] no GPU: .*' "$details" 2>/dev/null | sed 's/^SKIPPED \] no GPU: //')" || true

# Counts per label (the test-name prefix) and outcome, from ctest's one line per test.
echo
echo "== $caller summary"
awk -v no_gpu="$no_gpu" '
    match($0, / Test +#[0-9]+: [a-z]+\./) {
        label = substr($0, RSTART, RLENGTH)
        sub(/.*: /, "", label)
        sub(/\.$/, "", label)
        labels[label] = 1
        if ($0 ~ /Passed +[0-9.]+ sec$/) passed[label]++
        else if ($0 ~ /\*\*\*Skipped +[0-9.]+ sec$/) skipped[label]++
        else failed[label]++
    }
    END {
        for (label in labels) total += passed[label] + failed[label] + skipped[label]
        printf "all: %d tests, each counted once below\n", total
        for (label in labels) {
            ran = passed[label] + failed[label]
            if (ran == 0 && label == "gpu" && no_gpu != "") {
                printf "gpu: %d tests skipped because no GPU was found (%s)\n", skipped[label], no_gpu
                continue
            }
            printf "%s: %d tests ran on the %s: %d passed, %d failed", label, ran, toupper(label),
                passed[label], failed[label]
            if (skipped[label]) printf ", %d skipped", skipped[label]
            printf "\n"
        }
    }' "$log" | sort
# Every skipped test but the gpu ones of a machine without a GPU (said above), with its reason:
# GoogleTest prints "FILE:LINE: Skipped", then the reason, in the test's output; a script that
# ctest skips by its exit status (SKIP_RETURN_CODE) prints "skipped: REASON".
awk '
    match($0, /^[0-9]+\/[0-9]+ Test: /) { test = substr($0, RLENGTH + 1); next }
    test ~ /^gpu\./ { next }
    / Skipped$/ { getline reason; printf "  skipped %s: %s\n", test, reason }
    /^skipped: / { printf "  skipped %s: %s\n", test, substr($0, 10) }
' "$details" 2>/dev/null | sort -u || true
if ((consumers_status == 0)); then
    echo "consumers: the installed package and the source tree both build into a working program"
else
    echo "consumers: FAILED (see build/release/consumers.log)"
fi
echo "full log: $log (each test's own output: $details)"
if ((ctest_status != 0)); then exit "$ctest_status"; fi
exit "$consumers_status"
