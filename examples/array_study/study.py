#!/usr/bin/env python3
"""The array study (sweep.yaml beside this file) from Python, as one would
run it in a notebook: run the sweep, load its points into pandas, and ask
the questions of the study.

    python3 examples/array_study/study.py [OUT_DIR]

Runs the sweep into OUT_DIR (default: array_study; an unfinished one there
is resumed), then prints the best point within the area budget for energy
and for EDP, the Pareto front, and how energy splits over the levels at the
lowest-EDP point.  Needs the nestmap module (make install) and pandas
(Debian: python3-pandas).
"""

import os
import sys

import nestmap

HERE = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else "array_study"
resume = os.path.exists(os.path.join(out, "points.csv"))

# 1. The sweep: the library's driver, GIL released; the files are those of
#    `nestmap sweep --threads 2 -o OUT sweep.yaml`.
study = nestmap.sweep(os.path.join(HERE, "sweep.yaml"), out=out, resume=resume, threads=2)
points = study["points"]                     # points.csv as a DataFrame
print(f"{len(points)} points; written to {out}/ (plots in {out}/plots/)")

# 2. Only what was mapped and fits the 4 mm^2 budget.
ok = points[(points["status"] == "ok") & points["over_budget"].isna()]
print(f"{len(ok)} mapped within the area budget")
cols = ["MAC.meshX", "Buffer.depth", "DRAM.type", "energy_uj", "seconds", "edp_j_s", "area_mm2",
        "power_w"]
print("\nlowest energy within budget:")
print(ok.nsmallest(3, "energy_uj")[cols].to_string(index=False))
print("\nlowest EDP within budget:")
print(ok.nsmallest(3, "edp_j_s")[cols].to_string(index=False))

# 3. The Pareto front nestmap marked (energy x time x area), from sweep.json.
front = [p["point"] for p in study["sweep"]["points"] if p["pareto"]]
print(f"\nPareto front: {len(front)} points")
print(points[points["point"].isin(front)][cols].to_string(index=False))

# 4. Where the energy goes at the lowest-EDP point: the energy_uj.LEVEL
#    columns, as shares.
best = ok.nsmallest(1, "edp_j_s").iloc[0]
levels = [c for c in points.columns if c.startswith("energy_uj.")]
print("\nenergy by level at the lowest-EDP point:")
for c in levels:
    print(f"  {c[len('energy_uj.'):]:14s} {100 * best[c] / best['energy_uj']:5.1f} %")

# 5. The two networks apart: WORKLOAD.energy_uj and WORKLOAD.cycles.
print("\nper network at that point:")
for w in ("resnet50", "bert_base_seq128"):
    print(f"  {w:18s} {best[w + '.energy_uj']:12.1f} uJ {best[w + '.cycles']:14.0f} cycles")
