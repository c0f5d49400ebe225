#!/bin/sh
# bench_sparse.sh — what sparsity buys on a GPU-like design: the default
# search's best mapping (EDP, seed 0) of ResNet-50 and BERT layers on
# gpu/a100 dense, with 2:4 structured weights on the sparse tensor core
# (gpu/a100_sparse: compressed weights, zero-weight computes skipped), and
# with 50 % and 90 % random (hypergeometric) activation sparsity, either the
# MACs gating computes with a zero operand or the register file skipping the
# weight reads (and computes) of zero activations.  Prints energy,
# cycles, EDP and the speed-up and energy ratio over dense per layer, and
# the wall time of each search.  Asserts nothing.
#
# usage: bench/bench_sparse.sh [NESTMAP] [SRCDIR]
#   THREADS=N (default 2)
#   LAYERS="resnet50_res3_3x3 ..." (default: two ResNet-50 3x3 layers and
#          BERT-base's first FFN projection)
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
threads=${THREADS:-2}
layers=${LAYERS:-"resnet50_res3_3x3 resnet50_res5_3x3 bert_ffn1_24"}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-sparse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The activation variants: gpu/a100 with sparse optimizations added, in
# Timeloop's form.
# gating: the MACs gate a compute with a zero operand (it still takes its
# cycle); skipping: the register file skips reading the weights for a zero
# activation, and the compute with it (the MACs gate what is left).
for how in gating skipping; do
    python3 - "$src/arch/gpu/a100.yaml" "$how" >"$tmp/a100_act_$how.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
skip = """  - name: RegisterFile
    action_optimization:
    - type: skipping
      options:
      - target: Weights
        condition_on: [Inputs]
""" if sys.argv[2] == "skipping" else ""
text = text.replace("architecture_constraints:", f"""sparse_optimizations:
  targets:
{skip}  - name: MAC
    compute_optimization:
    - type: gating

architecture_constraints:""", 1)
sys.stdout.write(text)
PY
done

# A layer with its tensors' densities.
layer() { # name kind(dense|w24|a50|a90) -> file
    python3 - "$src/workloads/layers/$1.yaml" "$2" >"$tmp/$1.$2.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
kind = sys.argv[2]
text = re.sub(r"(?m)^  densities:\n(    .*\n)+", "", text)
dens = {"dense": "",
        "w24": "  densities:\n    Weights: {distribution: fixed_structured, density: 0.5}\n",
        "a50": "  densities:\n    Inputs: {distribution: hypergeometric, density: 0.5}\n",
        "a90": "  densities:\n    Inputs: {distribution: hypergeometric, density: 0.1}\n"}[kind]
sys.stdout.write(text.rstrip("\n") + "\n" + dens)
PY
    echo "$tmp/$1.$2.yaml"
}

field() { # key: the summary's value
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["summary"][sys.argv[2]] if d.get("valid") else "-")' "$1" "$2"
}

now() { date +%s.%N; }

printf '%-20s %-34s %12s %12s %12s %8s %8s %7s\n' layer variant energy_uJ cycles \
    edp_J_cycles speedup energy% wall_s
for l in $layers; do
    dense_c= dense_e=
    for v in "dense|a100|dense" "2:4 weights, sparse tensor core|a100_sparse|w24" \
        "50% acts, gating|act_gating|a50" "50% acts, skipping|act_skipping|a50" \
        "90% acts, gating|act_gating|a90" "90% acts, skipping|act_skipping|a90"; do
        name=${v%%|*} rest=${v#*|}
        design=${rest%%|*} kind=${rest#*|}
        case $design in
        a100 | a100_sparse) dfile=$src/arch/gpu/$design.yaml ;;
        *) dfile=$tmp/a100_$design.yaml ;;
        esac
        lf=$(layer "$l" "$kind")
        t0=$(now)
        "$nestmap" map --json -q --threads "$threads" --seed 0 --metric edp "$dfile" "$lf" \
            >"$tmp/out.json" 2>"$tmp/err" || { echo "$l $name: failed: $(head -1 "$tmp/err")"; continue; }
        t1=$(now)
        e=$(field "$tmp/out.json" energy_uj) c=$(field "$tmp/out.json" cycles)
        [ -z "$dense_c" ] && dense_c=$c dense_e=$e
        python3 -c '
import sys
l, n, e, c, dc, de, w = sys.argv[1:]
e, c, dc, de, w = float(e), float(c), float(dc), float(de), float(w)
print("%-20s %-34s %12.2f %12.0f %12.4g %7.2fx %7.1f%% %7.1f" % (l, n, e, c, e * 1e-6 * c, dc / c, 100 * e / de, w))
' "$l" "$name" "$e" "$c" "$dense_c" "$dense_e" "$(echo "$t1 - $t0" | bc)"
    done
done
