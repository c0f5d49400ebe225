#!/bin/sh
# Maps every shipped network (workloads/networks) onto every shipped design
# (arch/*/*.yaml and the teaching design examples/pe_array.yaml), each with
# its own `mapper:` settings, on 2 threads.  Prints each run's exit status,
# wall time and total line (MACs, energy in uJ, cycles, utilization %,
# pJ/MAC); the per-layer tables, layers.csv, network.json and every layer's
# map.yaml go to out/network/DESIGN/NETWORK/.  Run from the repository root
# after building:
#   sh examples/network_study.sh
# Exits 1 if any run fails.
bin=${NESTMAP:-./nestmap}
status=0
for design in arch/*/*.yaml examples/pe_array.yaml; do
    name=$(basename "$design" .yaml)
    for net in workloads/networks/*.yaml; do
        n=$(basename "$net" .yaml)
        start=$(date +%s)
        "$bin" network -q --threads 2 -o "out/network/$name/$n" "$design" "$net" >"out.$$" 2>&1
        rc=$?
        [ "$rc" -ne 0 ] && status=1
        printf '%-20s %-18s exit %d  %4ds  %s\n' "$name" "$n" "$rc" "$(($(date +%s) - start))" \
            "$(grep -E '^total' "out.$$" | tr -s ' ')"
    done
done
rm -f "out.$$"
exit $status
