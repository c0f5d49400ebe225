#!/bin/sh
# bench_imperfect.sh — where residual factors help: the best mapping found
# with perfect factors only and with residual factors too (--imperfect), for
# the same search budget, on layers whose sizes factor badly (3 input
# channels, 7x7 outputs, 1000 classes, 11008 = 2^8 x 43) and the designs of
# arch/.  Prints EDP and utilization side by side; asserts nothing.
#
# usage: bench/bench_imperfect.sh [NESTMAP] [SRCDIR]
#   EVALS=N   candidates per search (default 400000); THREADS=N (default 2)
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
evals=${EVALS:-400000}
threads=${THREADS:-2}

designs="eyeriss/eyeriss simba/simba systolic/systolic_16x16 simple/weight_stationary"
layers="resnet50_conv1 resnet50_res5_3x3 resnet50_fc1000 llama7b_ffn_down"

# The summary's value of a JSON key (the last occurrence), or "-".
field() {
    v=$(grep "\"$1\"" | tail -1 | sed 's/.*: *//; s/,$//')
    [ -n "$v" ] && echo "$v" || echo "-"
}

search() { # design layer [--imperfect]
    "$nestmap" map ${3:-} --json -q --threads "$threads" --seed 0 --algorithm hybrid \
        --max-evals "$evals" --victory 0 --timeout 0 --metric edp \
        "$src/arch/$1.yaml" "$src/workloads/layers/$2.yaml" 2>/dev/null
}

echo "perfect vs imperfect factorization: hybrid search, $evals candidates each, seed 0, $threads threads"
printf '%-26s %-18s %12s %12s %8s %7s %7s\n' design layer "EDP perfect" "EDP imperf" "gain" "util%" "util%"
printf '%-26s %-18s %12s %12s %8s %7s %7s\n' "" "" "(J*cycle)" "(J*cycle)" "" perfect imperf
for d in $designs; do
    for l in $layers; do
        a=$(search "$d" "$l")
        b=$(search "$d" "$l" --imperfect)
        ea=$(echo "$a" | field edp_j_cycles); eb=$(echo "$b" | field edp_j_cycles)
        ua=$(echo "$a" | field utilization_pct); ub=$(echo "$b" | field utilization_pct)
        gain=$(awk -v a="$ea" -v b="$eb" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-";
                                                    else printf "%.3fx", a / b }')
        printf '%-26s %-18s %12.5g %12.5g %8s %7.1f %7.1f\n' "$d" "$l" "$ea" "$eb" "$gain" "$ua" "$ub"
    done
done
