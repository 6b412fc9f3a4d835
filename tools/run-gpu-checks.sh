#!/usr/bin/env bash
# Builds Weft on a GPU machine and runs the GPU tests, the examples and the benchmarks, copying logs to $OUT.
# Usage: tools/run-gpu-checks.sh [ctest regex]   (runs everything labelled gpu by default)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out="${OUT:-build/gpu-logs}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/gpu -j"$(nproc)" -- -k 0 >"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$out/build.log" | head -60; }
(cd build/gpu && ctest -L gpu -j"$(nproc)" --timeout 180 --output-on-failure ${1:+-R "$1"} >"$out/ctest-gpu.log" 2>&1)
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest-gpu.log" | head -40
build/gpu/examples/weft_demo | tee "$out/demo.log"
build/gpu/examples/weft_projectile_optimization | tee "$out/projectile_optimization.log"
build/gpu/examples/weft_particles | tee "$out/particles.log"
for bench in build/gpu/bench/weft_*_bench; do
  [ -x "$bench" ] || continue
  echo "== $bench"
  "$bench" 2>&1 | tee "$out/$(basename "$bench").log"
done
if [ -x build/gpu/bench/weft_deterministic_bench ]; then
  echo "== weft_deterministic_bench records"
  build/gpu/bench/weft_deterministic_bench records 2>&1 | tee "$out/weft_deterministic_bench_records.log"
fi
