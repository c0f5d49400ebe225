#!/bin/sh
# bench_study.sh — the array study of examples/array_study (72 points: three
# array sizes linked in a zip, eight buffer sizes, three DRAM types, over
# ResNet-50 and BERT-base at sequence 128, within an area budget), on 2
# threads.  Prints the wall time, points per second and the sweep's summary;
# the directory is kept (OUT, default ./array_study) for its plots and for
# examples/array_study/study.py, which loads it into pandas.
# Usage: bench/bench_study.sh NESTMAP SRCDIR [OUT] [SEARCH OPTIONS...]
bin=${1:-./nestmap}
src=${2:-.}
out=${3:-array_study}
shift 3 2>/dev/null
# The sweep file by its absolute path, as study.py names it: the directory
# then resumes from Python too (the resume fingerprint holds the path).
sweep=$(cd "$src/examples/array_study" && pwd)/sweep.yaml
start=$(date +%s.%N)
"$bin" sweep -q --threads 2 "$@" -o "$out" "$sweep" || exit 1
end=$(date +%s.%N)
n=$(($(wc -l <"$out/points.csv") - 1))
awk -v s="$start" -v e="$end" -v n="$n" 'BEGIN {
    printf "array study: %d points in %.1f s on 2 threads (%.3f points/s)\n", n, e - s, n / (e - s) }'
