#!/bin/sh
# bench_sweep.sh — the design study's speed: a 16-point global-buffer sweep
# of Eyeriss over MobileNet-v1 on 2 threads (target: under 30 s), then the
# study of examples/glb_sweep.  Prints wall seconds and points per second.
# Usage: bench/bench_sweep.sh NESTMAP SRCDIR
bin=${1:-./nestmap}
src=${2:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-bench-sweep.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
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
run mobilenet_glb16 "$src/examples/glb_sweep/mobilenet_16.yaml" 30
run glb_study "$src/examples/glb_sweep/sweep.yaml" ""
