#!/usr/bin/env bash
# Weft's CPU plain atomics beside the spec framework's CPU backend (Warp, PyPI warp-lang 1.19.0)
# on the same particle-to-grid scatter (weft_cpu_bench's p2g rows, bench/warp_p2g.py), one table
# with the ratio. Warp runs in a throw-away virtual environment that this script makes and
# removes: a benchmark tool only, never a dependency of the build or the tests.
# Usage: bench/cpu_side_by_side.sh [runs]   (default 7; needs python3 with venv, and PyPI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-7}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "cpu_side_by_side.sh: runs must be a positive number" >&2; exit 2; }

venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
echo "cpu_side_by_side.sh: installing warp-lang 1.19.0 into a throw-away environment ($venv)"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check warp-lang==1.19.0 numpy
cmake --build --preset release --target weft_cpu_bench >/dev/null

warp="$("$venv/bin/python" bench/warp_p2g.py "$runs" | awk '/^p2g warp / { print $3 }')"
weft="$(build/release/bench/weft_cpu_bench "$runs" p2g)"
echo
echo "particle-to-grid: 262,144 particles, 108 atomic adds each, into a 64^3 grid; ms, median of $runs"
echo "(Warp's CPU backend runs a launch's threads serially, with plain read-modify-writes)"
printf '%-34s | %10s | %10s | %7s | %s\n' "Weft" "Weft ms" "Warp ms" "ratio" "target"
awk -v warp="$warp" '
    /^p2g / {
        name = $2 " atomics, " $3 " worker" ($3 == 1 ? "" : "s")
        ratio = $4 / warp
        target = ($2 == "plain" && $3 == 1) ? (ratio <= 1.2 ? "<= 1.2x met" : "<= 1.2x not met") : ""
        printf "%-34s | %10.3f | %10.3f | %6.2fx | %s\n", name, $4, warp, ratio, target
    }' <<<"$weft"
