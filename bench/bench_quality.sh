#!/bin/sh
# bench_quality.sh — how good the default search is on the designs of arch/:
# every design x a layer set spanning CNNs and transformers.  For each cell
# it runs the default search (the design's own `mapper:` settings, THREADS
# threads, seed 0, EDP as the metric: every design but teaching/pe_array
# names it) and prints its EDP, cycles over the roofline bound,
# utilization and wall time; then SEEDS searches with FACTOR times the
# budget (FACTOR x as many candidates as the default search proposed, no
# victory or timeout rule, seeds FIRST_SEED .. FIRST_SEED+SEEDS-1) and
# prints the best EDP any of them found, and the default's EDP over it.
# Asserts nothing.
#
# usage: bench/bench_quality.sh [NESTMAP] [SRCDIR]
#   THREADS=N (default 2)  SEEDS=N (default 5; 0 runs the default search only)
#   FACTOR=N (default 20)  FIRST_SEED=N (default 1: seeds of the long searches
#   start there, so that runs on several machines can split the seeds)
#   DESIGNS="eyeriss/eyeriss gpu/h100"  (default: every arch/*/*.yaml)
#   LAYERS="r50_conv1 bert_qkv"         (default: the whole set below)
#   CSV=FILE  also write the rows as CSV
#   RESULTS=FILE  keep the long searches' results across runs: rows
#     design,layer,seed,factor,edp,build.  A (cell, seed, FACTOR) already in
#     FILE is not run again; new ones are appended (build: BUILD, default the
#     git commit of SRCDIR); the best is over every seed FILE holds for the
#     cell at FACTOR, and the seeds column says how many.
#     bench/results/quality_20x.csv holds ours.
#   OPTIMAL=S  instead: `--algorithm optimal --time-limit S` on each cell
#     (THREADS threads) and its outcome: proved optimal or not, the proven
#     gap (best EDP over the lower bound, 1 when proved), its EDP and wall
#     time.  With OPTIMAL_RESULTS=FILE the rows
#     design,layer,limit,threads,proven,gap,edp,seconds,build are kept
#     across runs (a cell at the same limit and threads is not run again),
#     so that the matrix can be run in parts; bench/results/optimal_60s.csv
#     holds ours.
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
threads=${THREADS:-2}
seeds=${SEEDS:-5}
first=${FIRST_SEED:-1}
factor=${FACTOR:-20}
csv=${CSV:-}
results=${RESULTS:-}
build=${BUILD:-$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo -)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
long=${results:-$tmp/long} # the long searches' rows, this run's or kept across runs

# The layer set: name and problem.  ResNet-50 (workloads/networks/resnet50.yaml):
# conv1, and per stage its 3x3 conv and the 1x1 reduction of its repeated
# bottlenecks (conv2_xa .. conv5_xa);
# MobileNet-v1's dw4/pw4 (mobilenet_v1.yaml); BERT-base at sequence 512: the
# Q/K/V projection and the FFN's up projection (bert_base_seq512.yaml);
# LLaMA-7B's FFN gate/up projection over a 2048-token prefill and for one
# decode token (llama7b_prefill.yaml, llama7b_decode.yaml).
cat >"$tmp/layers" <<'EOF'
r50_conv1       {conv2d: {C: 3, M: 64, P: 112, Q: 112, R: 7, S: 7, stride: 2}}
r50_conv2_3x3   {conv2d: {C: 64, M: 64, P: 56, Q: 56, R: 3, S: 3}}
r50_conv2_1x1   {conv2d: {C: 256, M: 64, P: 56, Q: 56}}
r50_conv3_3x3   {conv2d: {C: 128, M: 128, P: 28, Q: 28, R: 3, S: 3}}
r50_conv3_1x1   {conv2d: {C: 512, M: 128, P: 28, Q: 28}}
r50_conv4_3x3   {conv2d: {C: 256, M: 256, P: 14, Q: 14, R: 3, S: 3}}
r50_conv4_1x1   {conv2d: {C: 1024, M: 256, P: 14, Q: 14}}
r50_conv5_3x3   {conv2d: {C: 512, M: 512, P: 7, Q: 7, R: 3, S: 3}}
r50_conv5_1x1   {conv2d: {C: 2048, M: 512, P: 7, Q: 7}}
mbv1_dw4        {depthwise: {C: 128, P: 56, Q: 56, R: 3, S: 3}}
mbv1_pw4        {conv2d: {C: 128, M: 128, P: 56, Q: 56}}
bert_qkv        {conv2d: {C: 768, M: 768, P: 512}}
bert_ffn_up     {conv2d: {C: 768, M: 3072, P: 512}}
llama7b_ffn     {conv2d: {C: 4096, M: 11008, P: 2048}}
llama7b_gemv    {conv2d: {C: 4096, M: 11008, P: 1}}
EOF
while read -r name problem; do
    printf 'problem: %s\n' "$problem" >"$tmp/$name.yaml"
done <"$tmp/layers"

designs=${DESIGNS:-$(cd "$src/arch" && ls */*.yaml | sed 's/\.yaml$//')}
layers=${LAYERS:-$(awk '{print $1}' "$tmp/layers")}

# One search's figures from its JSON: EDP, cycles/bound, utilization %,
# wall seconds, candidates proposed.
figures() {
    python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("- - - - 0"); sys.exit(0)
m, s, b = d["summary"], d["search"], d.get("bound", {})
print("%.6g %.3f %.1f %.2f %d" % (m["edp_j_cycles"], b.get("cycles_over_bound", float("nan")),
      m["utilization_pct"], s["wall_seconds"], s["proposed"]))'
}

search() { # design layer [options...]
    d=$1 l=$2
    shift 2
    "$nestmap" map -q --json --threads "$threads" --metric edp "$@" "$src/arch/$d.yaml" "$tmp/$l.yaml" \
        2>/dev/null | figures
}

# The EDP the rows hold for a cell and seed, if any.
recorded() { # design layer seed
    awk -F, -v d="$1" -v l="$2" -v s="$3" -v f="$factor" \
        '$1 == d && $2 == l && $3 == s && $4 == f { print $5; exit }' "$long"
}

if [ -n "${OPTIMAL:-}" ]; then
    ores=${OPTIMAL_RESULTS:-$tmp/optimal}
    [ -s "$ores" ] || echo "design,layer,limit,threads,proven,gap,edp,seconds,build" >"$ores"
    echo "optimal, ${OPTIMAL} s limit, $threads threads${OPTIMAL_RESULTS:+ (rows kept in $ores)}"
    printf '%-26s %-14s %7s %9s %11s %7s\n' design layer proven "gap" "EDP (J*cyc)" "time s"
    for d in $designs; do
        for l in $layers; do
            row=$(awk -F, -v d="$d" -v l="$l" -v t="$OPTIMAL" -v n="$threads" \
                '$1 == d && $2 == l && $3 == t && $4 == n { print; exit }' "$ores")
            if [ -z "$row" ]; then
                row=$("$nestmap" map -q --json --threads "$threads" --metric edp --algorithm optimal \
                    --time-limit "$OPTIMAL" "$src/arch/$d.yaml" "$tmp/$l.yaml" 2>/dev/null |
                    python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    s, m = d["search"], d["summary"]
    gap = 1.0 if s["proven_optimal"] else s.get("gap", float("nan"))
    print("%s,%.6g,%.6g,%.2f" % ("yes" if s["proven_optimal"] else "no", gap,
                                 m["edp_j_cycles"], s["wall_seconds"]))
except (ValueError, KeyError):
    print("-,-,-,-")')
                row="$d,$l,$OPTIMAL,$threads,$row,$build"
                echo "$row" >>"$ores"
            fi
            echo "$row" | awk -F, '{ printf "%-26s %-14s %7s %9s %11s %7s\n", $1, $2, $5, $6, $7, $8 }'
        done
    done
    exit 0
fi

echo "default search vs $seeds seeds (from $first) of a ${factor}x budget${results:+, and the seeds $results holds}, $threads threads"
printf '%-26s %-14s %11s %8s %6s %7s %11s %5s %8s\n' design layer "EDP (J*cyc)" cyc/bnd \
    util% "time s" "best ${factor}x" seeds "default/best"
[ -n "$csv" ] && echo "design,layer,edp,cycles_over_bound,utilization_pct,seconds,best_edp,seeds,ratio" >"$csv"
[ -s "$long" ] || echo "design,layer,seed,factor,edp,build" >"$long"
for d in $designs; do
    for l in $layers; do
        set -- $(search "$d" "$l")
        edp=$1 cb=$2 util=$3 secs=$4 proposed=$5
        s=$first
        while [ "$s" -lt $((first + seeds)) ] && [ "$edp" != - ]; do
            if [ -z "$(recorded "$d" "$l" "$s")" ]; then
                e=$(search "$d" "$l" --seed "$s" --max-evals $((proposed * factor)) --victory 0 \
                    --timeout 0 | awk '{print $1}')
                echo "$d,$l,$s,$factor,$e,$build" >>"$long"
            fi
            s=$((s + 1))
        done
        # the best over every seed the rows hold
        set -- $(awk -F, -v d="$d" -v l="$l" -v f="$factor" '$1 == d && $2 == l && $4 == f &&
                $5 != "-" && !seen[$3]++ { n++; if (best == "" || $5 + 0 < best + 0) best = $5 }
                END { print (n ? best : "-"), n + 0 }' "$long")
        best=$1 nseeds=$2
        ratio=$(awk -v a="$edp" -v b="$best" 'BEGIN { if (a == "-" || b == "-") print "-";
                                                      else printf "%.3f", a / b }')
        printf '%-26s %-14s %11s %8s %6s %7s %11s %5s %8s\n' "$d" "$l" "$edp" "$cb" "$util" \
            "$secs" "$best" "$nseeds" "$ratio"
        [ -n "$csv" ] && echo "$d,$l,$edp,$cb,$util,$secs,$best,$nseeds,$ratio" >>"$csv"
    done
done
exit 0
