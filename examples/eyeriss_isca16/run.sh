#!/bin/sh
# The Eyeriss dataflow study (Chen, Emer, Sze, ISCA 2016, section VI):
# AlexNet's CONV and FC layers at batch 16 on six dataflows of one 256-PE
# array of equal storage area, and the FC layers at batches 1 to 64.
#
#   sh examples/eyeriss_isca16/run.sh [OUT]       (default OUT: ./eyeriss_isca16)
#
# Writes OUT/DATAFLOW/ and OUT/fc_DATAFLOW/ (nestmap network -o: each
# layer's mapping and stats), OUT/table.txt (printed too), OUT/energy.dat
# and OUT/fc_batch.dat with the gnuplot scripts that draw them beside them
# (energy.gp -> energy.png, fc_batch.gp -> fc_batch.png; edit and rerun
# gnuplot to restyle).  NESTMAP names the binary (default: nestmap on PATH,
# else the build tree's); THREADS the threads (default 2).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-eyeriss_isca16}
threads=${THREADS:-2}
if [ -z "${NESTMAP:-}" ]; then
    if command -v nestmap >/dev/null 2>&1; then NESTMAP=nestmap
    else NESTMAP="$here/../../nestmap"; fi
fi
mkdir -p "$out"
dataflows="ws osa osb osc nlr rs"

# The FC layers again at other batch sizes (16 is in the main run).
{
    echo "network:"
    echo "  name: AlexNet FC layers by batch"
    echo "  layers:"
    for n in 1 4 64; do
        echo "  - {name: FC6_N$n, problem: {conv2d: {N: $n, C: 256, M: 4096, P: 1, Q: 1, R: 6, S: 6}}}"
        echo "  - {name: FC7_N$n, problem: {conv2d: {N: $n, C: 4096, M: 4096, P: 1, Q: 1}}}"
        echo "  - {name: FC8_N$n, problem: {conv2d: {N: $n, C: 4096, M: 1000, P: 1, Q: 1}}}"
    done
} > "$out/fc_batch.yaml"

start=$(date +%s)
for df in $dataflows; do
    echo "mapping AlexNet (batch 16) on $df ..." >&2
    "$NESTMAP" network -q --threads "$threads" -o "$out/$df" "$here/$df.yaml" \
        "$here/alexnet_b16.yaml" > /dev/null
    "$NESTMAP" network -q --threads "$threads" -o "$out/fc_$df" "$here/$df.yaml" \
        "$out/fc_batch.yaml" > /dev/null
done
end=$(date +%s)

python3 "$here/tabulate.py" "$out" $dataflows
cp "$here/energy.gp" "$here/fc_batch.gp" "$out/"
if command -v gnuplot >/dev/null 2>&1; then
    (cd "$out" && gnuplot energy.gp && gnuplot fc_batch.gp)
    echo "charts: $out/energy.png, $out/fc_batch.png"
else
    echo "gnuplot not found: the charts' data and scripts are in $out" >&2
fi
echo "mapped 6 dataflows x (8 + 9) layers in $((end - start)) s on $threads threads"
