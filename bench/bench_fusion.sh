#!/bin/sh
# bench_fusion.sh — what fusing buys: `nestmap map` on chains of operations
# (workloads/fused/), each operation alone against the best fused cut the
# search finds (EDP, seed 0), on gpu/h100 and simba/simba.  Attention of
# BERT-base at sequence 512, 2048 and 8192 and of LLaMA-7B at 2048 (as
# written, and with its causal mask), and the two feed-forward blocks.  Prints, per run: the backing-store words and
# energy unfused and fused, their ratios, the groups chosen, the wall time;
# for attention also FlashAttention's traffic order (Dao et al., NeurIPS
# 2022, Theorem 2: Theta(N^2 d^2 / M) HBM accesses for sequence N, head
# dimension d, on-chip memory M), written as 4 N d + N^2 d^2 / M words per
# head (the compulsory Q, K, V and O, plus that term with constant 1) with M
# the fusion level's capacity in words.  Asserts nothing.  Writes the rows
# to bench/results/fusion.csv (RESULTS=FILE to move it).
#
# The attention blocks with the softmax as its parts and in FlashAttention's
# online form (bert_base_attention_parts, bert_base_flash_attention) run at
# 2048 and 8192 tokens.
#
# usage: bench/bench_fusion.sh [NESTMAP] [SRCDIR]
#   THREADS=N (default 2); ONLY="WORKLOAD ..." runs those workloads only
#   (appending to RESULTS)
set -u
nestmap=${1:-./nestmap}
src=${2:-.}
threads=${THREADS:-2}
out=${RESULTS:-$src/bench/results/fusion.csv}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-fusion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The fusion level's words: the H100's L2 (409600 rows of 1024 bits, 16-bit
# words) and Simba's global buffer (2048 rows of 256 bits, 8-bit words).
capacity() {
    case $1 in
    gpu/h100) echo 26214400 ;;
    simba/simba) echo 65536 ;;
    esac
}

only=${ONLY:-}
[ -n "$only" ] && [ -s "$out" ] ||
    echo "design,workload,sets,heads,seq,head_dim,unfused_words,fused_words,words_ratio,unfused_uj,fused_uj,energy_ratio,edp_ratio,fa_order_words,groups,seconds" >"$out"
printf '%-12s %-26s %14s %14s %7s %12s %12s %7s %7s %14s  %s\n' design workload \
    "unfused words" "fused words" ratio "unfused uJ" "fused uJ" ratio "EDP" "FA order" groups
run() {
    design=$1; wl=$2; sets=$3; h=$4; n=$5; d=$6
    case " $only " in "  " | *" $wl "*) ;; *) return ;; esac
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # the sets are words
    if ! "$nestmap" map -q --json --threads "$threads" $sets "$src/arch/$design.yaml" \
        "$src/workloads/fused/$wl.yaml" >"$tmp/out.json" 2>"$tmp/err"; then
        echo "$design $wl $sets: failed"; cat "$tmp/err"; return
    fi
    t1=$(date +%s.%N)
    python3 - "$tmp/out.json" "$design" "$wl" "$sets" "$h" "$n" "$d" "$(capacity "$design")" \
        "$(echo "$t1 - $t0" | bc)" "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
design, wl, sets, h, n, d, cap, secs, out = sys.argv[2:11]
b = r["best"]["total"]
u = r["unfused"]["total"] if r["unfused"] else None  # (no mapping of one alone)
groups = " | ".join("+".join(g["ops"]) + ("@" + g["fuse_at"] if g["fuse_at"] else "")
                    for g in r["best"]["groups"])
fa = ""
if int(n):
    h, n, d, cap = int(h), int(n), int(d), int(cap)
    fa = str(h * (4 * n * d + (n * n * d * d) // cap))
def ratio(a, b):
    return "%.3f" % (a / b) if u else "-"
edp = ratio(b["energy"] * b["cycles"], u["energy"] * u["cycles"]) if u else "-"
print("%-12s %-26s %14s %14d %7s %12s %12.1f %7s %7s %14s  %s (%.1f s)" % (
    design.split("/")[1], wl + (" " + sets.replace("--set problem.", "") if sets else ""),
    u["backing_accesses"] if u else "none alone", b["backing_accesses"],
    ratio(b["backing_accesses"], u["backing_accesses"]) if u else "-",
    "%.1f" % (u["energy"] * 1e-6) if u else "-", b["energy"] * 1e-6,
    ratio(b["energy"], u["energy"]) if u else "-", edp, fa, groups, float(secs)))
with open(out, "a") as f:
    f.write(",".join(str(x) for x in [design, wl, '"' + sets + '"', h, n, d,
        u["backing_accesses"] if u else "", b["backing_accesses"],
        ratio(b["backing_accesses"], u["backing_accesses"]) if u else "",
        "%.3f" % (u["energy"] * 1e-6) if u else "", "%.3f" % (b["energy"] * 1e-6),
        ratio(b["energy"], u["energy"]) if u else "", edp if u else "", fa,
        '"' + groups + '"', "%.1f" % float(secs)]) + "\n")
PY
}
for design in gpu/h100 simba/simba; do
    run "$design" bert_base_attention "" 12 512 64
    run "$design" bert_base_attention "--set problem.m=2048 --set problem.n=2048" 12 2048 64
    run "$design" bert_base_attention "--set problem.m=8192 --set problem.n=8192" 12 8192 64
    for form in bert_base_attention_parts bert_base_flash_attention; do
        run "$design" $form "--set problem.seq=2048" 12 2048 64
        run "$design" $form "--set problem.seq=8192" 12 8192 64
    done
    run "$design" llama7b_attention_2048 "" 32 2048 128
    run "$design" llama7b_causal_attention_2048 "" 32 2048 128
    run "$design" bert_base_ffn "" 0 0 0
    run "$design" llama7b_ffn "" 0 0 0
done
