#!/bin/sh
# Maps every shipped network onto every design: the teaching design
# examples/pe_array.yaml and, when present, the four designs of
# ../shared/mapper (eyeriss-like, simba-like, weight- and output-stationary),
# each with its own `mapper:` settings, on 2 threads.  Prints each run's
# total line (MACs, energy in uJ, cycles, utilization, pJ/MAC) and its wall
# time; the per-layer tables go to out/network/DESIGN/NETWORK/.  The shared
# designs search 128 lanes per layer: the whole matrix takes about half an
# hour on 2 cores.  Run from the repository root after building:
#   sh examples/network_study.sh
bin=${NESTMAP:-./nestmap}
inputs=${NESTMAP_MAPPER:-../shared/mapper}
designs="examples/pe_array.yaml"
for d in eyeriss_like simba_like simple_weight_stationary simple_output_stationary; do
    if [ -f "$inputs/$d/input.yaml" ]; then designs="$designs $inputs/$d/input.yaml"; fi
done
status=0
for design in $designs; do
    name=$(basename "$(dirname "$design")")
    [ "$name" = examples ] && name=pe_array
    for net in workloads/networks/*.yaml; do
        n=$(basename "$net" .yaml)
        start=$(date +%s)
        "$bin" network -q --threads 2 -o "out/network/$name/$n" "$design" "$net" >"out.$$" 2>&1
        rc=$?
        [ "$rc" -ne 0 ] && status=1
        printf '%-26s %-18s exit %d  %4ds  %s\n' "$name" "$n" "$rc" "$(($(date +%s) - start))" \
            "$(grep -E '^total' "out.$$" | tr -s ' ')"
    done
done
rm -f "out.$$"
exit $status
