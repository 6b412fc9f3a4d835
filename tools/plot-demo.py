#!/usr/bin/env python3
"""Draws docs/demo-runs.svg from the demo's output: each run's sum against the exact sum.

Usage: build/release/examples/weft_demo | tools/plot-demo.py [out.svg]
Reads the demo's lines "plain bin B: +d1 +d2 ..." and "deterministic bin B: ...", the distance
of each run's sum from the exact sum in units in the last place, and plots them per bin: plain
atomics scatter, deterministic atomics sit on the exact sum. Python's standard library only.
"""
import re
import sys
from html import escape

runs = {}  # (mode, bin) -> [ulps per run]
device = ""
for line in sys.stdin:
    m = re.match(r"^(plain|deterministic)\s+bin (\d+):((?: [+-]\d+)+)\s*$", line)
    if m:
        runs[(m.group(1), int(m.group(2)))] = [int(v) for v in m.group(3).split()]
    m = re.match(r"^device: (\S+?),", line)
    if m:
        device = m.group(1)
if not runs:
    sys.exit("plot-demo.py: no 'plain bin N: ...' lines in the input; pipe weft_demo's output into it")

bins = sorted({b for _, b in runs})
count = max(len(v) for v in runs.values())
span = max(1, max(abs(d) for v in runs.values() for d in v))
width, height, left, top, bottom = 720, 360, 70, 50, 60
plot_w, plot_h = width - left - 20, height - top - bottom


def y_of(ulps):
    return top + plot_h / 2 - ulps / span * (plot_h / 2 - 10)


def x_of(b, run, mode):
    slot = plot_w / len(bins)
    base = left + slot * bins.index(b) + (0.15 if mode == "plain" else 0.62) * slot
    return base + run * (0.25 * slot) / max(1, count - 1)


svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
       f'font-family="sans-serif" font-size="12">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">'
       f'{count} runs of the same sums{escape(" on " + device) if device else ""}: '
       f'distance from the exact sum (ulp)</text>']
for ulps in (-span, 0, span):
    y = y_of(ulps)
    svg.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
               f'stroke="{"black" if ulps == 0 else "#ccc"}"/>')
    svg.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{ulps:+d}</text>')
for b in bins:
    slot = plot_w / len(bins)
    svg.append(f'<text x="{left + slot * (bins.index(b) + 0.5):.1f}" y="{top + plot_h + 20}" '
               f'text-anchor="middle">bin {b}</text>')
    for mode, colour in (("plain", "#d62728"), ("deterministic", "#1f77b4")):
        for run, ulps in enumerate(runs.get((mode, b), [])):
            svg.append(f'<circle cx="{x_of(b, run, mode):.1f}" cy="{y_of(ulps):.1f}" r="4" '
                       f'fill="{colour}" fill-opacity="0.7"/>')
legend_y = height - 14
svg.append(f'<circle cx="{left}" cy="{legend_y - 4}" r="4" fill="#d62728"/>'
           f'<text x="{left + 10}" y="{legend_y}">plain float atomics: a different sum in most runs</text>')
svg.append(f'<circle cx="{left + 360}" cy="{legend_y - 4}" r="4" fill="#1f77b4"/>'
           f'<text x="{left + 370}" y="{legend_y}">deterministic: the exact sum, every run</text>')
svg.append("</svg>")
out = sys.argv[1] if len(sys.argv) > 1 else "docs/demo-runs.svg"
with open(out, "w") as f:
    f.write("\n".join(svg) + "\n")
print(f"plot-demo.py: wrote {out} ({len(bins)} bins, {count} runs)")
