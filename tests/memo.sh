#!/bin/sh
# memo.sh — the local search's memo (search.c) changes no result.  With
# NESTMAP_MEMO_CHECK set, every memo hit is evaluated again, every
# fingerprint built from a base mapping's parts is built again from scratch,
# and every known local optimum's neighbourhood is scanned again; any
# difference aborts.  Searches run so on designs that exercise each kind of
# move and field (fan-out exchanges, bypass flips, loop swaps, residual
# moves, sparse designs whose loops of factor 1 count), and their best
# mappings must equal those of the same searches without the check.
name=memo
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

layer="$tmp/layer.yaml"
printf 'problem:\n  conv2d: {C: 48, M: 128, P: 27, Q: 27, R: 5, S: 5}\n' >"$layer"
sparse="$src/arch/gpu/a100_sparse.yaml"
conf=${NESTMAP_CONFORMANCE:-}
case116="$conf/sparse/eyeriss_sparse-compute-1-116/input.yaml"
if [ -n "$conf" ] && [ -f "$case116" ]; then
    sparse="$case116"
else
    echo "# NESTMAP_CONFORMANCE unset or without sparse/: the sparse run uses $sparse"
fi

# run WHAT ARGS...: the search with and without the check, same mapping
run() {
    what=$1
    shift
    if NESTMAP_MEMO_CHECK=1 "$bin" map --json -q --threads 2 --max-evals 3000 --effort 0.05 \
        "$@" >"$tmp/checked" 2>"$tmp/err"; then
        ok "$what: every memo hit and fingerprint checked"
    else
        bad "$what: the checked search failed:"
        cat "$tmp/err"
        return
    fi
    "$bin" map --json -q --threads 2 --max-evals 3000 --effort 0.05 "$@" >"$tmp/plain" 2>&1
    if python3 - "$tmp/checked" "$tmp/plain" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
sys.exit(0 if a["mapping"] == b["mapping"] and a["summary"] == b["summary"] else 1)
PY
    then
        ok "$what: the same best mapping and figures without the check"
    else
        bad "$what: the check changed the result"
    fi
}

run "eyeriss, fan-outs and bypass" "$src/arch/eyeriss/eyeriss.yaml" "$layer"
run "a100, bypass flips" "$src/arch/gpu/a100.yaml" "$layer"
run "tpu_v1" "$src/arch/systolic/tpu_v1.yaml" "$layer"
run "output-stationary, residual moves" --imperfect "$src/arch/simple/output_stationary.yaml" "$layer"
if [ "$sparse" = "$case116" ]; then
    run "sparse compute case" "$sparse"
else
    run "a100_sparse" "$sparse" "$layer"
fi

# One thread: the chains share one worker's table.
if NESTMAP_MEMO_CHECK=1 "$bin" map -q --threads 1 --max-evals 200 --effort 0.01 \
    "$src/arch/eyeriss/eyeriss.yaml" "$layer" >/dev/null 2>&1; then
    ok "the checked search runs on one thread too"
else
    bad "the checked search failed on one thread"
fi
finish
