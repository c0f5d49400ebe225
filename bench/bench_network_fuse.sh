#!/bin/sh
# bench_network_fuse.sh — `nestmap network --fuse` on every network of
# workloads/networks/ on three designs (eyeriss/eyeriss, simba/simba,
# gpu/h100; EDP, seed 0, 2 threads).  Per network and design: the runs of
# layers that may fuse (each reading the whole output of the one before, a
# run's second perhaps through windows of its first) and how many are used
# (the search fused them, and no overlapping run gains more), the
# network's DRAM words, energy and EDP
# fused over unfused, and the wall time of the whole command (layer by
# layer, then fused).  And the check the fused model owes the single-Einsum
# one: every layer's best mapping evaluated as a chain's operation alone
# (in a chain of its own and in its run, but a run's first layer grown to
# the windows after it) gives the layer's own figures
# exactly; the "equal" column counts those that do, "checked" those
# evaluated, and a row where they differ says so.  Asserts nothing.  Writes
# the rows to bench/results/network_fuse.csv (RESULTS=FILE to move it).
#
# usage: bench/bench_network_fuse.sh [NESTMAP] [SRCDIR]
#   THREADS=N (default 2); DESIGNS="..." and NETWORKS="..." to narrow it
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
threads=${THREADS:-2}
out=${RESULTS:-$src/bench/results/network_fuse.csv}
designs=${DESIGNS:-eyeriss/eyeriss simba/simba gpu/h100}
networks=${NETWORKS:-$(for f in "$src"/workloads/networks/*.yaml; do basename "$f" .yaml; done)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-nfuse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "design,network,layers,runs,fused_runs,checked,equal,words_ratio,energy_ratio,edp_ratio,unfused_uj,fused_uj,seconds,fuse_seconds" >"$out"
printf '%-16s %-18s %6s %5s %5s %9s %8s %8s %8s %11s %8s %8s\n' design network layers runs fused \
    "equal" words energy EDP "unfused uJ" seconds "fusing"
for design in $designs; do
    for net in $networks; do
        t0=$(date +%s.%N)
        if ! "$nestmap" network -q --fuse --json --threads "$threads" "$src/arch/$design.yaml" \
            "$src/workloads/networks/$net.yaml" >"$tmp/out.json" 2>"$tmp/err"; then
            # exit 1: some layer has no mapping (the rest are still counted)
            [ -s "$tmp/out.json" ] || { echo "$design $net: failed"; cat "$tmp/err"; continue; }
        fi
        t1=$(date +%s.%N)
        python3 - "$tmp/out.json" "$design" "$net" "$(echo "$t1 - $t0" | bc)" "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
design, net, secs, out = sys.argv[2:6]
f = d["fusion"]
u, b = f["unfused"], f["fused"]
r = lambda a, c: a / c if c else 1.0
nl = len(d["layers"])
runs = len(f["runs"])
fused = sum(1 for x in f["runs"] if x.get("fused"))
row = [design, net, nl, runs, fused, f["checked"], f["equal"],
       "%.4f" % r(b["backing_accesses"], u["backing_accesses"]),
       "%.4f" % r(b["energy"], u["energy"]), "%.4f" % r(b["edp"], u["edp"]),
       "%.1f" % (u["energy"] * 1e-6), "%.1f" % (b["energy"] * 1e-6), "%.1f" % float(secs),
       "%.1f" % f["seconds"]]
open(out, "a").write(",".join(str(x) for x in row) + "\n")
print("%-16s %-18s %6d %5d %5d %4d/%-4d %8s %8s %8s %11s %8s %8s" % (
    design, net, nl, runs, fused, f["equal"], f["checked"], row[7], row[8], row[9], row[10],
    row[12], row[13]))
if f["equal"] != f["checked"]:
    print("  %d layer mappings differ as a chain's operation" % (f["checked"] - f["equal"]))
PY
    done
done
