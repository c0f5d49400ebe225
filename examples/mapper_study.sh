#!/bin/sh
# Searches each design of the shared mapper inputs on 2 threads, first with
# the input's own `mapper:` settings, then for 8 seconds with no give-up
# rule; then proves the optimum of the eyeriss-like layer with the optimal
# strategy.  Run from the repository root after building:
# sh examples/mapper_study.sh
set -e
bin=${NESTMAP:-./nestmap}
inputs=${NESTMAP_MAPPER:-../shared/mapper}
for design in eyeriss_like simba_like simple_weight_stationary simple_output_stationary; do
    echo "== $design, the input's settings"
    "$bin" map -q --threads 2 "$inputs/$design/input.yaml" | grep -E "^EDP"
    echo "== $design, 8 s"
    "$bin" map -q --threads 2 --algorithm random --victory 0 --time-limit 8 \
        -o "out/$design" "$inputs/$design/input.yaml" | grep -E "^(Energy|Cycles|EDP)"
done
echo "== eyeriss_like, optimal"
"$bin" map --threads 2 --algorithm optimal "$inputs/eyeriss_like/input.yaml" 2>&1 >/dev/null | tail -1
