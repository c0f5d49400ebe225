#!/bin/sh
# json.sh — every command's --json output (and the JSON files -o writes)
# validates against doc/nestmap.schema.json, with counts as strict
# integers; the mapping in map's and model's JSON re-evaluates to the same
# numbers.  Searches past map's own are bounded and plain (--max-evals,
# --no-refine): what is checked is the output's form.  Needs python3 with jsonschema (Debian: python3-jsonschema).
# Prints one line per check and a closing "N passed, M failed".

name=json
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
data="$src/tests/data"
schema="$src/doc/nestmap.schema.json"
one="$data/good/conv1d_1level.yaml"

py=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "FAIL - python3 with jsonschema is needed (apt-get install python3-jsonschema)"
    exit 1
fi

# valid DEF FILE DESCRIPTION
valid() {
    if "$py" "$src/tests/validate_json.py" "$schema" "$1" "$2" >"$tmp/why" 2>&1; then
        ok "$3 validates against \$defs/$1"
    else
        bad "$3 does not validate against \$defs/$1:"; cat "$tmp/why"
    fi
}

# run DEF DESCRIPTION -- COMMAND...: the command's stdout validates and
# carries the inputs' warnings as an array.
run() {
    def=$1; what=$2; shift 3
    "$@" >"$tmp/out.json" 2>"$tmp/err"
    valid "$def" "$tmp/out.json" "$what"
    if "$py" -c 'import json, sys; sys.exit(not isinstance(json.load(open(sys.argv[1])).get("warnings"), list))' "$tmp/out.json" 2>/dev/null; then
        ok "$what: warnings as an array"
    else
        bad "$what: no warnings array"
    fi
}

"$py" -c 'import json, sys, jsonschema; jsonschema.Draft202012Validator.check_schema(json.load(open(sys.argv[1])))' "$schema" &&
    ok "the schema is a valid Draft 2020-12 schema" || bad "the schema itself is invalid"

run model "model --json" -- "$bin" model -q --json "$one"
run model "model --json with networks between levels" -- "$bin" model -q --json "$data/good/noc.yaml"
run fused_model "model --json on a fused chain" -- "$bin" model -q --json "$src/examples/fused/accelerator.yaml" "$src/examples/fused/attention.yaml" "$src/examples/fused/attention_fused.yaml"
run fused_model "model --json on a fused chain that does not fit" -- "$bin" model -q --json --set GlobalBuffer.depth=1024 "$src/examples/fused/accelerator.yaml" "$src/examples/fused/attention.yaml" "$src/examples/fused/attention_fused.yaml"
run fused_model "model --json on a recomputed halo" -- "$bin" model -q --json "$src/tests/data/good/fused_halo.yaml"
run fused_model "model --json on a retained halo" -- "$bin" model -q --json "$src/tests/data/good/fused_retain.yaml"
run fused_model "model --json on a causal mask's skipped steps" -- "$bin" model -q --json "$src/tests/data/good/fused_causal.yaml"
run fused_model "model --json on an online softmax" -- "$bin" model -q --json "$src/tests/data/good/fused_online.yaml"
run fused_model "model --json on steps leaving rows out" -- "$bin" model -q --json "$src/tests/data/good/fused_strided.yaml"
run fused_map "map --json on a chain" -- "$bin" map -q --json --max-evals 2000 "$src/tests/data/good/fused_ffn.yaml"
run model "model --json with sparse tensors" -- "$bin" model -q --json "$src/examples/sparse/gemm_gating.yaml"
run model "model --json with a banded density" -- "$bin" model -q --json "$src/examples/sparse/spmm_banded.yaml"
run map "map --json with sparse tensors" -- "$bin" map -q --json --max-evals 500 "$src/examples/sparse/gemm_gating.yaml"
run map "map --json" -- "$bin" map -q --json --max-evals 500 "$one"
run map "map --json --algorithm optimal" -- "$bin" map -q --json --algorithm optimal --time-limit 5 "$one"
run mapspace "mapspace --json" -- "$bin" mapspace -q --json "$one"
run mapspace "mapspace --json --sample" -- "$bin" mapspace -q --json --sample 200 "$one"
run energy "energy --json" -- "$bin" energy -q --json "$src/arch/eyeriss/eyeriss.yaml"
run energy_compare "energy --compare --json" -- "$bin" energy -q --compare --json "$src/arch/eyeriss/eyeriss.yaml"
run bound "bound --json (no bandwidth)" -- "$bin" bound -q --json "$one"
run bound "bound --json (with bandwidth)" -- "$bin" bound -q --json "$src/arch/systolic/tpu_v1.yaml" "$src/workloads/layers/resnet50_conv1.yaml"
run bound "bound --json (no design; rates given)" -- "$bin" bound -q --json --precision fp32 --peak 1T --bandwidth 1000GB/s "$src/workloads/layers/tutorial_conv.yaml"
run bound "bound --json (int4: fractional bytes)" -- "$bin" bound -q --json --precision int4 "$src/workloads/layers/tutorial_conv.yaml"
run network "network --json" -- "$bin" network -q --json --no-refine --max-evals 2000 "$data/network/design.yaml" "$data/network/small_net.yaml"
run network "network --fuse --json" -- "$bin" network -q --json --fuse --no-refine --max-evals 2000 "$data/network/design.yaml" "$data/network/fuse_net.yaml"
run compare "compare --json (a layer, two designs)" -- "$bin" compare -q --json --no-refine --max-evals 2000 "$src/workloads/layers/mobilenet_v1_dw4.yaml" "$src/arch/teaching/row_stationary.yaml" "$src/arch/teaching/weight_stationary.yaml"
run compare "compare --json (a network)" -- "$bin" compare -q --json --no-refine --max-evals 2000 "$data/network/small_net.yaml" "$data/network/design.yaml"
run compare "compare --fuse --json (a network fused)" -- "$bin" compare -q --json --fuse --no-refine --max-evals 2000 "$data/network/fuse_net.yaml" "$data/network/design.yaml"
"$bin" compare -q -o "$tmp/cmp" --no-refine --max-evals 2000 "$src/workloads/layers/mobilenet_v1_dw4.yaml" "$src/arch/teaching/no_local_reuse.yaml" >/dev/null 2>&1
valid compare "$tmp/cmp/compare.json" "compare -o: compare.json"
run census "census --json (enumerated)" -- "$bin" census -q --json --threads 2 "$src/examples/conv1d_map.yaml"
run census "census --json (sampled)" -- "$bin" census -q --json --sample 500 "$src/arch/teaching/weight_stationary.yaml" "$src/examples/course/5_search/layer.yaml"
"$bin" census -q -o "$tmp/cen" --sample 500 "$src/arch/teaching/weight_stationary.yaml" "$src/examples/course/5_search/layer.yaml" >/dev/null 2>&1
valid census "$tmp/cen/census.json" "census -o: census.json"
run sweep "sweep --json" -- "$bin" sweep -q --json --no-refine --max-evals 300 "$data/sweep/buffer_dram.yaml"
run sweep "sweep --json with a point that cannot be mapped" -- "$bin" sweep -q --json --no-refine --max-evals 3000 "$data/sweep/one_fails.yaml"

# A warning reaches the JSON, -q or not, located.
sed 's/instance: {R: 3, P: 16}/instance: {R: 3, P: 16, Q: 4}/' "$one" >"$tmp/warn.yaml"
"$bin" model -q --json "$tmp/warn.yaml" >"$tmp/w.json" 2>"$tmp/err"
if "$py" -c 'import json, sys; w = json.load(open(sys.argv[1]))["warnings"]; q = [x for x in w if "instance key '"'Q'"'" in x["message"]]; sys.exit(not (len(q) == 1 and q[0]["line"] == 22))' "$tmp/w.json" && [ ! -s "$tmp/err" ]; then
    ok "model -q --json: the warning is in the JSON (line 22), not on stderr"
else
    bad "warning in JSON:"; cat "$tmp/w.json" "$tmp/err" | tail -8
fi

# An invalid mapping (exit 1) still prints JSON of the schema's form.
sed 's/factors: R=3 P=16/factors: R=3 P=8/' "$one" >"$tmp/short.yaml"
"$bin" model -q --json "$tmp/short.yaml" >"$tmp/inv.json" 2>/dev/null
valid model "$tmp/inv.json" "model --json of a mapping that does not cover the layer"

# Files -o writes.
"$bin" map -q --max-evals 500 -o "$tmp/m" "$one" >/dev/null 2>&1
valid map "$tmp/m/stats.json" "map -o: stats.json"
"$bin" network -q --no-refine --max-evals 2000 -o "$tmp/n" "$data/network/design.yaml" "$data/network/small_net.yaml" >/dev/null 2>&1
valid network "$tmp/n/network.json" "network -o: network.json"

# Counts are printed as integers, not as 2.0.
"$bin" map -q --json --threads 2 --max-evals 500 "$one" >"$tmp/t.json" 2>/dev/null
if grep -q '"threads": 2,' "$tmp/t.json" && ! grep -q '"cycles": [0-9]*\.0[,}]' "$tmp/t.json"; then
    ok "threads and cycles are JSON integers"
else
    bad "integers printed as floats:"; grep -n '"threads"\|"cycles"' "$tmp/t.json" | head -3
fi

# The mapping in map's JSON is the one map.yaml holds: rebuilt as YAML and
# evaluated, it gives the same energy.
"$py" - "$tmp/t.json" "$tmp/from_json.yaml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write("mapping:\n")
    for m in d["mapping"]:
        f.write("- " + json.dumps(m) + "\n")
PY
sed '/^mapping:/,$d' "$one" >"$tmp/base.yaml"
sed -n '/^ERT:/,$p' "$one" >>"$tmp/base.yaml"
"$bin" model -q --json "$tmp/base.yaml" "$tmp/from_json.yaml" >"$tmp/re.json" 2>"$tmp/err"
e1=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["energy_pj"])' "$tmp/t.json")
e2=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["energy_pj"])' "$tmp/re.json" 2>/dev/null)
if [ -n "$e1" ] && [ "$e1" = "$e2" ]; then ok "map --json's mapping re-evaluates to its energy ($e1 pJ)"; else bad "re-evaluated '$e2' vs '$e1'"; cat "$tmp/err"; fi

# Every row of pareto.csv and top.csv names its mapping, which nestmap
# model re-evaluates to the row's energy and cycles.
"$bin" map -q --max-evals 3000 -o "$tmp/pt" "$src/arch/eyeriss/eyeriss.yaml" "$src/workloads/layers/resnet50_conv1.yaml" >/dev/null 2>&1
for csv in pareto top; do
    rows=0; same=0
    while IFS=, read -r rank energy cycles rest; do
        [ "$rank" = rank ] && continue
        map=${rest##*,}
        rows=$((rows + 1))
        "$bin" model -q --json "$src/arch/eyeriss/eyeriss.yaml" "$src/workloads/layers/resnet50_conv1.yaml" "$tmp/pt/$map" >"$tmp/re.json" 2>/dev/null
        "$py" -c 'import json, sys; d = json.load(open(sys.argv[1]))["summary"]; sys.exit(not (d["energy_pj"] == float(sys.argv[2]) and d["cycles"] == int(sys.argv[3])))' \
            "$tmp/re.json" "$energy" "$cycles" && same=$((same + 1))
    done <"$tmp/pt/$csv.csv"
    if [ "$rows" -gt 1 ] && [ "$same" -eq "$rows" ]; then
        ok "$csv.csv: all $rows mappings re-evaluate to their rows"
    else
        bad "$csv.csv: $same of $rows mappings re-evaluate to their rows"
    fi
done

finish
