#!/usr/bin/env python3
"""Draws docs/deterministic-cost.svg from weft_deterministic_bench's output: the time of each
deterministic mode against plain atomics, beside the spec framework's published figures.

Usage: build/gpu/bench/weft_deterministic_bench | tools/plot-cost.py [out.svg]
Reads the first table ("float32, strategy auto"): for each row of writes and outputs, the ratios
RunToRun / NotGuaranteed and GpuToGpu / NotGuaranteed (graph replay of the zeroing and the
launch, CUDA events, medians). The spec framework's ratios are those its documentation
publishes (an RTX 4090, CUDA 12.4; spec/deterministic-execution.rst, "Performance"); they were
measured on another GPU, so they show the shape of the cost, not a race. Python's standard
library only.
"""
import math
import re
import sys
from html import escape

# The spec framework's table: (writes, outputs) -> (RUN_TO_RUN / NOT_GUARANTEED, GPU_TO_GPU / ...).
SPEC = {
    (65536, 1): (0.075 / 0.099, 7.66 / 0.099),
    (262144, 1): (0.096 / 0.364, 31.0 / 0.364),
    (1048576, 1): (0.193 / 1.46, 172 / 1.46),
    (65536, 65536): (0.079 / 0.0058, 0.076 / 0.0058),
    (262144, 65536): (0.192 / 0.0081, 0.187 / 0.0081),
    (1048576, 65536): (0.201 / 0.020, 0.228 / 0.020),
}

rows, device, in_table = [], "", False
for line in sys.stdin:
    m = re.match(r"^device: (.+)$", line)
    if m:
        device = m.group(1).strip()
    if line.startswith("float32, strategy auto"):
        in_table = True
        continue
    if in_table:
        m = re.match(r"^\s*(\d+)\s+(\d+) \|\s*([\d.]+)\s+([\d.]+)\s+([\d.]+) \|\s*([\d.]+)x\s+([\d.]+)x", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), float(m.group(6)), float(m.group(7))))
        elif rows and not line.strip():
            break
if not rows:
    sys.exit("plot-cost.py: no 'float32, strategy auto' table in the input; "
             "pipe weft_deterministic_bench's output into it")

bars = [("Weft RunToRun", "#1f77b4"), ("Weft GpuToGpu", "#aec7e8"),
        ("spec RUN_TO_RUN", "#d62728"), ("spec GPU_TO_GPU", "#ff9896")]
low, high = 0.005, 200.0  # the ratio axis, logarithmic
width, height, left, top, bottom = 760, 380, 70, 60, 70
plot_w, plot_h = width - left - 20, height - top - bottom


def y_of(ratio):
    r = min(max(ratio, low), high)
    return top + plot_h * (math.log10(high) - math.log10(r)) / (math.log10(high) - math.log10(low))


svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
       f'font-family="sans-serif" font-size="12">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">Deterministic time / plain '
       f'atomics time (float32 sums, graph replay, medians; lower is cheaper)</text>',
       f'<text x="{width / 2}" y="38" text-anchor="middle">Weft on {escape(device or "the GPU")}; '
       f'the spec framework\'s published figures on an RTX 4090 (writes into outputs)</text>']
for ratio in (0.01, 0.1, 1, 10, 100):
    y = y_of(ratio)
    svg.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
               f'stroke="{"black" if ratio == 1 else "#ddd"}"/>')
    svg.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{ratio:g}x</text>')
slot = plot_w / len(rows)
bar = slot * 0.8 / len(bars)
for i, (writes, outputs, r2r, g2g) in enumerate(rows):
    spec = SPEC.get((writes, outputs))
    values = [r2r, g2g, spec[0] if spec else None, spec[1] if spec else None]
    for j, ((_, colour), v) in enumerate(zip(bars, values)):
        if v is None:
            continue
        x = left + slot * i + slot * 0.1 + bar * j
        y = y_of(v)
        base = y_of(1)
        svg.append(f'<rect x="{x:.1f}" y="{min(y, base):.1f}" width="{bar - 1:.1f}" '
                   f'height="{abs(base - y):.1f}" fill="{colour}"/>')
    svg.append(f'<text x="{left + slot * (i + 0.5):.1f}" y="{top + plot_h + 18}" text-anchor="middle">'
               f'{writes:,}</text>')
    svg.append(f'<text x="{left + slot * (i + 0.5):.1f}" y="{top + plot_h + 32}" text-anchor="middle">'
               f'into {outputs:,}</text>')
for j, (name, colour) in enumerate(bars):
    x = left + j * 170
    svg.append(f'<rect x="{x}" y="{height - 22}" width="12" height="12" fill="{colour}"/>')
    svg.append(f'<text x="{x + 16}" y="{height - 12}">{escape(name)}</text>')
svg.append("</svg>")

out = sys.argv[1] if len(sys.argv) > 1 else "docs/deterministic-cost.svg"
with open(out, "w") as f:
    f.write("\n".join(svg) + "\n")
print(f"plot-cost.py: wrote {out} ({len(rows)} rows)")
