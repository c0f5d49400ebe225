#!/bin/sh
# bench_optimal.sh — how far `optimal` gets on real layers: every distinct
# convolution of ResNet-50 (workloads/networks/resnet50.yaml, the FC layer
# left out) under the eyeriss-like mapper input's architecture and
# constraints (../shared/mapper/eyeriss_like), each searched by
# `--algorithm optimal` on THREADS threads with a LIMIT-second wall-clock
# limit.  Prints per layer the wall time, whether the run finished (proved
# its best optimal) and, when it did not, the proven gap (best EDP over the
# lower bound); the default search's EDP beside it.  Asserts nothing.
#
# usage: bench/bench_optimal.sh [NESTMAP] [SRCDIR]
#   LIMIT=S (default 60)   THREADS=N (default 2)
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
limit=${LIMIT:-60}
threads=${THREADS:-2}
input="$src/../shared/mapper/eyeriss_like/input.yaml"
if [ ! -f "$input" ]; then
    echo "bench_optimal: $input not found (the shared mapper inputs); skipped"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One problem file per distinct conv2d of the network, named after its
# first layer.
grep -E '^  - \{name: .*conv2d' "$src/workloads/networks/resnet50.yaml" | grep -v 'name: fc' |
    sed 's/^  - {name: \([^,]*\),.*problem: \({conv2d: {[^}]*}}\)}$/\1 \2/' |
    awk '!seen[$0 ~ / / ? substr($0, index($0, " ")) : $0]++' |
    while read -r name problem; do
        printf 'problem: %s\n' "$problem" >"$tmp/$name.yaml"
        echo "$name"
    done >"$tmp/layers"

summary() { # JSON on stdin: wall, proven, gap, edp
    python3 -c '
import json, sys
d = json.load(sys.stdin)
s, m = d["search"], d["summary"]
lb = s.get("lower_bound")
best = m["energy_pj"] * m["cycles"]
gap = best / lb if lb else float("nan")
print("%.1f %s %.3f %.4g" % (s["wall_seconds"], "yes" if s.get("proven_optimal") else "no", gap,
                             m["edp_j_cycles"]))'
}

echo "optimal on ResNet-50's distinct convolutions, eyeriss-like constraints, $threads threads, limit $limit s"
printf '%-12s %9s %8s %8s %12s %12s\n' layer "time (s)" proven gap "EDP optimal" "EDP default"
while read -r name; do
    o=$("$nestmap" map -q --json --threads "$threads" --algorithm optimal --time-limit "$limit" \
        "$input" "$tmp/$name.yaml" 2>/dev/null | summary)
    d=$("$nestmap" map -q --json --threads "$threads" "$input" "$tmp/$name.yaml" 2>/dev/null |
        summary | awk '{print $4}')
    set -- $o
    printf '%-12s %9s %8s %8s %12s %12s\n' "$name" "$1" "$2" "$3" "$4" "$d"
done <"$tmp/layers"
