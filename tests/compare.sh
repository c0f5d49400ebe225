#!/bin/sh
# compare.sh — `nestmap compare`: the same layer or network on several
# designs, ranked; its figures agree with `map` and `network` run alone; its
# files (CSV, JSON, map.yaml per design, the gnuplot chart) hold the same;
# the teaching design's five dataflows load through `include:`; and
# `include:` itself (relative paths, overrides, cycles, missing files).
# The searches are short and plain (--no-refine): the test is of the
# comparison, not of how good a mapping the search finds.
name=compare
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

teach="$src/arch/teaching"
flows="weight_stationary output_stationary row_stationary input_stationary no_local_reuse"
search="--threads 2 --max-evals 4000 --lanes 8 --no-refine"
printf 'problem: {conv2d: {C: 16, M: 16, P: 14, Q: 14, R: 3, S: 3, padding: same}}\n' >"$tmp/layer.yaml"

designs=""
for f in $flows; do designs="$designs $teach/$f.yaml"; done
# shellcheck disable=SC2086
"$bin" compare -q $search -o "$tmp/out1" "$tmp/layer.yaml" $designs >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "compare on the five dataflows: exit 0"; else bad "compare: exit $rc"; cat "$tmp/err"; fi
n=$(grep -c '^ *[1-5]  [a-z_]* ' "$tmp/out")
[ "$n" -eq 5 ] && ok "five designs ranked" || { bad "ranked rows: $n"; cat "$tmp/out"; }

# Each row is what `map` finds for that design alone with the same options.
for f in $flows; do
    # shellcheck disable=SC2086
    "$bin" map -q --json $search "$teach/$f.yaml" "$tmp/layer.yaml" >"$tmp/map.json" 2>/dev/null
    if python3 - "$tmp/map.json" "$tmp/out1/compare.json" "$f" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))["summary"]
c = [d for d in json.load(open(sys.argv[2]))["designs"] if d["design"] == sys.argv[3]][0]
sys.exit(0 if abs(m["energy_pj"] - c["energy_pj"]) <= 1e-9 * m["energy_pj"] and m["cycles"] == c["cycles"] else 1)
EOF
    then ok "compare's $f row equals map on $f"; else bad "compare's $f row differs from map"; fi
done

# Ranked by energy: ascending; the parts add up to the total.
if python3 - "$tmp/out1/compare.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
d = j["designs"]
e = [x["energy_pj"] for x in d]
ok = e == sorted(e) and [x["rank"] for x in d] == list(range(1, len(d) + 1)) and j["rank_by"] == "energy"
for x in d:
    lv = sum(p["pj"] for p in x["energy_by_level"])
    tn = sum(p["pj"] for p in x["energy_by_tensor"]) + x["compute_pj"] + x["leakage_pj"]
    ok = ok and abs(lv - x["energy_pj"]) < 1e-6 * x["energy_pj"] and abs(tn - x["energy_pj"]) < 1e-6 * x["energy_pj"]
    ok = ok and abs(x["cycles_over_bound"] - x["cycles"] / x["bound_cycles"]) < 1e-12 and x["cycles_over_bound"] >= 1
sys.exit(0 if ok else 1)
EOF
then ok "ranked by energy; levels, and tensors with compute and leakage, each add up to the total; cycles >= the bound"; else bad "compare.json is inconsistent"; fi

# The files: CSV rows, a map.yaml per design that re-evaluates to its row.
rows=$(tail -n +2 "$tmp/out1/compare.csv" | wc -l)
[ "$rows" -eq 5 ] && ok "compare.csv: a row per design" || bad "compare.csv rows: $rows"
f=row_stationary
"$bin" model -q --json "$teach/$f.yaml" "$tmp/layer.yaml" "$tmp/out1/$f.map.yaml" >"$tmp/model.json" 2>"$tmp/err"
if python3 - "$tmp/model.json" "$tmp/out1/compare.json" "$f" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))["summary"]
c = [d for d in json.load(open(sys.argv[2]))["designs"] if d["design"] == sys.argv[3]][0]
sys.exit(0 if abs(m["energy_pj"] - c["energy_pj"]) <= 1e-9 * m["energy_pj"] else 1)
EOF
then ok "$f.map.yaml re-evaluates to its row"; else bad "$f.map.yaml"; cat "$tmp/err"; fi
if [ -s "$tmp/out1/compare.gp" ] && grep -q "rowstacked" "$tmp/out1/compare.gp" &&
    [ "$(grep -c '^"' "$tmp/out1/compare.dat")" -eq 10 ]; then
    ok "compare.gp and compare.dat: stacked bars, a row per design in each panel"
else
    bad "compare.gp/.dat"
fi
if command -v gnuplot >/dev/null 2>&1; then
    if [ -s "$tmp/out1/compare.png" ] && [ -s "$tmp/out1/compare.svg" ]; then
        ok "gnuplot rendered compare.png and compare.svg"
    else
        bad "no compare.png"; cat "$tmp/out1/gnuplot.log"
    fi
else
    echo "note - gnuplot is not installed: the chart is not rendered (its script is checked above)"
fi

# --rank cycles orders by cycles.
# shellcheck disable=SC2086
"$bin" compare -q --json --rank cycles $search "$tmp/layer.yaml" $designs >"$tmp/c.json" 2>"$tmp/err"
if python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['designs']; c=[x['cycles'] for x in d]; sys.exit(0 if c==sorted(c) else 1)" "$tmp/c.json"; then
    ok "--rank cycles orders by cycles"
else
    bad "--rank cycles"
fi

# A network: the totals are what `network` reports.
net="$src/tests/data/network"
"$bin" compare -q --json $search "$net/small_net.yaml" "$net/design.yaml" "$teach/weight_stationary.yaml" >"$tmp/cn.json" 2>"$tmp/err"
"$bin" network -q --json $search "$net/design.yaml" "$net/small_net.yaml" >"$tmp/n.json" 2>/dev/null
if python3 - "$tmp/cn.json" "$tmp/n.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
n = json.load(open(sys.argv[2]))
d = [x for x in c["designs"] if x["design"] == "design"][0]
t = n["summary"]
sys.exit(0 if c["network"] and abs(d["energy_pj"] - t["energy_pj"]) <= 1e-9 * t["energy_pj"] and d["cycles"] == t["cycles"] else 1)
EOF
then ok "a network: compare's totals equal network's"; else bad "network totals differ"; head -20 "$tmp/cn.json"; fi

# A design that cannot hold the layer (its constraints put 288 weights in a
# 256-word register file): listed last, exit 1.
cat >"$tmp/toosmall.yaml" <<EOF
include: $teach/pe_array.yaml
architecture_constraints:
  targets:
  - {target: RegisterFile, type: bypass, keep: [Weights], bypass: [Inputs, Outputs]}
  - {target: RegisterFile, type: temporal, factors: C=16 R=3 S=3 M=2}
EOF
"$bin" compare -q $search "$tmp/layer.yaml" "$tmp/toosmall.yaml" "$teach/weight_stationary.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^   1  weight_stationary" "$tmp/out" && grep -q "^   -  toosmall *no valid mapping for 1 of 1 layers" "$tmp/out"; then
    ok "a design without a mapping: exit 1, said in the table"
else
    bad "unmappable design: exit $rc"; cat "$tmp/out" "$tmp/err"
fi
"$bin" compare "$tmp/layer.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "name a workload and at least one design" "$tmp/err" && ok "no design: usage error" || bad "no design"

# include: relative to the including file, its keys replaced by the file's own.
mkdir -p "$tmp/inc/sub"
cp "$teach/pe_array.yaml" "$tmp/inc/sub/hw.yaml"
printf 'include: sub/hw.yaml\nmapper: {algorithm: random, max_evals: 7, refine: false}\n' >"$tmp/inc/top.yaml"
(cd / && "$bin" map "$tmp/inc/top.yaml" "$tmp/layer.yaml") >"$tmp/out" 2>"$tmp/err"
if grep -q "search: random, 7 proposed" "$tmp/err" && grep -q "replaces the one given at .*hw.yaml" "$tmp/err"; then
    ok "include: found relative to the file; the file's own mapper: replaces the included one"
else
    bad "include:"; cat "$tmp/err"
fi
printf 'include: [loop.yaml]\n' >"$tmp/inc/loop.yaml"
"$bin" model "$tmp/inc/loop.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "includes nest more than 16 files deep" "$tmp/err" && ok "include: a cycle is an error" || { bad "include cycle"; cat "$tmp/err"; }
printf 'include: nothere.yaml\n' >"$tmp/inc/missing.yaml"
"$bin" model "$tmp/inc/missing.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "missing.yaml:1:10: error: cannot include '.*nothere.yaml': No such file" "$tmp/err" && ok "include: a missing file is located" || { bad "include missing"; cat "$tmp/err"; }
printf 'include: /dev/null\n' >"$tmp/inc/dev.yaml"
"$bin" model "$tmp/inc/dev.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "not a regular file" "$tmp/err" && ok "include: only regular files" || { bad "include /dev/null"; cat "$tmp/err"; }


# --as-given: the given mappings side by side (course exercise 1's output-
# and weight-stationary mappings), each row what model gives for it; an
# invalid given mapping is a row without a mapping (exit 1); a network is
# refused.
c1="$src/examples/course/1_conv1d_dataflows"
"$bin" compare -q --as-given --json "$c1/design.yaml" "$c1/output_stationary.yaml" "$c1/weight_stationary.yaml" >"$tmp/ag.json" 2>"$tmp/err"
"$bin" model -q --json "$c1/design.yaml" "$c1/weight_stationary.yaml" >"$tmp/agm.json" 2>/dev/null
if python3 - "$tmp/ag.json" "$tmp/agm.json" <<'EOF2'
import json, sys
c = {d["design"]: d for d in json.load(open(sys.argv[1]))["designs"]}
m = json.load(open(sys.argv[2]))["summary"]
ws = c["weight_stationary"]
sys.exit(0 if set(c) == {"output_stationary", "weight_stationary"} and
         abs(ws["energy_pj"] - m["energy_pj"]) <= 1e-9 * m["energy_pj"] and ws["cycles"] == m["cycles"] else 1)
EOF2
then ok "--as-given: each given mapping's row is what model gives"; else bad "--as-given rows"; cat "$tmp/err"; fi
printf 'mapping:\n- {target: Buffer, type: temporal, factors: R=1 P=8}\n' >"$tmp/ag_bad.yaml"
"$bin" compare -q --as-given "$c1/design.yaml" "$c1/output_stationary.yaml" "$tmp/ag_bad.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "ag_bad.yaml: invalid mapping" "$tmp/err" && ok "--as-given: an invalid given mapping says why (exit 1)" || { bad "--as-given invalid"; cat "$tmp/err" "$tmp/out"; }

# --fuse: each design's network as `network --fuse` fuses it (the same
# totals, fused and unfused, and DRAM words), its energy by level adding up
# to the fused total, its tensors by their layers' names; not for one
# layer, nor with --as-given.
nf="$src/tests/data/network/fuse_net.yaml"
fopts="--threads 2 --no-refine --max-evals 2000"
# shellcheck disable=SC2086
"$bin" compare -q --json --fuse $fopts "$nf" "$src/tests/data/network/design.yaml" \
    "$teach/weight_stationary.yaml" >"$tmp/cf.json" 2>"$tmp/err" &&
    ok "compare --fuse on a network: exit 0" || { bad "compare --fuse"; cat "$tmp/err"; }
for d in "$src/tests/data/network/design.yaml" "$teach/weight_stationary.yaml"; do
    # shellcheck disable=SC2086
    "$bin" network -q --json --fuse $fopts "$d" "$nf" >"$tmp/nf.json" 2>/dev/null
    if python3 - "$tmp/nf.json" "$tmp/cf.json" "$(basename "$d" .yaml)" <<'EOF'
import json, sys
n = json.load(open(sys.argv[1]))["fusion"]
c = [d for d in json.load(open(sys.argv[2]))["designs"] if d["design"] == sys.argv[3]][0]
f, u = c["fusion"], c["fusion"]["unfused"]
assert c["energy_pj"] == n["fused"]["energy"] and c["cycles"] == n["fused"]["cycles"], (c, n["fused"])
assert f["dram_words"] == n["fused"]["backing_accesses"], (f, n["fused"])
assert u["energy_pj"] == n["unfused"]["energy"] and u["cycles"] == n["unfused"]["cycles"], (u, n["unfused"])
assert u["dram_words"] == n["unfused"]["backing_accesses"], (u, n["unfused"])
assert f["runs"] == len(n["runs"]) and f["runs_fused"] == sum(bool(r.get("fused")) for r in n["runs"]), (f, n["runs"])
assert f["runs_fused"] > 0 and f["dram_words"] < u["dram_words"], f
parts = sum(p["pj"] for p in c["energy_by_level"])
assert abs(parts - c["energy_pj"]) <= 1e-9 * c["energy_pj"], (parts, c["energy_pj"])
assert {t["name"] for t in c["energy_by_tensor"]} == {"Weights", "Inputs", "Outputs"}, c["energy_by_tensor"]
assert 0 < c["bound_cycles"] <= c["cycles"], c
EOF
    then ok "compare --fuse: $(basename "$d" .yaml) as network --fuse finds it, parts adding up"
    else bad "compare --fuse: $(basename "$d" .yaml) differs from network --fuse"; fi
done
# shellcheck disable=SC2086
"$bin" compare -q --fuse $fopts "$tmp/layer.yaml" "$teach/weight_stationary.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "fuses a network's layers" "$tmp/err" && ok "compare --fuse on one layer: exit 2, says why" || { bad "compare --fuse on a layer"; cat "$tmp/err"; }
"$bin" compare -q --fuse --as-given "$c1/design.yaml" "$c1/output_stationary.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && ok "compare --fuse --as-given: exit 2" || bad "compare --fuse --as-given"

finish
