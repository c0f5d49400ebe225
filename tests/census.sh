#!/bin/sh
# census.sh — `nestmap census`: on a space small enough to enumerate, it
# counts what the exhaustive search counts and finds its best; every figure
# it reports can be recomputed from its own mappings.csv; it does not depend
# on the thread count; a large space is sampled (saying so), reproducibly by
# seed; its plot is written (and rendered when gnuplot is there).
name=census
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

small="$src/examples/conv1d_map.yaml"
"$bin" census -q --json --threads 2 -o "$tmp/c2" "$small" >"$tmp/c2.json" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] && ok "census of a small space: exit 0" || { bad "census: exit $rc"; cat "$tmp/err"; }
"$bin" census -q --json --threads 1 "$small" >"$tmp/c1.json" 2>/dev/null
"$bin" map -q --json --threads 2 --algorithm exhaustive --victory 0 "$small" >"$tmp/x.json" 2>/dev/null
if python3 - "$tmp/c2.json" "$tmp/x.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
x = json.load(open(sys.argv[2]))
sys.exit(0 if c["enumerated"] and c["valid"] == x["search"]["valid"] and c["energy_pj"]["min"] == x["summary"]["energy_pj"] else 1)
EOF
then ok "the census counts the exhaustive search's valid mappings and finds its best"; else bad "census and exhaustive disagree"; head -12 "$tmp/c2.json"; fi
if python3 - "$tmp/c1.json" "$tmp/c2.json" <<'EOF'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for j in (a, b):
    del j["seconds"], j["threads"], j["warnings"]
sys.exit(0 if a == b else 1)
EOF
then ok "1 and 2 threads: the same census"; else bad "the census depends on the thread count"; fi

# Every figure from the census's own rows.
if python3 - "$tmp/c2/census.json" "$tmp/c2/mappings.csv" <<'EOF'
import csv, json, sys
c = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
e = [float(r["energy_pj"]) for r in rows]
d = [int(r["outermost_accesses"]) for r in rows]
cy = [int(r["cycles"]) for r in rows]
emin, dmin = min(e), min(d)
at = [x for x, y in zip(e, d) if y == dmin]
checks = {
    "rows": len(rows) == c["valid"],
    "energy": c["energy_pj"]["min"] == emin and c["energy_pj"]["max"] == max(e),
    "optimal": c["optimal"] == sum(1 for x in e if x <= emin * (1 + 1e-9)),
    "within 1 %": c["within_1pct"] == sum(1 for x in e if x <= emin * 1.01),
    "cycles": c["cycles"] == {"min": min(cy), "max": max(cy)},
    "least off-chip": c["min_outermost_accesses"] == dmin and c["at_min_outermost_accesses"]["mappings"] == len(at),
    "its spread": c["at_min_outermost_accesses"]["energy_min_pj"] == min(at) and c["at_min_outermost_accesses"]["energy_max_pj"] == max(at),
    "histogram": sum(h["mappings"] for h in c["histogram"]) == len(rows),
    "order": [(int(r["outer_point"]), int(r["order"])) for r in rows] == sorted((int(r["outer_point"]), int(r["order"])) for r in rows),
    "schedules": c["schedules"] == sum(1 for r in rows if r["order"] == r["same_as"]),
    "optimal schedules": c["optimal_schedules"] == sum(1 for r, x in zip(rows, e) if r["order"] == r["same_as"] and x <= emin * (1 + 1e-9)),
    "within 1 % schedules": c["within_1pct_schedules"] == sum(1 for r, x in zip(rows, e) if r["order"] == r["same_as"] and x <= emin * 1.01),
}
# orders that count as one schedule are one: every count equal to the
# order that stands for them
by = {(r["outer_point"], r["order"]): r for r in rows}
twins = [(r, by[(r["outer_point"], r["same_as"])]) for r in rows if r["order"] != r["same_as"]]
checks["one schedule, one evaluation"] = len(twins) > 0 and all(
    (a["energy_pj"], a["cycles"], a["outermost_accesses"]) == (b["energy_pj"], b["cycles"], b["outermost_accesses"]) for a, b in twins)
bad = [k for k, v in checks.items() if not v]
print("mismatch: " + ", ".join(bad) if bad else "all match")
sys.exit(1 if bad else 0)
EOF
then ok "count, spread, optimal, within 1 %, least off-chip and its spread, histogram, distinct schedules: all from mappings.csv; orders counted as one schedule evaluate alike"; else bad "census figures differ from its rows"; fi

# The best row rebuilds into a mapping of that energy: map's best.
best=$(python3 -c "import json,sys; b=json.load(open(sys.argv[1]))['best']; print(b['outer_point'], b['order'])" "$tmp/c2.json")
[ -n "$best" ] && ok "the best mapping is named (outer point $best)" || bad "no best mapping"

# Text: the summary a lecture shows.
"$bin" census -q --threads 2 "$small" >"$tmp/out" 2>"$tmp/err"
for line in "^every mapping of the constrained space: 464640 evaluated, 444912 valid: 256656 distinct schedules" \
    "^(loop orders at RegisterFile, next to the arithmetic, change no count and count once)" \
    "^energy  *least .* spread 8.56x" "^optimal  *11 schedules at the least energy (42 mappings); 58 within 1 % (248)" \
    "^off-chip  *least [0-9]* accesses" "^energy / least energy  *mappings"; do
    grep -q -- "$line" "$tmp/out" && ok "text: $line" || { bad "text lacks $line"; cat "$tmp/out"; }
done

# A large space is sampled, reproducibly, and says so.
big="$src/arch/teaching/weight_stationary.yaml"
layer="$src/examples/course/5_search/layer.yaml"
"$bin" census -q --threads 2 --sample 3000 "$big" "$layer" >"$tmp/out" 2>&1
grep -q "^a uniform sample of 3000 mappings (seed 0) of a space of .*--all enumerates it" "$tmp/out" &&
    ok "a large space is sampled and says so" || { bad "sampling"; head -3 "$tmp/out"; }
"$bin" census -q --threads 2 --sample 3000 -o "$tmp/s0" "$big" "$layer" >/dev/null 2>&1
grep -q "title '.*: a sample of 3000 mappings ([0-9]* valid)" "$tmp/s0/census.gp" &&
    ok "a sample's plot says it is a sample of 3000" || { bad "the sample's plot title"; grep title "$tmp/s0/census.gp"; }
grep -q "title 'one schedule in [0-9]*'" "$tmp/c2/census.gp" && ok "the scatter says which share of the schedules it shows" || bad "the scatter's key"
"$bin" census -q --json --threads 2 --sample 3000 --seed 5 "$big" "$layer" >"$tmp/s1.json" 2>/dev/null
"$bin" census -q --json --threads 1 --sample 3000 --seed 5 "$big" "$layer" >"$tmp/s2.json" 2>/dev/null
"$bin" census -q --json --threads 2 --sample 3000 --seed 6 "$big" "$layer" >"$tmp/s3.json" 2>/dev/null
if python3 - "$tmp/s1.json" "$tmp/s2.json" "$tmp/s3.json" <<'EOF'
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:])
for j in (a, b, c):
    del j["seconds"], j["threads"]
sys.exit(0 if a == b and a != c and not a["enumerated"] and a["samples"] == 3000 else 1)
EOF
then ok "a sample is the same for a seed whatever the threads, and differs for another seed"; else bad "sampling is not reproducible"; fi
"$bin" census --all --sample 5 "$small" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "exclude each other" "$tmp/err" && ok "--all with --sample: usage error" || bad "--all --sample"

# The plot.
if [ -s "$tmp/c2/census.gp" ] && [ -s "$tmp/c2/census.dat" ] && [ -s "$tmp/c2/census_hist.dat" ]; then
    ok "census.gp with its data"
else
    bad "census plot files"
fi
if command -v gnuplot >/dev/null 2>&1; then
    [ -s "$tmp/c2/census.png" ] && ok "gnuplot rendered census.png" || { bad "no census.png"; cat "$tmp/c2/gnuplot.log"; }
    size=$(wc -c <"$tmp/c2/census.svg")
    [ "$size" -lt 1000000 ] && ok "census.svg stays under 1 MB ($size bytes)" || bad "census.svg is $size bytes"
else
    echo "note - gnuplot is not installed: census.png is not rendered (its script is checked above)"
fi

finish
