#!/bin/sh
# bench_eyeriss.sh — times the Eyeriss dataflow study
# (examples/eyeriss_isca16/run.sh: AlexNet's 8 layers at batch 16 and its FC
# layers at batches 1, 4 and 64, on six dataflows) and prints its table.
# Target: under 5 minutes on 2 threads.
#   bench/bench_eyeriss.sh [NESTMAP [SRCDIR]]      (THREADS: default 2)
set -eu
nestmap=${1:-./nestmap}
src=${2:-.}
case $nestmap in /*) ;; *) nestmap="$(pwd)/$nestmap" ;; esac
out=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-eyeriss.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
NESTMAP="$nestmap" THREADS="${THREADS:-2}" sh "$src/examples/eyeriss_isca16/run.sh" "$out/study"
end=$(date +%s)
echo "bench_eyeriss: the study took $((end - start)) s on ${THREADS:-2} threads (target: under 300 s)"
