#!/bin/sh
# bench_study.sh — a design study of examples/, on 2 threads: by default the
# array study of examples/array_study (72 points: three array sizes linked
# in a zip, eight buffer sizes, three DRAM types, over ResNet-50 and
# BERT-base at sequence 128, within an area budget); with
# STUDY=design_space the 1,000-point study of examples/design_space (target:
# under 10 minutes), followed by its distribution of proven gaps (gaps.sh).
# Prints the wall time, points per second and the sweep's summary; the
# directory is kept (OUT, default ./STUDY) for its plots and, for the array
# study, for examples/array_study/study.py, which loads it into pandas.
# Usage: [STUDY=NAME] bench/bench_study.sh NESTMAP SRCDIR [OUT] [SEARCH OPTIONS...]
study=${STUDY:-array_study}
bin=${1:-./nestmap}
src=${2:-.}
out=${3:-$study}
shift 3 2>/dev/null
case $study in
array_study) target="" ;;
design_space) target=600 ;;
*) echo "bench_study.sh: STUDY is array_study or design_space" >&2; exit 2 ;;
esac
# The sweep file by its absolute path, as study.py names it: the directory
# then resumes from Python too (the resume fingerprint holds the path).
sweep=$(cd "$src/examples/$study" && pwd)/sweep.yaml
start=$(date +%s.%N)
"$bin" sweep -q --threads 2 "$@" -o "$out" "$sweep" || exit 1
end=$(date +%s.%N)
n=$(($(wc -l <"$out/points.csv") - 1))
awk -v s="$start" -v e="$end" -v n="$n" -v name="$study" -v target="$target" 'BEGIN {
    t = e - s
    gsub("_", " ", name)
    printf "%s: %d points in %.1f s on 2 threads (%.3f points/s)", name, n, t, n / t
    if (target != "") printf "  (target < %s s: %s)", target, t < target ? "met" : "MISSED"
    printf "\n" }'
if [ "$study" = design_space ]; then
    sh "$src/examples/design_space/gaps.sh" "$out"
fi
exit 0
