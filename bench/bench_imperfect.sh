#!/bin/sh
# bench_imperfect.sh — where residual factors help: the default search's
# best mapping with perfect factors only and with residual factors too
# (--imperfect), on layers whose sizes factor badly (3 input channels, 7x7
# outputs, 1000 classes, 11008 = 2^8 x 43) and the designs of arch/.  With
# --imperfect the default search runs as without it and then climbs on from
# its chains' results in the enlarged space, so its EDP is never worse; the
# table shows by how much it is better, the utilization of both and the
# wall times.  Asserts nothing.
#
# usage: bench/bench_imperfect.sh [NESTMAP] [SRCDIR]
#   THREADS=N (default 2)
#   DESIGNS="eyeriss/eyeriss gpu/h100"  (default: every arch/*/*.yaml)
#   EXTRA="--algorithm hybrid --no-refine ..."  more options for both searches
#   OUT=DIR  write each --imperfect search's results (-o, with Timeloop's
#            file names too) to DIR/DESIGN/LAYER, e.g. to check them with
#            Timeloop's timeloop-model
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
threads=${THREADS:-2}
extra=${EXTRA:-}
out=${OUT:-}

designs=${DESIGNS:-$(cd "$src/arch" && ls */*.yaml | sed 's/\.yaml$//')}
layers="resnet50_conv1 resnet50_res5_3x3 resnet50_fc1000 llama7b_ffn_down"

# The summary's value of a JSON key (the last occurrence), or "-".
field() {
    v=$(grep "\"$1\"" | tail -1 | sed 's/.*: *//; s/,$//')
    [ -n "$v" ] && echo "$v" || echo "-"
}

now() { date +%s.%N; }

search() { # design layer [options]
    d=$1 l=$2
    shift 2
    # shellcheck disable=SC2086 # EXTRA holds several options
    "$nestmap" map "$@" $extra --json -q --threads "$threads" --seed 0 --metric edp \
        "$src/arch/$d.yaml" "$src/workloads/layers/$l.yaml" 2>/dev/null
}

echo "perfect vs imperfect factorization: default search, seed 0, $threads threads${extra:+, $extra}"
printf '%-26s %-18s %11s %11s %7s %6s %6s %6s %6s\n' design layer "EDP perfect" "EDP imperf" \
    gain "util%" "util%" time time
printf '%-26s %-18s %11s %11s %7s %6s %6s %6s %6s\n' "" "" "(J*cycle)" "(J*cycle)" "" perf \
    imperf "perf" "imperf"
for d in $designs; do
    for l in $layers; do
        t0=$(now)
        a=$(search "$d" "$l")
        t1=$(now)
        if [ -n "$out" ]; then
            mkdir -p "$out/$d/$l"
            b=$(search "$d" "$l" --imperfect -o "$out/$d/$l" --timeloop-names)
        else
            b=$(search "$d" "$l" --imperfect)
        fi
        t2=$(now)
        ea=$(echo "$a" | field edp_j_cycles); eb=$(echo "$b" | field edp_j_cycles)
        ua=$(echo "$a" | field utilization_pct); ub=$(echo "$b" | field utilization_pct)
        awk -v d="$d" -v l="$l" -v a="$ea" -v b="$eb" -v ua="$ua" -v ub="$ub" \
            -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
            gain = (a == "-" || b == "-" || b == 0) ? "-" : sprintf("%.3fx", a / b)
            printf "%-26s %-18s %11.5g %11.5g %7s %6.1f %6.1f %5.1fs %5.1fs\n",
                   d, l, a, b, gain, ua, ub, t1 - t0, t2 - t1 }'
    done
done
