#!/usr/bin/env bash
# Compiles each of Weft's own kernel sources (src/device/kernels/*.cu) on its own with nvcc, as
# NVRTC compiles it (device code only, one cubin for sm_90, C++17), so that a typo is found here
# rather than by NVRTC at run time; given the weft_device_registers tool (built where the CUDA
# toolkit is found), also the library's embedded text with NVRTC itself. Prints each kernel's
# registers and spill bytes under both.
# Usage: tools/check-device-sources.sh [path/to/weft_device_registers]
# Exits 77 (skipped, for ctest) where nvcc is not found.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
nvcc="${NVCC:-$(command -v nvcc || true)}"
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc" ]; then
  echo "skipped: nvcc not found (set NVCC or put the CUDA toolkit's bin on PATH)"
  exit 77
fi
registers_tool="${1:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
: >"$work/nvcc.txt"
for source in src/device/kernels/*.cu; do
  name="$(basename "$source" .cu)"
  extra=()
  [ "$name" = graph_condition ] && extra=(-rdc=true)  # a device runtime call: relocatable code
  if ! "$nvcc" -arch=sm_90 -std=c++17 -Isrc "${extra[@]}" -cubin -Xptxas -v "$source" \
      -o "$work/$name.cubin" >"$work/$name.log" 2>&1; then
    echo "FAILED: nvcc -cubin $source"; cat "$work/$name.log"; failed=1; continue
  fi
  # ptxas reports per entry: its name, then its spills, then its registers.
  awk -v module="$name" '
    /Compiling entry function/ { split($0, q, "'"'"'"); entry = q[2]; spill = 0; next }
    /bytes spill stores/ && entry != "" { for (i = 1; i < NF; ++i) if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $(i + 3) == "stores,") spill = $i + 0 }
    /Used [0-9]+ registers/ && entry != "" { for (i = 1; i < NF; ++i) if ($i == "Used") print entry, $(i + 1), spill, module; entry = "" }
  ' "$work/$name.log" >>"$work/nvcc.txt"
  echo "ok: $source"
done
[ "$failed" = 0 ] || exit 1
if [ -n "$registers_tool" ]; then
  if ! "$registers_tool" 90 >"$work/nvrtc.txt" 2>"$work/nvrtc.log"; then
    echo "FAILED: NVRTC on the embedded library sources ($registers_tool)"; cat "$work/nvrtc.log"; exit 1
  fi
  echo "ok: NVRTC compiled every library module for sm_90"
fi
echo
printf "%-34s %-24s %14s %14s\n" kernel source "nvcc regs/spill" "nvrtc regs/spill"
sort "$work/nvcc.txt" | while read -r kernel regs spill module; do
  nvrtc="-"
  if [ -s "${work}/nvrtc.txt" ]; then
    nvrtc="$(awk -v k="$kernel" '$1 == k { print $2 "/" $3 }' "$work/nvrtc.txt")"
    [ -n "$nvrtc" ] || nvrtc="missing"
  fi
  printf "%-34s %-24s %14s %14s\n" "$kernel" "$module.cu" "$regs/$spill" "$nvrtc"
done
