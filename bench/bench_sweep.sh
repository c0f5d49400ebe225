#!/bin/sh
# bench_sweep.sh — the design study's speed: a 16-point global-buffer sweep
# of Eyeriss over MobileNet-v1 on 2 threads (target: under 13.6 s), then the
# study of examples/glb_sweep.  Prints wall seconds and points per second.
# With COLD=1 each sweep runs again with `warm: false` (every point searched
# cold, as `map` searches) and the worst ratio of a point's EDP to its cold
# EDP is printed.
# Usage: bench/bench_sweep.sh NESTMAP SRCDIR
bin=${1:-./nestmap}
src=${2:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-bench-sweep.XXXXXX") || exit 1
cold_files=""
trap 'rm -rf "$tmp" $cold_files' EXIT
run() {
    start=$(date +%s.%N)
    "$bin" sweep -q --threads 2 -o "$tmp/$1" "$2" || exit 1
    end=$(date +%s.%N)
    n=$(($(wc -l <"$tmp/$1/points.csv") - 1))
    awk -v s="$start" -v e="$end" -v n="$n" -v name="$1" -v target="$3" 'BEGIN {
        t = e - s
        printf "sweep %-24s %3d points  %7.2f s  %6.3f points/s", name, n, t, n / t
        if (target != "") printf "  (target < %s s: %s)", target, t < target ? "met" : "MISSED"
        printf "\n" }'
}
# The sweep file with `warm: false`, beside it (its paths are relative to it).
cold() {
    f="$(dirname "$2")/.cold-$$-$(basename "$2")"
    cold_files="$cold_files $f"
    sed 's/^sweep:$/sweep:\n  warm: false/' "$2" >"$f" || exit 1
    run "$1" "$f" ""
    awk -F, 'NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) c[$i] = i; else cold[$1] = $c["edp_j_s"]; next }
        FNR > 1 { r = $c["edp_j_s"] / cold[$1]; if (r > worst) worst = r; n++; if (r > 1 + 1e-9) worse++ }
        END { printf "      warm over cold EDP: worst %.4f, %d of %d points worse\n", worst, worse, n }' \
        "$tmp/$1/points.csv" "$tmp/${1%_cold}/points.csv"
}
run mobilenet_glb16 "$src/examples/glb_sweep/mobilenet_16.yaml" 13.6
[ -n "$COLD" ] && cold mobilenet_glb16_cold "$src/examples/glb_sweep/mobilenet_16.yaml"
run glb_study "$src/examples/glb_sweep/sweep.yaml" ""
[ -n "$COLD" ] && cold glb_study_cold "$src/examples/glb_sweep/sweep.yaml"
exit 0
