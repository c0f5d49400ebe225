#!/bin/sh
# cli.sh — the nestmap binary as a user meets it: help, exit codes, located
# errors with a caret, JSON, output files, and no crash on any malformed input.
# Prints one line per check and a closing "N passed, M failed".

name=cli
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
data="$src/tests/data"

# expect CODE DESCRIPTION -- COMMAND...: runs the command, checks its exit code.
expect() {
    code=$1; what=$2; shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq "$code" ]; then ok "$what (exit $rc)"; else bad "$what: exit $rc, wanted $code"; cat "$tmp/err"; fi
}

# has FILE TEXT DESCRIPTION: FILE contains TEXT.
has() {
    if grep -q -- "$2" "$1"; then ok "$3"; else bad "$3: '$2' not in output"; head -5 "$1"; fi
}

expect 0 "--help" -- "$bin" --help
has "$tmp/out" "model" "--help lists the model command"
has "$tmp/out" "sweep " "--help lists the sweep command"
expect 0 "--version" -- "$bin" --version
has "$tmp/out" "^nestmap [0-9]" "--version prints the version"
expect 2 "no arguments" -- "$bin"
expect 2 "unknown command" -- "$bin" modle
has "$tmp/err" "did you mean 'model'" "unknown command suggests the closest"
expect 0 "model --help" -- "$bin" model --help
has "$tmp/out" "usage: nestmap model" "model --help shows usage"
expect 2 "model without files" -- "$bin" model
expect 2 "unknown option" -- "$bin" model --frobnicate "$data/good/conv1d_1level.yaml"

expect 0 "sweep --help" -- "$bin" sweep --help
has "$tmp/out" "usage: nestmap sweep" "sweep --help shows usage"
expect 2 "sweep on a file without 'sweep'" -- "$bin" sweep "$data/good/conv1d_1level.yaml"
has "$tmp/err" "no 'sweep' in the input files" "sweep says what is missing"

expect 0 "model on a good input" -- "$bin" model "$data/good/conv1d_1level.yaml"
has "$tmp/out" "Summary" "model prints a summary"
has "$tmp/out" "for P in \[0:16)" "model prints the loop nest"
expect 0 "model --json" -- "$bin" model --json "$data/good/conv1d_1level.yaml"
has "$tmp/out" '"valid": true' "JSON says the mapping is valid"
has "$tmp/out" '"cycles": 48,' "JSON has the cycles"
expect 0 "model -o DIR (parents created)" -- "$bin" model -q -o "$tmp/outdir/a/b" "$data/good/conv1d_1level.yaml"
# -o writes the tables in use; --timeloop-names writes Timeloop's files, and
# the ERT written gives the same numbers when read back.
expect 0 "model -o --timeloop-names" -- "$bin" model -q --timeloop-names -o "$tmp/tl" "$data/good/conv1d_1level.yaml"
for f in timeloop-model.stats.txt timeloop-model.map.txt timeloop-model.ERT.yaml timeloop-model.ART.yaml; do
    if [ -s "$tmp/tl/$f" ]; then ok "--timeloop-names writes $f"; else bad "--timeloop-names writes $f"; fi
done
has "$tmp/tl/timeloop-model.stats.txt" "^Summary Stats" "timeloop-model.stats.txt has Timeloop's summary"
if [ -s "$tmp/outdir/a/b/ERT.yaml" ] && [ -s "$tmp/outdir/a/b/ART.yaml" ]; then ok "model -o writes ERT.yaml and ART.yaml"; else bad "model -o writes ERT.yaml and ART.yaml"; fi
for f in stats.txt stats.json map.txt; do
    if [ -s "$tmp/outdir/a/b/$f" ]; then ok "-o writes $f"; else bad "-o did not write $f"; fi
done

# --diagram draws the mapping: each level's tiles and loops, and the fan-out
# with its busy PEs (noc.yaml: P spread 4 ways along X over 4 PEs).
expect 0 "model -o --diagram" -- "$bin" model -q -o "$tmp/dg" --diagram "$data/good/noc.yaml"
has "$tmp/dg/mapping.dat" '"tiles (words): Weights 3 Inputs 3 Outputs 1"' "the diagram gives the register file's tiles"
has "$tmp/dg/mapping.dat" '"loops, outer to inner: P4   spatial X: P4"' "the diagram gives the buffer's loops and spread"
if [ "$(awk 'NF == 3 && $3 == 1' "$tmp/dg/mapping.dat" | wc -l)" -eq 4 ] &&
   [ "$(awk 'NF == 3 && $1 ~ /^[0-9]+$/ && $3 == 0' "$tmp/dg/mapping.dat" | wc -l)" -eq 0 ]; then
    ok "the diagram marks the 4 busy PEs of 4"
else bad "the diagram's PE array is wrong"; fi
has "$tmp/dg/mapping.gp" "X: P 4 (GLB)" "the diagram names what X spreads, and where"
# Half the row busy: P spread 2 ways over the 4 PEs.
printf 'mapping:\n- {target: GLB, type: temporal, factors: R=1 P=8, permutation: RP}\n- {target: GLB, type: spatial, factors: R=1 P=2, permutation: PR, split: 1}\n- {target: RF, type: temporal, factors: R=3 P=1, permutation: RP}\n' >"$tmp/half.yaml"
expect 0 "model -o --diagram, half the PEs" -- "$bin" model -q -o "$tmp/dgh" --diagram "$data/good/noc.yaml" "$tmp/half.yaml"
has "$tmp/dgh/mapping.gp" "title 'PEs: 4 x 1, 2 busy'" "the diagram counts 2 busy PEs of 4"
if [ "$(awk 'NF == 3 && $2 == 0 { printf "%s", $3 }' "$tmp/dgh/mapping.dat")" = 1100 ]; then
    ok "the diagram marks the first two PEs busy, the last two idle"
else bad "the diagram's half-busy row is wrong"; fi
if command -v gnuplot >/dev/null 2>&1; then
    if [ -s "$tmp/dg/mapping.png" ] && [ -s "$tmp/dg/mapping.svg" ]; then ok "gnuplot rendered mapping.png and mapping.svg"
    else bad "no mapping.png"; cat "$tmp/dg/gnuplot.log"; fi
else
    echo "note - gnuplot is not installed: mapping.png is not rendered (its script is checked above)"
fi
# Two mappings given to model: the last is evaluated, and the warning
# points to compare --as-given for both.
expect 0 "model with two mappings" -- "$bin" model "$data/good/noc.yaml" "$tmp/half.yaml"
has "$tmp/err" "replaces the one given at .*(to evaluate several mappings side by side: nestmap compare --as-given DESIGN MAPPING...)" "two mappings: the warning names compare --as-given"
expect 2 "--diagram needs -o" -- "$bin" model -q --diagram "$data/good/noc.yaml"
has "$tmp/err" "needs -o DIR" "--diagram without -o says what it needs"

# An invalid mapping is not an input error: exit 1, and JSON says why.
sed 's/depth: 64/depth: 16/' "$data/good/conv1d_1level.yaml" >"$tmp/small.yaml"
expect 1 "invalid mapping" -- "$bin" model --json "$tmp/small.yaml"
has "$tmp/out" '"valid": false' "JSON marks the mapping invalid"
has "$tmp/out" "exceeds buffer capacity 16" "JSON names the level's capacity"

# Every malformed input: exit 2, a located error with the source line and a
# caret where there is a line to show, and never a crash.
for f in "$data"/bad/*.yaml; do
    name=$(basename "$f")
    "$bin" model "$f" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 2 ]; then bad "$name: exit $rc, wanted 2"; continue; fi
    if grep -q "^$f:[0-9][0-9]*:[0-9][0-9]*: error: " "$tmp/err"; then
        ok "$name: located error"
    else
        bad "$name: no FILE:LINE:COL error"; cat "$tmp/err"
    fi
done
"$bin" model "$data/bad/misspelled_attribute.yaml" 2>"$tmp/err" >/dev/null
has "$tmp/err" "^ *10 | " "the offending line is shown"
has "$tmp/err" "^ *| *\^" "a caret marks the column"
expect 2 "missing file" -- "$bin" model "$tmp/does-not-exist.yaml"
has "$tmp/err" "cannot open" "missing file is named"

# Files merge: architecture in one file, the rest in another.
sed -n '/^architecture:/,/^problem:/p' "$data/good/conv1d_1level.yaml" | sed '$d' >"$tmp/arch.yaml"
sed -n '/^problem:/,$p' "$data/good/conv1d_1level.yaml" >"$tmp/rest.yaml"
expect 0 "inputs split over two files" -- "$bin" model --json "$tmp/arch.yaml" "$tmp/rest.yaml"
has "$tmp/out" '"computes": 48,' "split inputs give the same result"
expect 0 "a later file replaces a key" -- "$bin" model "$tmp/arch.yaml" "$tmp/rest.yaml" "$tmp/rest.yaml"
has "$tmp/err" "warning: top-level key 'problem' replaces" "replacement is reported"

# The mapper: a search on the 3-level design, its outputs, and map.yaml
# re-evaluated by model to the same numbers.
d3="$data/search/conv1d_3level.yaml"
expect 0 "mapspace" -- "$bin" mapspace -q "$d3"
has "$tmp/out" "^bypass  *64 " "mapspace: free bypass of 3 levels x 3 tensors is 64"
has "$tmp/out" "^after pruning" "mapspace: size after pruning"
expect 0 "mapspace --sample" -- "$bin" mapspace -q --sample 2000 "$d3"
has "$tmp/out" "census of 2000 random mappings" "mapspace census"
expect 0 "map --help" -- "$bin" map --help
expect 0 "map (hybrid, 2 threads)" -- "$bin" map -q --threads 2 --victory 0 --max-evals 5000 -o "$tmp/map" "$d3"
for f in map.yaml stats.txt stats.json pareto.csv top.csv; do
    if [ -s "$tmp/map/$f" ]; then ok "map -o writes $f"; else bad "map -o did not write $f"; fi
done
has "$tmp/map/stats.json" '"proposed": 5000,' "search stops at the evaluation budget"
grep '"energy_pj"' "$tmp/map/stats.json" | tail -1 >"$tmp/e1"
"$bin" model -q --json "$d3" "$tmp/map/map.yaml" >"$tmp/model.json" 2>"$tmp/err"
grep '"energy_pj"' "$tmp/model.json" | tail -1 >"$tmp/e2"
if cmp -s "$tmp/e1" "$tmp/e2" && [ -s "$tmp/e1" ]; then ok "map.yaml re-evaluates to the same energy"
else bad "map.yaml gives $(cat "$tmp/e2"), search said $(cat "$tmp/e1")"; fi
# Residual factors: --imperfect or mapspace: {template: ruby} enlarge the
# space; the search's map.yaml re-evaluates to the same numbers.
expect 0 "mapspace --imperfect" -- "$bin" mapspace -q --imperfect "$d3"
has "$tmp/out" "P  *= 16  *184 ways over 3 free loops (15 perfect, 169 with residuals)" "mapspace --imperfect counts residual factorizations"
printf 'mapspace: {template: ruby}\n' >"$tmp/ruby.yaml"
expect 0 "mapspace with template: ruby" -- "$bin" mapspace -q "$d3" "$tmp/ruby.yaml"
has "$tmp/out" "169 with residuals" "template: ruby enables residual factors"
printf 'mapspace: {template: rubby}\n' >"$tmp/ruby.yaml"
expect 2 "unknown mapspace template" -- "$bin" mapspace -q "$d3" "$tmp/ruby.yaml"
has "$tmp/err" "unknown mapspace template 'rubby'" "unknown template is named"
expect 0 "map --imperfect" -- "$bin" map -q --imperfect --threads 2 --victory 0 --max-evals 20000 -o "$tmp/mapi" "$d3"
grep '"energy_pj"' "$tmp/mapi/stats.json" | tail -1 >"$tmp/ei1"
"$bin" model -q --json "$d3" "$tmp/mapi/map.yaml" >"$tmp/model.json" 2>"$tmp/err"
grep '"energy_pj"' "$tmp/model.json" | tail -1 >"$tmp/ei2"
if cmp -s "$tmp/ei1" "$tmp/ei2" && [ -s "$tmp/ei1" ]; then ok "imperfect map.yaml re-evaluates to the same energy"
else bad "imperfect map.yaml gives $(cat "$tmp/ei2"), search said $(cat "$tmp/ei1")"; fi
expect 0 "map --algorithm optimal" -- "$bin" map -q --algorithm optimal --json "$d3"
has "$tmp/out" '"proven_optimal": true' "optimal proves the optimum"
# Stopped early, optimal's search line and the Gap line give one proven gap
# (the larger of its own bound and the roofline's): the H100 5x5 layer,
# where the roofline's and fill bound's is the higher.
printf 'problem:\n  conv2d: {C: 48, M: 128, P: 27, Q: 27, R: 5, S: 5}\n' >"$tmp/l5.yaml"
expect 0 "optimal stopped by its time limit" -- "$bin" map --algorithm optimal --time-limit 2 \
    --threads 1 "$src/arch/gpu/h100.yaml" "$tmp/l5.yaml"
pct=$(sed -n 's/.*not proven: the best edp is at most \([0-9.]*\)% above.*/\1/p' "$tmp/err" "$tmp/out" | head -1)
gap=$(sed -n 's/^Gap *: \([0-9.]*\)x at most.*/\1/p' "$tmp/out")
if [ -n "$pct" ] && [ -n "$gap" ] && awk -v p="$pct" -v g="$gap" 'BEGIN { d = (1 + p / 100) / g; exit !(d > 0.999 && d < 1.001) }'; then
    ok "optimal stopped early: the search line's gap ($pct %) is the Gap line's (${gap}x)"
else
    bad "optimal stopped early: search line '$pct' % against Gap '$gap'x"; cat "$tmp/err" "$tmp/out"
fi
expect 2 "map with an unknown algorithm" -- "$bin" map --algorithm greedy "$d3"
has "$tmp/err" "unknown algorithm 'greedy'" "unknown algorithm is named"
# A mapping that breaks a constraint is invalid (exit 1), with the constraint named.
printf 'constraints:\n- {target: MainMemory, type: temporal, factors: K=32 R=3 P=16}\n' >"$tmp/c.yaml"
expect 1 "model checks constraints" -- "$bin" model "$d3" "$tmp/map/map.yaml" "$tmp/c.yaml"
has "$tmp/err" "breaks a constraint" "the broken constraint is named"
# More spatial loops along a fan-out's side than one instance has (112 x 8
# threads under an H100 register file of 32 x 16), though the whole mesh
# would hold them: refused where the design gives its fan-outs (the search
# once returned it).
printf 'problem:\n  conv2d: {C: 2048, M: 512, P: 7, Q: 7}\nmapping:\n- {target: HBM, type: temporal, factors: C=1 M=1 R=1 S=1 N=1 P=1 Q=1, permutation: NCMRSPQ}\n- {target: L2, type: temporal, factors: C=1 M=1 R=1 S=1 N=1 P=1 Q=1, permutation: CMRSNPQ}\n- {target: L2, type: spatial, factors: C=1 M=16 R=1 S=1 N=1 P=7 Q=1, permutation: MPQNCRS, split: 4}\n- {target: L2, type: bypass, keep: [], bypass: [Weights, Inputs, Outputs]}\n- {target: SharedMemory, type: temporal, factors: C=1 M=2 R=1 S=1 N=1 P=1 Q=1, permutation: MCRSNPQ}\n- {target: SharedMemory, type: spatial, factors: C=1 M=1 R=1 S=1 N=1 P=1 Q=1, permutation: MPQNCRS, split: 4}\n- {target: SharedMemory, type: bypass, keep: [Weights, Inputs], bypass: [Outputs]}\n- {target: RegisterFile, type: temporal, factors: C=256 M=1 R=1 S=1 N=1 P=1 Q=1, permutation: CMRSNPQ}\n- {target: RegisterFile, type: spatial, factors: C=8 M=16 R=1 S=1 N=1 P=1 Q=7, permutation: MPQCRSN, split: 3}\n- {target: RegisterFile, type: bypass, keep: [Inputs], bypass: [Weights, Outputs]}\n' >"$tmp/h100_wide.yaml"
expect 1 "a mapping wider than a fan-out's side" -- "$bin" model "$src/arch/gpu/h100.yaml" "$tmp/h100_wide.yaml"
has "$tmp/err" "the spatial loops under RegisterFile take 112 x 8 instances (X x Y) of each one's fan-out of 32 x 16" "the fan-out's sides are named"
# Nothing fits: exit 1 with the reasons counted.
printf 'constraints:\n- {target: RegisterFile, type: temporal, factors: K=32 P=16}\n- {target: RegisterFile, type: bypass, keep: [Weights, Inputs, Outputs]}\n' >"$tmp/full.yaml"
expect 1 "map with no valid mapping" -- "$bin" map --timeout 100 "$d3" "$tmp/full.yaml"
has "$tmp/err" "no valid mapping" "says no mapping was valid"
has "$tmp/err" "capacity" "counts the capacity failures"
# A design whose outermost level (not DRAM) cannot hold the tensors: said
# so, with no advice to search longer.
sed '/- name: DRAM/,/shared_bandwidth/d' "$src/arch/teaching/pe_array.yaml" >"$tmp/nodram.yaml"
expect 1 "map on a design without DRAM whose buffer is too small" -- "$bin" map --set GlobalBuffer.depth=1024 "$tmp/nodram.yaml" "$src/examples/course/5_search/layer.yaml"
has "$tmp/err" "GlobalBuffer, the outermost level, is the backing store (the design has no DRAM)" "a design without a backing store big enough says so"
if grep -q "raise --timeout" "$tmp/err"; then bad "no advice to search longer when no search can help"; else ok "no advice to search longer when no search can help"; fi

# Networks: every layer mapped, identical layers once, results that do not
# depend on the thread count, and a layer that cannot be mapped reported
# while the others run.
nd="$data/network/design.yaml"
nn="$data/network/small_net.yaml"
expect 0 "network --help" -- "$bin" network --help
# (a tenth of the default budget, the climb on: what these check is the
# report, and that threads change nothing; the default took 20 s a run)
expect 0 "network" -- "$bin" network -q --threads 2 --effort 0.1 -o "$tmp/net" "$nd" "$nn"
has "$tmp/out" "4 layers (3 distinct)" "network counts its distinct layers"
has "$tmp/out" "(as conv)" "an identical layer is mapped once"
has "$tmp/out" "^total  *295936 " "network totals the MACs (repeats counted)"
has "$tmp/out" "energy per MAC by level" "network gives the energy per MAC by level"
has "$tmp/out" "pJ/MAC  */bound$" "network: a /bound column"
head -1 "$tmp/net/layers.csv" | grep -q "bound_cycles,cycles_over_bound,energy_bound_pj,energy_over_bound" &&
    ok "layers.csv: the bound and the ratios" || bad "layers.csv lacks the bound"
for f in layers.csv network.json conv/map.yaml dw/map.yaml pw/map.yaml conv_again/map.yaml; do
    if [ -s "$tmp/net/$f" ]; then ok "network -o writes $f"; else bad "network -o did not write $f"; fi
done
if [ "$(wc -l <"$tmp/net/layers.csv")" -eq 5 ]; then ok "layers.csv: a header and a row per layer"
else bad "layers.csv has $(wc -l <"$tmp/net/layers.csv") lines"; fi
# A layer's map.yaml holds its problem too: with the design it re-evaluates
# to the energy the network run reported (the depthwise layer as well,
# though the design's constraints name M).
for layer in pw dw; do
    "$bin" model -q --json "$nd" "$tmp/net/$layer/map.yaml" >"$tmp/$layer.json" 2>"$tmp/err"
    e_model=$(grep '"energy_pj"' "$tmp/$layer.json" | tail -1 | tr -d ' ,')
    e_net=$(sed -n "/\"name\": \"$layer\"/,/energy_pj_by_level/p" "$tmp/net/network.json" | grep '"energy_pj"' | tr -d ' ,')
    if [ -n "$e_model" ] && [ "$e_model" = "$e_net" ]; then ok "$layer/map.yaml re-evaluates to its network energy"
    else bad "$layer: model says '$e_model', network said '$e_net'"; cat "$tmp/err"; fi
done
# network --fuse: the runs the file's order gives, each layer's own figures
# as a chain's operation, the network's unfused totals the layers' sums, and
# what is not fused and why.
nf="$data/network/fuse_net.yaml"
expect 0 "network --fuse" -- "$bin" network -q --fuse --threads 2 --no-refine --max-evals 3000 "$nd" "$nf"
has "$tmp/out" "^  dw\.\.pw2  " "network --fuse: the run dw..pw2"
has "$tmp/out" "^  conv\.\.pw2  " "network --fuse: the run conv..pw2 (dw reads conv through windows)"
has "$tmp/out" "^  dw_again\.\.pw2_again  " "network --fuse: the run dw_again..pw2_again"
has "$tmp/out" "leave some unread: down$" "network --fuse: the strided layer leaving rows unread"
has "$tmp/out" "running a different number of times: mix$" "network --fuse: the layer run twice"
has "$tmp/out" "^Network fused: energy " "network --fuse: the network's totals both ways"
has "$tmp/out" "^Fused gap: [0-9.]*x at most: the fused network's edp over its proven lower bound" "network --fuse: the fused network's gap"
"$bin" network -q --fuse --json --threads 2 --no-refine --max-evals 3000 "$nd" "$nf" > "$tmp/fuse.json" 2>"$tmp/err"
if python3 - "$tmp/fuse.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fusion"]
assert [r["layers"] for r in f["runs"]] == [["conv", "dw", "pw", "pw2"], ["dw", "pw", "pw2"],
                                           ["conv_again", "dw_again", "pw_again", "pw2_again"],
                                           ["dw_again", "pw_again", "pw2_again"]], f["runs"]
assert f["checked"] == 20 and f["equal"] == 20, (f["checked"], f["equal"])
assert f["not_fused"] == [{"layer": "down", "why": "stride"}, {"layer": "mix", "why": "repeat"}]
# overlapping runs: one used at most
assert not (f["runs"][0]["fused"] and f["runs"][1]["fused"]), f["runs"]
e = 0.0
for l in d["layers"]:
    e += l["repeat"] * l["energy_pj"]
assert f["unfused"]["energy"] == e, (f["unfused"]["energy"], e)
run = f["runs"][0]
edp = lambda s: s["energy"] * s["cycles"]
assert run["beats_layers"] == (edp(run["best"]) < edp(run["unfused"]) and len(run["groups"]) > 0)
assert not run["fused"] or run["beats_layers"]
layer = {l["name"]: l for l in d["layers"]}
assert run["unfused"]["energy"] == sum(layer[n]["energy_pj"] for n in run["layers"])
# the fused network's gap: its EDP over a proven bound no higher than the
# unfused network's (a fused run's intermediates need not leave the chip)
fe = f["fused"]["energy"] * f["fused"]["cycles"]
assert f["lower_bound"] > 0 and abs(f["gap"] - fe / f["lower_bound"]) <= 1e-9 * f["gap"], f
assert f["gap"] >= 1 and f["lower_bound"] <= d["summary"]["lower_bound"] * (1 + 1e-12), (f["lower_bound"], d["summary"])
PY
then ok "network --fuse --json: runs, checks, unfused totals, the choice"; else bad "network --fuse --json"; fi
# -o: each fused run's map.yaml (its chain and fused mapping) re-evaluates
# with model to the run's fused energy
"$bin" network -q --fuse --threads 2 --no-refine --max-evals 3000 -o "$tmp/nfo" "$nd" "$nf" >/dev/null 2>&1
used=$(python3 -c 'import json,sys; r=[r for r in json.load(open(sys.argv[1]))["fusion"]["runs"] if r.get("fused")]; print("%s..%s %r" % (r[0]["layers"][0], r[0]["layers"][-1], r[0]["best"]["energy"]) if r else "unfused")' "$tmp/nfo/network.json" 2>/dev/null)
run=${used%% *} want=${used#* }
if [ "$used" = unfused ]; then bad "network --fuse -o: no test run fused"
elif [ -s "$tmp/nfo/$run/map.yaml" ] &&
    got=$("$bin" model -q --json "$nd" "$tmp/nfo/$run/map.yaml" 2>"$tmp/err" |
          python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["total"]["energy"]))') &&
    [ "$got" = "$want" ]; then ok "network --fuse -o: $run/map.yaml re-evaluates to its fused energy ($got pJ)"
else bad "network --fuse -o: $run/map.yaml gives '${got:-}', the run '$want'"; cat "$tmp/err"; fi
# through windows: a run's first layer computes the rows and columns the
# next one's windows reach (its 'same' padding), the report says so, and
# its map.yaml (the grown chain) re-evaluates to the run's energy
np="$data/network/fuse_pad.yaml"
expect 0 "network --fuse through windows" -- "$bin" network -q --fuse --threads 2 --no-refine --max-evals 3000 -o "$tmp/npo" "$nd" "$np"
has "$tmp/out" "^  pw1\.\.pw2  " "network --fuse: the run pw1..pw2 (dw1 reads pw1 through windows)"
has "$tmp/out" "counted as data, as Timeloop's layer shapes count it): pw1 P 14->16, Q 14->16; pw2 P 14->15, Q 14->15$" "network --fuse: the layers grown for the windows after them"
grown=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["fusion"]["runs"][0]
assert r["layers"] == ["pw1", "dw1", "pw2"] and r["grown"] == [{"dim": "P", "from": 14, "to": 16}, {"dim": "Q", "from": 14, "to": 16}], r
print(repr(r["best"]["energy"]) if r["fused"] else "unfused")' "$tmp/npo/network.json" 2>"$tmp/err")
if [ "$grown" = unfused ]; then bad "network --fuse through windows: pw1..pw2 did not fuse"
elif [ -n "$grown" ] && grep -q "p1: 16, q1: 16" "$tmp/npo/pw1..pw2/map.yaml" &&
    got=$("$bin" model -q --json "$nd" "$tmp/npo/pw1..pw2/map.yaml" 2>"$tmp/err" |
          python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["total"]["energy"]))') &&
    [ "$got" = "$grown" ]; then ok "network --fuse -o: pw1..pw2/map.yaml, pw1 at 16 x 16, re-evaluates to its fused energy ($got pJ)"
else bad "network --fuse -o through windows: '${got:-}' against '$grown'"; cat "$tmp/err"; fi
"$bin" network -q --threads 1 --effort 0.1 -o "$tmp/net1" "$nd" "$nn" >/dev/null 2>&1
if [ -s "$tmp/net1/network.json" ] && cmp -s "$tmp/net1/network.json" "$tmp/net/network.json" &&
    cmp -s "$tmp/net1/layers.csv" "$tmp/net/layers.csv"; then ok "network: 1 and 2 threads agree"
else bad "network results depend on the thread count"; fi
# (what is checked from here on is the report, not the search: a plain one)
# The workload changed from the command line: problem.N in every layer.
expect 0 "network --set problem.N=4" -- "$bin" network -q --no-refine --max-evals 2000 --set problem.N=4 "$nd" "$nn"
has "$tmp/out" "^total  *1183744 " "problem.N=4: every layer a batch of 4 (4 x 295936 MACs)"
expect 2 "--set problem.X on a problem without X" -- "$bin" model --set problem.X=4 "$data/good/conv1d_1level.yaml"
has "$tmp/err" "the shape 'conv1d' (.*conv1d_1level.yaml:[0-9]*) has no dimension or coefficient 'X'" "names the shape and the dimension"
expect 2 "--set problem.N without a workload" -- "$bin" energy --set problem.N=4 "$src/arch/eyeriss/eyeriss.yaml"
has "$tmp/err" "no 'problem' or 'network' layers in the input files to change" "says there is no workload to change"
printf 'mapspace_constraints:\n- {target: GlobalBuffer, type: spatial, factors: M=4}\n' >"$tmp/m4.yaml"
expect 1 "network with a layer that cannot be mapped" -- "$bin" network -q --no-refine "$nd" "$nn" "$tmp/m4.yaml"
has "$tmp/out" "has no dimension 'M'" "the depthwise layer's reason is given"
has "$tmp/out" "^total (mapped)" "the other layers still run"
printf 'mapspace_constraints:\n- {target: GlobalBuffer, type: spatial, factors: X=1}\n' >"$tmp/x.yaml"
expect 1 "network with a misspelled dimension" -- "$bin" network -q "$nd" "$nn" "$tmp/x.yaml"
has "$tmp/out" "unknown dimension 'X'" "a dimension no layer has is still an error"
expect 2 "network without a network" -- "$bin" network "$nd"
has "$tmp/err" "no 'network'" "says the network is missing"
printf 'network:\n  layers:\n  - {name: a, problem: {gemm: {M: 4, N: 4, K: 4}}}\n  - {name: a, problem: {gemm: {M: 8, N: 4, K: 4}}}\n' >"$tmp/dup.yaml"
expect 2 "network with two layers of one name" -- "$bin" network "$nd" "$tmp/dup.yaml"
has "$tmp/err" "dup.yaml:4:.*two layers are called 'a'" "the repeated name is located"
printf 'network:\n  layers:\n  - name: t\n    problem:\n      shape:\n        name: fc\n        dimensions: [C, M]\n        data_spaces:\n        - {name: Weights, projection: [[[C]], [[M]]]}\n        - {name: Inputs, projection: [[[C]]]}\n        - {name: Outputs, projection: [[[M]]], read_write: true}\n      instance: {C: 16, M: 8, H: 4}\n' >"$tmp/tl.yaml"
expect 1 "network with a layer the design's constraints do not fit" -- "$bin" network "$nd" "$tmp/tl.yaml"
has "$tmp/err" "tl.yaml:12:.*instance key 'H'" "a layer's own warnings are shown"
has "$tmp/out" "unknown dimension 'N'" "the constraint that does not fit is named"
# A shipped network on a shared design, when the shared inputs are present.
mapper="${NESTMAP_CONFORMANCE:-$src/../shared/conformance}/../mapper"
if [ -f "$mapper/eyeriss_like/input.yaml" ]; then
    expect 0 "MobileNet-v1 on eyeriss-like" -- "$bin" network -q --threads 2 --no-refine --max-evals 2000 "$mapper/eyeriss_like/input.yaml" "$src/workloads/networks/mobilenet_v1.yaml"
    has "$tmp/out" "^total  *568740352 " "every MobileNet-v1 layer mapped"
else
    echo "note - shared mapper inputs not found at $mapper: the MobileNet-v1 run is not checked"
fi

# The roofline bound: 16 x 3 x 3 x 3 x 208 x 240 MACs (the tutorial's
# stride-2 conv), each tensor once.
printf 'problem:\n  conv2d: {N: 1, C: 3, K: 16, P: 240, Q: 208, R: 3, S: 3, stride: 2}\n' >"$tmp/tut.yaml"
expect 0 "bound" -- "$bin" bound -q "$d3" "$tmp/tut.yaml"
has "$tmp/out" "multiply-accumulates   21565440" "bound counts the MACs"
has "$tmp/out" "roofline bound" "bound gives the roofline"
expect 0 "bound --json" -- "$bin" bound -q --json "$d3" "$tmp/tut.yaml"
has "$tmp/out" '"macs": 21565440' "bound --json"

# The energy table, and its ERT/ART export read back to the same numbers.
expect 0 "energy" -- "$bin" energy -q "$d3"
has "$tmp/out" "^RegisterFile  *regfile" "energy lists each component"
has "$tmp/out" "ERT" "energy names the source"
expect 0 "energy --json" -- "$bin" energy -q --json "$d3"
has "$tmp/out" '"read_pj": 512,' "energy --json has per-action energies"
"$bin" energy -q --ert "$d3" >"$tmp/ert.yaml"
sed '/^ERT:/,$d' "$d3" >"$tmp/noert.yaml"
expect 0 "model with the exported ERT" -- "$bin" model -q --json "$tmp/noert.yaml" "$tmp/map/map.yaml" "$tmp/ert.yaml"
grep '"energy_pj"' "$tmp/out" | tail -1 >"$tmp/e3"
if cmp -s "$tmp/e1" "$tmp/e3" && [ -s "$tmp/e3" ]; then ok "exported ERT gives the same energy"
else bad "exported ERT gives $(cat "$tmp/e3"), expected $(cat "$tmp/e1")"; fi

# Built-in energies: the same design without its ERT, side by side with it.
expect 0 "energy --builtin-energy" -- "$bin" energy -q --builtin-energy "$d3"
has "$tmp/out" "built-in SRAM (Horowitz" "built-in energies cite their source"
expect 0 "energy --compare" -- "$bin" energy -q --compare "$d3"
has "$tmp/out" "within 1.5x" "energy --compare counts the actions within 1.5x"
expect 0 "model --builtin-energy" -- "$bin" model -q --builtin-energy "$tmp/noert.yaml" "$tmp/map/map.yaml"
has "$tmp/out" "energy source        : built-in regfile" "model names each level's energy source"
expect 0 "model without an ERT" -- "$bin" model "$tmp/noert.yaml" "$tmp/map/map.yaml"
has "$tmp/err" "gives no technology; its built-in energy assumes 45 nm" "an assumed technology is a warning"
sed 's/{name: leak, energy: 0.0}/{name: leek, energy: 0.0}/' "$data/good/conv1d_1level.yaml" >"$tmp/leek.yaml"
expect 0 "an ERT action the model does not read" -- "$bin" model "$tmp/leek.yaml"
has "$tmp/err" "leek.yaml:36:14: warning: ERT action 'leek' of 'chip.Buffer' is not one nestmap reads, so its energy is not used; did you mean 'leak'?" "a misspelt ERT action is a located warning"
sed 's/class: regfile/class: regfil/' "$tmp/noert.yaml" >"$tmp/badclass.yaml"
expect 2 "unknown class without an ERT" -- "$bin" model -q "$tmp/badclass.yaml" "$tmp/map/map.yaml"
has "$tmp/err" "did you mean 'regfile'" "an unknown class suggests the closest built-in one"

# The design library: every design loads with its energies built in and no
# assumed default, and maps a small network (a conv, a depthwise, pointwise
# layers) end to end, each layer within 20,000 uniform draws (the search's
# quality is bench/'s; an unconstrained 256-PE design searches for minutes).
# examples/network_study.sh runs the full matrix.
for design in "$src"/arch/*/*.yaml; do
    name=$(basename "$design" .yaml)
    expect 0 "arch $name: energy" -- "$bin" energy "$design"
    if [ -s "$tmp/err" ]; then bad "arch $name: warnings: $(head -1 "$tmp/err")"; else ok "arch $name: no warning"; fi
    has "$tmp/out" "built-in" "arch $name: built-in energies"
    expect 0 "arch $name: bound" -- "$bin" bound -q "$design" "$src/workloads/layers/resnet50_conv1.yaml"
    has "$tmp/out" "^memory bound  *[0-9]* cycles" "arch $name: states its off-chip bandwidth"
    expect 0 "arch $name: a small network" -- "$bin" network -q --threads 2 --max-evals 20000 --no-refine "$design" "$data/network/small_net.yaml"
    has "$tmp/out" "^total  *[0-9]" "arch $name: every layer mapped"
done

# --set changes the design before it is parsed; fan-outs resize the array
# and everything inside it; mistakes are errors that name the option.
eyeriss="$src/arch/eyeriss/eyeriss.yaml"
expect 0 "energy --set a depth with a binary suffix" -- "$bin" energy --set GlobalBuffer.depth=64Ki "$eyeriss"
has "$tmp/out" "GlobalBuffer" "--set: the design still loads"
expect 0 "energy --set column.meshX=16 --set PE.meshY=16" -- "$bin" energy --set column.meshX=16 --set PE.meshY=16 "$eyeriss"
has "$tmp/out" "^MAC  *intmac  *256 " "--set resizes eyeriss to 16x16 PEs"
expect 0 "energy --set MAC.meshX=128 on tpu_v1" -- "$bin" energy --set MAC.meshX=128 "$src/arch/systolic/tpu_v1.yaml"
has "$tmp/out" "^WeightReg  *regfile  *32768 " "--set on a subtree that shares its name with a component resizes the subtree"
expect 0 "energy --set DRAM.type=HBM2" -- "$bin" energy --set DRAM.type=HBM2 "$eyeriss"
has "$tmp/out" "HBM2" "--set DRAM.type changes the DRAM's energy source"
expect 2 "--set unknown component" -- "$bin" energy --set GlobalBufer.depth=3 "$eyeriss"
has "$tmp/err" "^--set GlobalBufer.depth=3: error: .*did you mean 'GlobalBuffer'" "--set: unknown component suggests the closest"
expect 2 "--set unknown attribute" -- "$bin" energy --set GlobalBuffer.dpth=3 "$eyeriss"
has "$tmp/err" "did you mean 'depth'" "--set: unknown attribute suggests the closest"
expect 2 "--set bad value" -- "$bin" energy --set GlobalBuffer.depth=-3 "$eyeriss"
has "$tmp/err" "^--set GlobalBuffer.depth=-3: error: attribute 'depth' must be a positive integer" "--set: a bad value is located at the option"
expect 2 "--set without a value" -- "$bin" energy --set GlobalBuffer.depth "$eyeriss"
expect 2 "--set instances on a 2-D array" -- "$bin" energy --set PE.instances=512 "$src/arch/simple/weight_stationary.yaml"
has "$tmp/err" "give PE.meshX and PE.meshY" "--set instances on a 2-D array says which to give"

# A depthwise layer alone on a design whose constraints name M.
printf 'problem:\n  depthwise: {C: 32, P: 28, Q: 28, R: 3, S: 3}\n' >"$tmp/dw_alone.yaml"
expect 0 "map a depthwise layer on a design written for convolutions" -- "$bin" map -q --threads 2 "$src/arch/eyeriss/eyeriss.yaml" "$tmp/dw_alone.yaml"

# Mappings as code: --loops prints the lecture's loops, --explain says why a
# mapping is invalid and which factor to move, or where a valid one spends.
conv1d="$src/examples/conv1d_os.yaml"
expect 0 "model --loops" -- "$bin" model -q --loops "$conv1d"
cat >"$tmp/loops.want" <<'LOOPS'
# conv1d as loops, outermost first; each level's tiles in words
# MainMemory: keeps Weights (3), Inputs (18), Outputs (16)
for p in range(16):
    # Buffer: keeps Weights (3), Inputs (3), Outputs (1)
    for r in range(3):
        # MACC
        Outputs[p] += Weights[r] * Inputs[r + p]
LOOPS
if cmp -s "$tmp/out" "$tmp/loops.want"; then ok "--loops prints the 1-D conv as two loops"; else bad "--loops:"; diff "$tmp/loops.want" "$tmp/out"; fi
expect 1 "model --explain on a mapping that overflows the buffer" -- "$bin" model -q --explain --set Buffer.depth=4 "$conv1d"
has "$tmp/out" "^Buffer keeps Weights 3 + Inputs 3 + Outputs 1 = 7 words; it holds 4: over by 3 (1.75x)" "--explain: the tiles and the excess"
has "$tmp/out" "^  move a factor 3 of R from Buffer's temporal loops to MainMemory: Buffer then holds 3 words, and the mapping is valid" "--explain: the factor to move"
printf 'mapping:\n- {target: MainMemory, type: temporal, factors: R=1 P=4}\n- {target: Buffer, type: temporal, factors: "R=3 P=5,4"}\n' >"$tmp/over.yaml"
expect 1 "model --explain on residuals that cover past the bound" -- "$bin" model -q --explain "$conv1d" "$tmp/over.yaml"
has "$tmp/out" "with their residuals, cover 19 .*P = 16" "--explain: what residuals cover"
has "$tmp/out" "^  P's factors, outermost level first: MainMemory 4 Buffer 5,4$" "--explain: factors with their residuals"
expect 0 "model --explain on a valid mapping" -- "$bin" model -q --explain "$conv1d"
has "$tmp/out" "^utilization 100.00 % = 100.00 % of the MACC units in use" "--explain: utilization"
has "$tmp/out" "^energy 215.9 pJ: MACC 18.9 %, MainMemory Inputs 22.2 %" "--explain: the energy's largest parts"
expect 2 "--loops with --json is a usage error" -- "$bin" model --loops --json "$conv1d"
has "$tmp/err" "print text; leave out --json" "--loops --json says why"
expect 0 "map --loops --explain" -- "$bin" map -q --max-evals 3000 --loops --explain "$src/arch/eyeriss/eyeriss.yaml" "$src/workloads/layers/resnet50_res5_3x3.yaml"
has "$tmp/out" "parallel_for .* in range([0-9]*):  # across " "map --loops: spatial loops are parallel_for"
has "$tmp/out" "Outputs\[0, m, q, p\] += Weights\[c, m, r, s\] \* Inputs\[0, c, r + p, s + q\]" "map --loops: the convolution's statement"
has "$tmp/out" "^  ArrayColumns -> ArrayRows: X [0-9]* of 14" "map --explain: each fan-out's use"

# Every result says how far it is from the bound: map prints the roofline's
# cycle and energy bounds and the ratios, and warns (stderr and JSON) when a
# search lands above 2x the cycle bound; network has a /bound column.
tpu="$src/arch/systolic/tpu_v1.yaml" res3="$src/workloads/layers/resnet50_res3_3x3.yaml"
expect 0 "map on tpu_v1, short search" -- "$bin" map --threads 2 --max-evals 3000 --no-refine "$tpu" "$res3"
has "$tmp/out" "^Cycle bound   : [0-9]* (roofline, bound by .*); this mapping takes [0-9.]*x" "map: the cycle bound and the ratio"
has "$tmp/out" "^Energy bound  : [0-9.]* pJ (every operation, each tensor once at DDR3); this mapping spends [0-9.]*x" "map: the energy bound and the ratio"
has "$tmp/err" "warning: the best mapping takes .*x the roofline bound of [0-9]* cycles: a longer search may do better (try --victory" "map: a warning far above the bound, naming the option"
has "$tmp/out" "^Gap           : [0-9.]*x at most: the edp [0-9.e+]* pJ\*cycles over its proven lower bound [0-9.e+]* (the operand floor: every operand read from the innermost level keeping it, each level keeping a tensor filled with its share once or as often as its capacity forces, each word carried the fewest network hops its receivers' places allow, over the fan-outs the constraints allow)" "map: the gap over the proven bound, and where the bound comes from"
has "$tmp/out" "^Operand floor : [0-9.]* pJ and [0-9]* cycles at least (every operand read from the innermost level keeping it, each level keeping a tensor filled with its share once or as often as its capacity forces, each word carried the fewest network hops its receivers' places allow, over the fan-outs the constraints allow); this mapping spends [0-9.]*x and takes [0-9.]*x" "map: the operand floor's energy and cycles"
# Where the PEs keep nothing (DianNao), every operand comes from the global
# buffer: the operand floor, not the roofline, says how far a mapping is
# from the best (622x by the roofline on this layer, 3.5x by the floor).
expect 0 "map on no_local_reuse" -- "$bin" map --threads 2 "$src/arch/teaching/no_local_reuse.yaml" "$src/tests/data/search/r50_conv3_3x3.yaml"
gap=$(sed -n 's/^Gap *: \([0-9.]*\)x at most.*operand floor.*/\1/p' "$tmp/out")
if [ -n "$gap" ] && awk -v g="$gap" 'BEGIN { exit !(g >= 1 && g < 5) }'; then
    ok "no_local_reuse: the operand floor bounds the gap (${gap}x)"
else bad "no_local_reuse: gap '$gap'"; grep -E "^(Gap|Operand)" "$tmp/out"; fi
has "$tmp/out" "^Cycle bound   : [0-9]* (roofline, bound by compute)" "no_local_reuse: the roofline's cycles"
has "$tmp/out" "^Operand floor : [0-9.]* pJ and 72[0-9]* cycles at least" "no_local_reuse: the floor's cycles, bound by the global buffer's bandwidth"

# A layer the constraints keep from filling the array: the fill bound, and
# a warning that blames the constraints, not the search.
printf 'problem:\n  conv2d: {C: 3, M: 64, P: 112, Q: 112, R: 7, S: 7, stride: 2}\n' >"$tmp/c1.yaml"
expect 0 "map: a constraint-limited layer" -- "$bin" map --threads 2 --effort 0.01 "$src/arch/systolic/systolic_16x16.yaml" "$tmp/c1.yaml"
has "$tmp/out" "^Fill bound    : the constraints keep at most 48 of 256 arithmetic units busy at once: at least 2458624 cycles; this mapping takes 1.00x" "map: the fill bound (C = 3 x 16 columns of M)"
has "$tmp/err" "because the constraints and the layer's factors keep at most 48 of the 256 arithmetic units busy at once .*: a longer search cannot do better" "map: a constraint-limited layer is said to be one"
expect 0 "map --json on tpu_v1" -- "$bin" map -q --json --threads 2 --max-evals 3000 --no-refine "$tpu" "$res3"
if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); b=j['bound']; s=j['summary']; sys.exit(0 if abs(b['cycles_over_bound']-s['cycles']/b['cycles'])<1e-9 and b['cycles_over_bound']>2 and any('roofline bound' in w['message'] for w in j['warnings']) else 1)" "$tmp/out"; then
    ok "map --json: bound, ratio, and the warning in warnings[] (also under -q)"
else
    bad "map --json bound"; head -c 600 "$tmp/out"
fi

# ---- Timeloop users' files (README, "Coming from Timeloop") ----
good=$data/good/timeloopfe.yaml
expect 0 "a timeloopfe-style design (variables, expressions, inline constraints)" -- "$bin" model -q "$good"
has "$tmp/out" "^inter_PE_spatial \[\]" "model: a container's fan-out is inter_PE_spatial"
has "$tmp/out" "^GlobalBuffer \[ Inputs:18 Outputs:512 \]" "model: a component's dataspace constraint keeps what it says"
expect 1 "--jinja reaches the template (2 lanes cannot take K=4)" -- "$bin" model -q --jinja lanes=2 "$good"
expect 2 "--jinja needs NAME=VALUE" -- "$bin" model --jinja 2x=1 "$good"
has "$tmp/err" "--jinja takes NAME=VALUE" "--jinja: a bad name is a usage error"
expect 0 "model -o --timeloop-names writes timeloop-input.yaml" -- "$bin" model -q -o "$tmp/tl" --timeloop-names "$good"
[ -s "$tmp/tl/timeloop-input.yaml" ] && ok "timeloop-input.yaml written" || bad "no timeloop-input.yaml"

# Networks between levels (noc.h): the text report's sections and the
# fJ/compute lines; timeloop-input.yaml keeps them (an inferred network's
# attributes on its level, an explicit one as a component both ends name),
# so it reads back to the same energy.
noc=$data/good/noc.yaml
expect 0 "a design whose networks cost energy" -- "$bin" model -q "$noc"
has "$tmp/out" "^=== on-chip network GLB <==> RF ===" "model: the inferred network's section"
has "$tmp/out" "^    GLB_upd  *=  *437.50" "model: the explicit update network's fJ/compute"
has "$tmp/out" "^Energy        : 387.50 pJ" "model: the total includes the networks"
expect 0 "model -o --timeloop-names with networks" -- "$bin" model -q -o "$tmp/tln" --timeloop-names "$noc"
has "$tmp/tln/timeloop-input.yaml" "network_update: GLB_upd" "timeloop-input.yaml: the level names its update network"
has "$tmp/tln/timeloop-input.yaml" "class: XY_NoC" "timeloop-input.yaml: the explicit network as a component"
has "$tmp/tln/timeloop-model.stats.txt" "^    GLB <==> RF = 1385.42" "timeloop stats: the network's fJ/Compute line"
expect 0 "timeloop-input.yaml with networks reads back" -- "$bin" model -q "$tmp/tln/timeloop-input.yaml"
has "$tmp/out" "^Energy        : 387.50 pJ" "timeloop-input.yaml: the same energy, networks included"

# Every shipped design: its classes sort as Timeloop's topology sorts them
# (storage: DRAM, SRAM, regfile, smartbuffer, storage; compute: mac,
# compute; model/topology.hpp), and its best mapping's timeloop-input.yaml
# reads back to the same cycles and energy.
for design in $(cd "$src" && find arch -name '*.yaml' | sort); do
    "$bin" energy -q --json "$src/$design" >"$tmp/en.json" 2>"$tmp/err" &&
        python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["components"]:
    compute = "compute_pj" in c
    keys = ["mac", "compute"] if compute else ["DRAM", "SRAM", "regfile", "smartbuffer", "storage"]
    if not any(k in c["class"] for k in keys):
        sys.exit("%s: class %s is not %s for Timeloop" % (c["name"], c["class"], "compute" if compute else "storage"))
' "$tmp/en.json" 2>"$tmp/err" && ok "$design: classes Timeloop sorts the same way" ||
        bad "$design: $(tail -1 "$tmp/err")"
    rm -rf "$tmp/rt"
    if "$bin" map -q --threads 2 --max-evals 300 --no-refine -o "$tmp/rt" --timeloop-names "$src/$design" \
        "$src/workloads/layers/resnet50_conv1.yaml" >"$tmp/rt1" 2>"$tmp/err" &&
        "$bin" model -q "$tmp/rt/timeloop-input.yaml" >"$tmp/rt2" 2>>"$tmp/err" &&
        [ "$(grep -E '^(Cycles|Energy) +:' "$tmp/rt1")" = "$(grep -E '^(Cycles|Energy) +:' "$tmp/rt2")" ]; then
        ok "$design: timeloop-input.yaml gives the same cycles and energy"
    else
        bad "$design: timeloop-input.yaml round trip"; head -3 "$tmp/err"
    fi
done

# A sparse design's timeloop-input.yaml carries its densities, formats,
# gating and skipping, metadata stores and the sparse actions' energies, so
# it reads back to the same counts (it was once written dense).
for f in gemm_gating gemm_compressed spmm_banded; do
    rm -rf "$tmp/sprt"
    if "$bin" model -q --json -o "$tmp/sprt" --timeloop-names "$src/examples/sparse/$f.yaml" \
        >"$tmp/sprt1" 2>"$tmp/err" &&
        "$bin" model -q --json "$tmp/sprt/timeloop-input.yaml" >"$tmp/sprt2" 2>>"$tmp/err" &&
        python3 - "$tmp/sprt1" "$tmp/sprt2" <<'PY' 2>>"$tmp/err"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["summary"] == b["summary"], (a["summary"], b["summary"])
for la, lb in zip(a["levels"], b["levels"]):
    for t, d in la.get("dataspaces", {}).items():
        e = lb["dataspaces"][t]
        for k, v in d.items():
            assert e.get(k) == v, (la["name"], t, k, v, e.get(k))
PY
    then
        ok "examples/sparse/$f.yaml: timeloop-input.yaml reads back to every sparse count"
    else
        bad "examples/sparse/$f.yaml: timeloop-input.yaml round trip"; head -3 "$tmp/err"
    fi
done

# SIGTERM (timeout, a batch scheduler) ends a search as Ctrl-C does: the best
# mapping is reported and its files written, exit 0.
"$bin" map -q --threads 2 --victory 1000000 -o "$tmp/term" "$src/arch/eyeriss/eyeriss.yaml" \
    "$src/workloads/layers/resnet50_res3_3x3.yaml" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 2
kill -TERM "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^Cycles " "$tmp/out" && [ -s "$tmp/term/map.yaml" ]; then
    ok "SIGTERM: the best mapping reported and written (exit 0)"
else
    bad "SIGTERM: exit $rc"; tail -3 "$tmp/err"
fi

# A folder of workload files is a network, a layer per file.
mkdir -p "$tmp/net"
for l in resnet50_conv1 resnet50_res3_3x3; do cp "$src/workloads/layers/$l.yaml" "$tmp/net/"; done
expect 0 "network over a folder of layer files" -- "$bin" network -q --threads 2 --max-evals 2000 \
    "$src/arch/eyeriss/eyeriss.yaml" "$tmp/net"
has "$tmp/out" "^resnet50_res3_3x3 " "network: the folder's files are its layers"

# A fan-out too wide along X that the array holds when split: --explain
# says which split fits.
expect 1 "model --explain on spatial factors all along X" -- "$bin" model -q --explain "$data/good/split_hint.yaml"
has "$tmp/out" "set split: 1 in PE's spatial entry: the first 1 loops of its permutation go along X (4 of 4), the rest along Y (4 of 4)" "--explain suggests the split"
has "$tmp/out" "move it to DRAM's temporal loops" "--explain: a container's factor moves to the level above"
expect 1 "model on spatial factors all along X" -- "$bin" model -q "$data/good/split_hint.yaml"
has "$tmp/err" "or give the spatial entry a split: that puts fewer loops along X (--explain says which fits)" "without --explain the error names split: too"

# Sparse tensors: the densities are the problem's, --set changes them as
# Timeloop names them (problem.densities.T), beside a shorthand too; more
# zeros in A leave fewer computes on the design that skips B's reads where A
# is zero.
sp="$src/examples/sparse/gemm_gating.yaml"
computes() { python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["actual_computes"])'; }
c50=$("$bin" model -q --json "$sp" | computes)
c25=$("$bin" model -q --json --set problem.densities.A=0.25 "$sp" | computes)
if [ -n "$c50" ] && [ -n "$c25" ] && [ "$c25" -lt "$c50" ]; then
    ok "--set problem.densities.A=0.25: $c25 computes, $c50 at 0.5"
else
    bad "--set problem.densities.A: '$c25' computes, '$c50' at 0.5"
fi
printf 'problem:\n  gemm: {M: 64, N: 64, K: 64}\n  densities: {A: 0.5, B: {distribution: hypergeometric, density: 0.3}}\n' >"$tmp/gemm_dens.yaml"
expect 0 "a shorthand with densities" -- "$bin" model -q --json "$sp" --set problem.densities.B=1
sed '/^problem:/,/^sparse_optimizations:/{/^sparse_optimizations:/!d}' "$sp" >"$tmp/sp_design.yaml"
if "$bin" model -q --json "$tmp/sp_design.yaml" "$tmp/gemm_dens.yaml" 2>"$tmp/err" | computes >"$tmp/c"; then
    [ "$(cat "$tmp/c")" = "$c50" ] && ok "gemm shorthand with densities: the same $c50 computes as the full form" ||
        bad "gemm shorthand with densities: $(cat "$tmp/c") computes, $c50 in the full form"
else
    bad "gemm shorthand with densities: $(head -2 "$tmp/err")"
fi
expect 2 "a density above 1 through --set" -- "$bin" model -q --set problem.densities.A=2 "$sp"
has "$tmp/err" "must be between 0 and 1" "... says the range"

# A design's formats flatten the convolution's ranks (the sparse A100's
# weights: [[C, M, R, S]]); a depthwise layer has no M, a stand-in of size
# 1 there as in the constraints, so the design maps it (a name that is no
# dimension at all stays an error: tests/data/bad/format_flattened_dim.yaml).
printf 'problem:\n  depthwise: {C: 32, P: 14, Q: 14, R: 3, S: 3}\n' >"$tmp/dw.yaml"
expect 0 "a depthwise layer on the sparse A100 (formats flattening M)" -- \
    "$bin" map -q --no-refine --max-evals 50 "$src/arch/gpu/a100_sparse.yaml" "$tmp/dw.yaml"

# rank_application_order (Timeloop's ApplyRanksOuterToInner and
# ApplyRanksInnerToOuter): with four ranks at DRAM over a tile the buffer's
# two ranks pre-tile, one loop (M) is left for two ranks: the outer rank
# takes it by default and the rank below stays empty; inner_to_outer gives
# it to the inner one, and the outermost rank, empty, still holds its
# offsets (a top rank always counts).
python3 - "$src/examples/sparse/gemm_compressed.yaml" "$tmp" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = "      - name: A\n        ranks:\n        - format: UOP\n        - format: UOP\n        - format: CP\n  - name: Buffer"
assert old in s
four = old.replace("- format: UOP\n        - format: CP", "- format: UOP\n        - format: UOP\n        - format: CP")
open(sys.argv[2] + "/o2i.yaml", "w").write(s.replace(old, four))
open(sys.argv[2] + "/i2o.yaml", "w").write(s.replace(old, four.replace("ranks:", "rank_application_order: inner_to_outer\n        ranks:")))
PY
"$bin" model -q "$tmp/o2i.yaml" >"$tmp/out" 2>&1
has "$tmp/out" "format UOP UOP UOP CP (outermost first): .*innermost rank first: 8192/0 0/272 0/0 0/20$" "outer_to_inner: the loop on the outermost rank, the one below empty"
"$bin" model -q "$tmp/i2o.yaml" >"$tmp/out" 2>&1
has "$tmp/out" "format UOP UOP UOP CP (outermost first): .*innermost rank first: 8192/0 0/272 0/20 0/8$" "inner_to_outer: the loop on the inner rank, the outermost empty but counted"

# --set changes sparse options as a sweep needs them (override.h): gating
# and skipping at a level and at the compute, a tensor's rank formats.
c_cg=$("$bin" model -q --json --set sparse.MAC.compute=skipping "$sp" | python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]; print(s["actual_computes"])')
"$bin" model -q --set sparse.MAC.compute=skipping "$sp" >"$tmp/out" 2>&1
has "$tmp/out" "computes             : $c_cg performed of 262144 (0 gated, " "sparse.MAC.compute=skipping: the compute's gating becomes skipping"
"$bin" model -q "$sp" >"$tmp/base.txt" 2>&1
"$bin" model -q --set sparse.Buffer.action=gating "$sp" >"$tmp/out" 2>&1
e0=$(sed -n 's/^Energy *: \([0-9.]*\) pJ.*/\1/p' "$tmp/base.txt"); e1=$(sed -n 's/^Energy *: \([0-9.]*\) pJ.*/\1/p' "$tmp/out")
[ -n "$e0" ] && [ -n "$e1" ] && [ "$e0" != "$e1" ] && ok "sparse.Buffer.action=gating: B's skipped reads become gated ($e0 pJ skipping, $e1 gating)" ||
    bad "sparse.Buffer.action=gating: '$e0' and '$e1' pJ"
"$bin" model -q --set sparse.Buffer.format.A=UOP,CP --set sparse.DRAM.format.A=UOP,UOP,CP "$sp" >"$tmp/out" 2>&1
has "$tmp/out" "format UOP CP (outermost first)" "sparse.Buffer.format.A=UOP,CP: A compressed at the buffer"
has "$tmp/out" "format UOP UOP CP (outermost first)" "... and, a new target, at DRAM"
expect 2 "a sparse option on a level the design gives none" -- "$bin" model -q --set sparse.DRAM.action=gating "$sp"
has "$tmp/err" "the design gives 'DRAM' no sparse optimizations to change" "... says so"
expect 2 "an unknown rank format" -- "$bin" model -q --set sparse.Buffer.format.A=CSR "$sp"
has "$tmp/err" "'CSR' is not a rank format (UOP, UB, CP, B, RLE; or none for no format)" "... names the formats"
expect 2 "a misspelt level" -- "$bin" model -q --set sparse.Bufer.format.A=CP "$sp"
has "$tmp/err" "did you mean 'Buffer'?" "... suggests the level"
{ sed '/^problem:/,/^sparse_optimizations:/{/^sparse_optimizations:/!d}' "$sp" | sed '/^mapping:/,$d'; } >"$tmp/sp_arch.yaml"
printf 'problem:\n  gemm: {M: 16, N: 16, K: 16}\n  densities: {A: 0.5, B: 0.5}\n' >"$tmp/sp_layer.yaml"
printf 'sweep:\n  design: sp_arch.yaml\n  workloads: [sp_layer.yaml]\n  vary:\n    - set: sparse.MAC.compute\n      values: [gating, skipping]\n  objective: edp\n' >"$tmp/sp_sweep.yaml"
expect 0 "a sweep over gating and skipping" -- "$bin" sweep -q --no-refine --max-evals 500 -o "$tmp/spsw" "$tmp/sp_sweep.yaml"
[ "$(cut -d, -f2 "$tmp/spsw/points.csv" | tr '\n' ' ')" = "sparse.MAC.compute gating skipping " ] &&
    ok "the sweep's points.csv: a column sparse.MAC.compute, gating then skipping" || bad "sparse sweep: $(head -3 "$tmp/spsw/points.csv")"

# map reports a format's metadata per rank as model does for the same
# mapping (its best, read back).
rm -rf "$tmp/spmap"
"$bin" map -q --max-evals 2000 --threads 2 -o "$tmp/spmap" "$src/examples/sparse/gemm_compressed.yaml" >"$tmp/spmap.txt" 2>/dev/null
"$bin" model -q "$src/examples/sparse/gemm_compressed.yaml" "$tmp/spmap/map.yaml" >"$tmp/spmodel.txt" 2>/dev/null
grep 'format .*(outermost first)' "$tmp/spmap.txt" >"$tmp/spf1"
grep 'format .*(outermost first)' "$tmp/spmodel.txt" >"$tmp/spf2"
[ -s "$tmp/spf1" ] && cmp -s "$tmp/spf1" "$tmp/spf2" &&
    ok "map prints each format's metadata per rank, as model of its best mapping does" ||
    { bad "map's format lines differ from model's"; diff "$tmp/spf1" "$tmp/spf2"; }

# A level holding uncompressed what its parent holds compressed must say it
# decompresses (Timeloop's check): invalid, naming the attribute.
python3 - "$src/examples/sparse/gemm_compressed.yaml" >"$tmp/decomp.yaml" <<'PY'
import sys
t = open(sys.argv[1]).read()
t = t.replace("""      - name: A
        ranks:
        - format: UOP
        - format: CP
    action_optimization:""", """      - name: A
        ranks:
        - format: UOP
    action_optimization:""")
sys.stdout.write(t)
PY
expect 1 "a compressed tile under an uncompressed level without decompression" -- \
    "$bin" model -q "$tmp/decomp.yaml"
has "$tmp/err" "decompression (from parent level) needed but not supported" "... says why, as Timeloop"
has "$tmp/err" "decompression_supported: true" "... and what to write"

# Where Timeloop's sparse model is not self-consistent nestmap gives the
# true figure: a hypergeometric tile larger than its tensor's zeros holds at
# least the rest (Timeloop's unsigned subtraction wraps there and scales a
# full tile's instances to 0); and a compressed tile below an uncompressed
# one (on-chip compression, where Timeloop aborts) is refused, saying so.
sed -e 's/A: {distribution: fixed_structured, density: 0.5}/A: {distribution: hypergeometric, density: 1.0}/' \
    -e 's/depth: 2048, width: 8/depth: 4096, width: 8/' -e 's/metadata_storage_depth: 512/metadata_storage_depth: 1024/' \
    "$src/examples/sparse/gemm_compressed.yaml" >"$tmp/hyper1.yaml"
if "$bin" model -q --json "$tmp/hyper1.yaml" 2>"$tmp/err" | python3 -c '
import json, sys
a = json.load(sys.stdin)["levels"][1]["dataspaces"]["A"]
assert a["actual_reads"] == a["reads"] and a["utilized_instances_avg"] == 1, a
'; then
    ok "a full hypergeometric tile under a parent with metadata: every read, every instance"
else
    bad "full hypergeometric tile: $(head -3 "$tmp/err")"
fi
# Banded densities (Timeloop's: nonzeros within band_width of the diagonal
# of a square tensor).  A band as wide as the tensor is the dense tensor:
# every count and energy equal to density 1's.  A diagonal A (band 0) in
# the example: every 16 x 64 tile of A holds 16 nonzeros, so the buffer
# reads 1/64 of A's 262,144 reads and is filled with 16,384 / 64, and
# skipping leaves 1/64 of the computes.
for b in "banded, band_width: 70" "fixed_structured, density: 1.0"; do
    sed -e "s/A: {distribution: fixed_structured, density: 0.5}/A: {distribution: $b}/" \
        -e 's/depth: 2048, width: 8/depth: 8192, width: 8/' -e 's/metadata_storage_depth: 512/metadata_storage_depth: 4096/' \
        "$src/examples/sparse/gemm_compressed.yaml" >"$tmp/band_${b%%,*}.yaml"
    "$bin" model -q --json "$tmp/band_${b%%,*}.yaml" 2>"$tmp/err" | sed '/density_distribution\|wall_seconds/d' >"$tmp/band_${b%%,*}.json"
done
if [ -s "$tmp/band_banded.json" ] && cmp -s "$tmp/band_banded.json" "$tmp/band_fixed_structured.json"; then
    ok "a band as wide as the tensor: the dense tensor's counts and energies, exactly"
else
    bad "full band vs dense: $(diff "$tmp/band_banded.json" "$tmp/band_fixed_structured.json" | head -5)"
fi
sed -e 's/A: {distribution: fixed_structured, density: 0.5}/A: {distribution: banded, band_width: 0}/' \
    "$src/examples/sparse/gemm_compressed.yaml" >"$tmp/diag.yaml"
if "$bin" model -q --json "$tmp/diag.yaml" 2>"$tmp/err" | python3 -c '
import json, sys
j = json.load(sys.stdin)
a = j["levels"][1]["dataspaces"]["A"]
assert (a["reads"], a["actual_reads"], a["fills"], a["actual_fills"]) == (262144, 4096, 16384, 256), a
assert a["density_distribution"] == "banded", a
assert j["summary"]["actual_computes"] == 4096, j["summary"]
'; then
    ok "a diagonal A: the buffer reads 4,096 of 262,144, fills 256 of 16,384, 4,096 computes"
else
    bad "diagonal A: $(head -3 "$tmp/err")"
fi
if "$bin" model -q --json "$src/examples/sparse/spmm_banded.yaml" 2>"$tmp/err" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["summary"]["actual_computes"] == 766 * 64, j["summary"]
a = j["levels"][1]["dataspaces"]["A"]
assert a["utilized_capacity"] == 48, a
'; then
    ok "examples/sparse/spmm_banded.yaml: 766 nonzeros x 64 columns computes, 48 in the buffer's 16 x 256 tile"
else
    bad "spmm_banded: $(head -3 "$tmp/err")"
fi
expect 2 "--set a density on a banded tensor" -- "$bin" model -q --set problem.densities.A=0.5 "$tmp/diag.yaml"
has "$tmp/err" "a banded density follows from band_width: 0 each side of the diagonal of 'A' (64 x 64) holds 64 nonzeros, density 0.015625, not 0.5" "... says what the band gives"
python3 - "$src/examples/sparse/gemm_compressed.yaml" >"$tmp/onchip.yaml" <<'PY'
import sys
t = open(sys.argv[1]).read()
t = t.replace("""        - format: UOP
        - format: UOP
        - format: CP
""", """        - format: UOP
""")
sys.stdout.write(t)
PY
expect 1 "a compressed tile below an uncompressed one" -- "$bin" model -q "$tmp/onchip.yaml"
has "$tmp/err" "compressing on chip is not modelled" "... refused, saying why"

# A chain of operations and its fused mapping (fusion.h): per group and
# tensor, the intermediates never in DRAM; the unfused mapping moves them.
fx="$src/examples/fused"
expect 0 "model on a fused attention" -- "$bin" model -q "$fx/accelerator.yaml" "$fx/attention.yaml" "$fx/attention_fused.yaml"
has "$tmp/out" "^Group 1: scores, softmax, values, fused at GlobalBuffer" "fused: the group and its level"
has "$tmp/out" "^  S  .*scores -> softmax; kept at RF, GlobalBuffer (never in DRAM)" "fused: S never in DRAM"
has "$tmp/out" "DRAM words 1572864," "fused: DRAM moves Q, K, V and O once (4 x 393216 words)"
expect 0 "model on the unfused attention" -- "$bin" model -q "$fx/accelerator.yaml" "$fx/attention.yaml" "$fx/attention_unfused.yaml"
has "$tmp/out" "^  S  .*scores -> softmax through DRAM; 6291456 DRAM words" "unfused: S written and read back"
has "$tmp/out" "DRAM words 14155776," "unfused: S and P through DRAM (1572864 + 4 x 3145728 words)"
expect 1 "a fused group whose tiles do not fit" -- "$bin" model -q --set GlobalBuffer.depth=8192 "$fx/accelerator.yaml" "$fx/attention.yaml" "$fx/attention_fused.yaml"
has "$tmp/err" "needs 81920 words at 'GlobalBuffer', which holds 65536" "the group's capacity, said"
expect 0 "model -o DIR on a chain" -- "$bin" model -q -o "$tmp/fused" "$data/good/fused_ffn.yaml"
has "$tmp/fused/stats.txt" "^==== operation down ====" "-o writes each operation's full stats"
has "$tmp/fused/stats.json" '"chain": "ffn"' "-o writes the chain's JSON"
expect 2 "mapspace refuses a chain" -- "$bin" mapspace -q "$data/good/fused_ffn.yaml"
has "$tmp/err" "this command takes one operation" "mapspace says a chain is for model and map"
expect 2 "model --loops on a chain" -- "$bin" model -q --loops "$data/good/fused_ffn.yaml"

# map on a chain: each operation alone and fused; the best cut is written
# as a fused map.yaml that model reads back to the same figures.  (20,000
# evaluations a search find what the default's whole-space enumerations
# find, a quarter of the time; a cap below a space's size samples it
# rather than enumerating its first corner.)
expect 0 "map on a chain" -- "$bin" map -q --max-evals 20000 -o "$tmp/fmap" "$data/good/fused_ffn.yaml"
has "$tmp/fmap/stats.txt" "^Group 1: up, down, fused at GLB" "map on a chain fuses the two GEMMs"
has "$tmp/fmap/stats.txt" "^Unfused (each operation alone): energy 0.275 uJ, cycles 8192, DRAM words 1792," "map on a chain gives the unfused run beside it"
has "$tmp/fmap/stats.txt" "^Fused / unfused: energy 0.536x" "map on a chain: the fused run's energy over the unfused one's"
has "$tmp/fmap/stats.txt" "^Gap: [0-9.]*x at most: the edp over its proven lower bound .* (each operation's roofline, the intermediates on chip)" "map on a chain: the proven gap"
expect 0 "model on map's fused map.yaml" -- "$bin" model -q "$data/good/fused_ffn.yaml" "$tmp/fmap/map.yaml"
grep "^Total:" "$tmp/fmap/stats.txt" >"$tmp/fmap/want"
grep "^Total:" "$tmp/out" >"$tmp/fmap/got"
if cmp -s "$tmp/fmap/want" "$tmp/fmap/got" && [ -s "$tmp/fmap/got" ]; then ok "the fused map.yaml round-trips through model"; else bad "the fused map.yaml gives other totals"; cat "$tmp/fmap/want" "$tmp/fmap/got"; fi
expect 0 "map --no-fuse on a chain" -- "$bin" map -q --no-fuse --max-evals 3000 "$data/good/fused_ffn.yaml"
has "$tmp/out" "^Group 2: down (not fused" "--no-fuse maps each operation alone"
has "$tmp/out" "^Fused / unfused: energy 1.000x, cycles 1.000x, backing-store words 1.000x" "--no-fuse: the best is the unfused run"
expect 2 "map --no-fuse on one operation" -- "$bin" map -q --no-fuse "$data/good/conv1d_1level.yaml"

# Recomputed halos: a depthwise convolution reading a pointwise one's
# output through overlapping windows, fused by stepping through its rows
# (counted by hand in the file's comment); map finds such splits and its
# map.yaml, which says what it recomputes, reads back to the same totals.
expect 0 "model on a fused pair with a recomputed halo" -- "$bin" model -q "$data/good/fused_halo.yaml"
has "$tmp/out" "^Group 1: pw, dw, fused at GLB, stepping through p in 2 steps" "recompute: the group says how it steps"
has "$tmp/out" "^  pw  *96  *96 " "recompute: the pointwise layer computes 2 steps x 6 rows x 4 x 2 = 96 (80 alone)"
has "$tmp/out" "(pw computes 1.2x its operation's points" "recompute: the factor said"
has "$tmp/out" "^  X  *read by pw; kept at RF, GLB, DRAM; 20 DRAM words" "recompute: X read once (the steps' overlap kept at GLB)"
has "$tmp/out" "DRAM words 72," "recompute: X, W, Z, D once each (20 + 8 + 32 + 12), Y never"
# (a 32-word buffer: the pair fused by channels, which 48 words hold, no
# longer fits)
# halo_map DEPTH FILE HOW TEXT: map at a buffer of DEPTH words writes a
# map.yaml whose group says TEXT, and model reads it back to map's totals.
halo_map() {
    expect 0 "map on a pair with overlapping windows at $1 words" -- "$bin" map -q --set GLB.depth="$1" -o "$tmp/hmap$1" "$2"
    has "$tmp/hmap$1/map.yaml" "$4" "map fuses the pair by ${3}ing the halo"
    expect 0 "model on map's map.yaml, ${3}ing the halo" -- "$bin" model -q --set GLB.depth="$1" "$2" "$tmp/hmap$1/map.yaml"
    grep "^Total:" "$tmp/hmap$1/stats.txt" >"$tmp/hmap$1/want"
    grep "^Total:" "$tmp/out" >"$tmp/hmap$1/got"
    if cmp -s "$tmp/hmap$1/want" "$tmp/hmap$1/got" && [ -s "$tmp/hmap$1/got" ]; then ok "a ${3}ing map.yaml round-trips through model"; else bad "a ${3}ing map.yaml gives other totals"; cat "$tmp/hmap$1/want" "$tmp/hmap$1/got"; fi
}
halo_map 32 "$data/good/fused_halo.yaml" recomput "^    recompute: {p: 2}"
# Retained halos: the same pair with 16 input channels, each step of the
# pointwise layer computing only the rows the windows add, its first step
# also the 2 rows they reach first (counted by hand in the file's comment,
# down to the 196 words the first step needs); map retains the halo at a
# 140-word buffer and its map.yaml reads back to the same totals.
expect 0 "model on a fused pair with a retained halo" -- "$bin" model -q "$data/good/fused_retain.yaml"
has "$tmp/out" "^Group 1: pw, dw, fused at GLB, stepping through p in 2 steps, the halo retained" "retain: the group says how it steps"
has "$tmp/out" "^  pw  *640  *640 " "retain: the pointwise layer computes 10 rows x 4 x 16 = 640, as alone"
has "$tmp/out" "(pw's first step covers 2 more along y, its head: the halo the later steps keep at GLB)" "retain: the head said"
if grep -q "its operation's points" "$tmp/out"; then bad "retain: a row computed twice"; else ok "retain: no row computed twice"; fi
has "$tmp/out" "DRAM words 268," "retain: X, W, Z, D once each (160 + 64 + 32 + 12), Y never"
expect 1 "model on a retained halo at a buffer of 195 words" -- "$bin" model -q --set GLB.depth=195 "$data/good/fused_retain.yaml"
has "$tmp/err" "invalid mapping: the group pw..dw needs 196 words at 'GLB', which holds 195" "retain: the first step's 196 words do not fit in 195"
halo_map 140 "$data/good/fused_retain.yaml" retain "^    retain: {p: "
# Causal masks: one head's scores and output products fused, stepping
# through 4 x 4 blocks of rows and keys, the keys innermost: the 6 blocks
# above the diagonal skipped, counted by hand in the file's comment.
expect 0 "model on a fused causal head" -- "$bin" model -q "$data/good/fused_causal.yaml"
has "$tmp/out" "(causal mask: 10 of the 4 x 4 steps over the rows m and keys n computed, the 6 it covers whole skipped)" "causal: the steps computed said"
has "$tmp/out" "^  scores  *80  *80 " "causal: 10 steps of 8 points, not the 128 of the rectangle"
has "$tmp/out" "^  K  *read by scores; kept at RF, GLB, DRAM; 36 DRAM words" "causal: K once per step run, but the block row block 1 starts on (9 x 4)"
has "$tmp/out" "DRAM words 104," "causal: Q and O once, K and V 36 each"
sed 's/permutation: n m}/permutation: m n}/' "$data/good/fused_causal.yaml" >"$tmp/causal_order.yaml"
expect 0 "model on a causal group stepping through keys outside rows" -- "$bin" model -q "$tmp/causal_order.yaml"
has "$tmp/out" "(causal mask: every point computed, then masked, no step skipped: the shared loop over 'm' runs inside the one over the keys 'n'" "causal: keys outside rows compute every step, and the report says why"
has "$tmp/out" "^  scores  *128  *128 " "causal: keys outside rows, the 128 points of the rectangle"
printf 'problem:\n  attention: {heads: 1, seq: 16, head_dim: 4, causal: true}\n' >"$tmp/causal_block.yaml"
sed -n '/^architecture:/,/^problem:/p' "$data/good/fused_causal.yaml" | sed '$d' >"$tmp/causal_arch.yaml"
expect 0 "map --no-fuse on the causal attention block" -- "$bin" map -q --no-fuse --max-evals 500 "$tmp/causal_arch.yaml" "$tmp/causal_block.yaml"
has "$tmp/out" "(causal mask: every point computed, then masked: the group skips no steps over the keys n)" "causal: alone, every score computed and masked"
expect 0 "model on a fused online softmax" -- "$bin" model -q "$data/good/fused_online.yaml"
has "$tmp/out" "(online softmax: exp's running max over n, 4 blocks of keys a row: 64 compares, 24 correction exponentials; rowsum rescales 24 partial sums; values rescales 48 partial sums;" "online: the running max and the rescaling, counted by hand in the file"
has "$tmp/out" "^  exp  *64  *152 " "online: the exponential's compares and corrections take cycles (64 + 64 + 24)"
has "$tmp/out" "^  values  *128  *176 " "online: the output products' rescaling takes cycles (128 + 48)"
sed -e 's/K\[n,e\]"}/K[n,e]", causal: [m, n]}/' -e 's/online: n,/online: n, causal: [m, n],/' \
    -e 's/E\[m,n\]"}/E[m,n]", causal: [m, n]}/' -e 's/V\[n,d\]"}/V[n,d]", causal: [m, n]}/' \
    "$data/good/fused_online.yaml" >"$tmp/online_causal.yaml"
expect 0 "model on a causal online softmax" -- "$bin" model -q "$tmp/online_causal.yaml"
has "$tmp/out" "(causal mask: 6 of the 2 x 4 steps" "online, causal: the mask applies to every operation over m and n"
has "$tmp/out" "48 compares, 16 correction exponentials; rowsum rescales 16 partial sums; values rescales 32 partial sums;" "online, causal: row block 0 corrects once a row at its 2 key blocks, row block 1 three times (4 + 12)"
sed -e 's/factors: m=2 n=4, permutation: n m}/factors: m=2, permutation: m}/' -e 's/m=4 n=2/m=4 n=8/g' \
    "$data/good/fused_online.yaml" >"$tmp/online_rows.yaml"
expect 0 "model on an online softmax stepping through rows only" -- "$bin" model -q "$tmp/online_rows.yaml"
has "$tmp/out" "1 block of keys a row: 64 compares, 0 correction exponentials;" "online: whole rows a step, the compares only"
printf 'problem:\n  attention: {heads: 1, seq: 8, head_dim: 2, softmax: online}\n' >"$tmp/online_block.yaml"
expect 0 "map --no-fuse on the online attention block" -- "$bin" map -q --no-fuse --max-evals 500 "$tmp/causal_arch.yaml" "$tmp/online_block.yaml"
has "$tmp/out" "(online softmax: exp's running max over n, 1 block of keys a row: 64 compares, 0 correction exponentials" "online: alone, the compares only"
expect 0 "model on steps that leave rows out" -- "$bin" model -q "$data/good/fused_strided.yaml"
has "$tmp/out" "^  a  *16  *16 " "strided steps: the pointwise layer computes the 4 rows read (16 of 28 points)"
has "$tmp/out" "(a computes 0.5714x its operation's points: rows no later operation reads left out)" "strided steps: said"
expect 0 "model on the MobileNet pair's fused mapping" -- "$bin" model -q "$fx/accelerator.yaml" "$fx/pw_dw.yaml" "$fx/pw_dw_fused.yaml"
has "$tmp/out" "^  Y  *pw1 -> dw2; kept at GlobalBuffer (never in DRAM)" "pw_dw example: Y stays on chip"
has "$tmp/out" "^  X  *read by pw1; kept at RF, GlobalBuffer, DRAM; 412224 DRAM words" "pw_dw example: X read once (32 x 113 x 113) but the seam's row, read by two steps (32 x 113)"
has "$tmp/out" "(pw1 computes 1.018x" "pw_dw example: 2 x 2 bands of 57 x 57 for 113 x 113"

# An operation's `dims:` gives its indices the convolution dimensions'
# names a design's constraints bind (Simba's spatial and register-file
# constraints): the same search as the operation written with those names.
printf 'problem:\n  chain:\n  - {name: pv, einsum: "U[h,m,d] = E[h,m,n] * V[h,n,d]", dims: {N: h, P: m, C: n, M: d}}\n  bounds: {h: 2, m: 256, n: 256, d: 64}\n' >"$tmp/alias.yaml"
printf 'problem:\n  chain:\n  - {name: pv, einsum: "U[N,P,M] = E[N,P,C] * V[N,C,M]"}\n  bounds: {N: 2, P: 256, C: 256, M: 64}\n' >"$tmp/named.yaml"
"$bin" map -q --threads 2 --max-evals 3000 "$src/arch/simba/simba.yaml" "$tmp/alias.yaml" 2>&1 | grep '^Total:' >"$tmp/a1"
"$bin" map -q --threads 2 --max-evals 3000 "$src/arch/simba/simba.yaml" "$tmp/named.yaml" 2>&1 | grep '^Total:' >"$tmp/a2"
if [ -s "$tmp/a1" ] && cmp -s "$tmp/a1" "$tmp/a2"; then ok "dims: the aliased operation maps as the one written with the convolution names ($(cut -c1-40 "$tmp/a1"))"; else bad "dims: '$(cat "$tmp/a1")' against '$(cat "$tmp/a2")'"; fi
printf 'problem:\n  chain:\n  - {name: a, einsum: "T[m,k] = X[m,k]", dims: {P: q}}\n  bounds: {m: 4, k: 4}\n' >"$tmp/alias_bad.yaml"
expect 2 "dims: naming no index" -- "$bin" bound -q --curve "$tmp/alias_bad.yaml"
has "$tmp/err" "alias_bad.yaml:3:52: error: 'q' is not an index of 'a'" "... a located error"

# The fused blocks (chain_blocks.c) expand to their chains: attention with
# the softmax as its parts (a row max, exp, a row sum, the division),
# FlashAttention's online form, or one operation; a gated FFN; each
# operation charged its own kind of arithmetic.
printf 'problem:\n  attention: {heads: 1, seq: 8, head_dim: 4}\n' >"$tmp/att.yaml"
expect 0 "map on an attention block" -- "$bin" map -q -o "$tmp/attmap" "$fx/accelerator.yaml" "$tmp/att.yaml"
has "$tmp/out" "^attention\|^Chain attention: 6 operations" "attention: six operations, softmax in parts"
has "$tmp/out" "^  rowmax         max           0.0500  the adder's share of a compute" "a row max: a comparison, the adder's share of the MAC"
has "$tmp/out" "^  exp            exp           0.8374  a compute (no built-in figure" "exp: a whole compute without a figure of the design's"
expect 0 "model on the block's fused map.yaml" -- "$bin" model -q "$fx/accelerator.yaml" "$tmp/att.yaml" "$tmp/attmap/map.yaml"
grep '^Total:' "$tmp/attmap/stats.txt" >"$tmp/attmap/want"
grep '^Total:' "$tmp/out" >"$tmp/attmap/got"
if cmp -s "$tmp/attmap/want" "$tmp/attmap/got" && [ -s "$tmp/attmap/got" ]; then ok "a block's fused map.yaml round-trips through model"; else bad "a block's fused map.yaml gives other totals"; cat "$tmp/attmap/want" "$tmp/attmap/got"; fi
# An ERT's figure for a kind of operation is taken as it is; a kind it
# does not give is the adder's share of its compute energy.
{ sed -n '/^architecture:/,/^problem:/p' "$data/good/conv1d_1level.yaml" | sed '$d'
  printf 'problem:\n  chain:\n  - {name: e, op: exp, einsum: "E[p] = X[p]"}\n  - {name: s, op: add, einsum: "Y[p] = E[p] * B[p]"}\n  bounds: {p: 4}\n'
  sed -n '/^ERT:/,$p' "$data/good/conv1d_1level.yaml"
  printf '    - {name: exp, energy: 7.5}\n'; } >"$tmp/ert_ops.yaml"
expect 0 "map on a chain with an ERT giving exp" -- "$bin" map -q "$tmp/ert_ops.yaml"
has "$tmp/out" "^  e              exp           7.5000  the design's ERT" "exp: the ERT's figure"
has "$tmp/out" "^  s              add           0.[0-9]*  the adder's share of a compute" "add without an ERT figure: the adder's share of the ERT's compute"
printf 'problem:\n  attention: {heads: 2, seq: 16, kv: 32, head_dim: 8, softmax: online}\n' >"$tmp/att2.yaml"
expect 0 "bound --curve on FlashAttention's online softmax" -- "$bin" bound -q --curve "$tmp/att2.yaml"
has "$tmp/out" "^attention: a chain of 5 operations (scores, exp, rowsum, values, normalize)" "online softmax: no row max ahead of exp"
has "$tmp/out" "scores+exp+rowsum+values: .*n[0-9]" "online softmax: scores to values fuse with a loop over the keys"
printf 'problem:\n  ffn: {tokens: 4, d_model: 8, d_ff: 32, gated: true}\n' >"$tmp/ffn.yaml"
expect 0 "bound --curve on a gated FFN" -- "$bin" bound -q --curve "$tmp/ffn.yaml"
has "$tmp/out" "^ffn: a chain of 5 operations (gate, up, silu, gating, down)" "a gated FFN: gate and up projections, silu, their product, down"
printf 'problem:\n  attention: {heads: 1, seq: 8, head_dim: 4, softmax: online, causal: true}\n' >"$tmp/causal.yaml"
expect 0 "bound --curve on a causal attention block" -- "$bin" bound -q --curve "$tmp/causal.yaml"
has "$tmp/out" "^ *44 *240 *1.875  scores+exp+rowsum+values: m2 n8; normalize: m8 d4" "causal: at 44 words the two row blocks see 4 and 8 of the 8 key steps: 240 words, not the unmasked 272"
printf 'problem:\n  attention: {heads: 1, seq: 8, kv: 4, head_dim: 4, causal: true}\n' >"$tmp/causal_kv.yaml"
expect 2 "a causal attention block with fewer keys than queries" -- "$bin" bound -q --curve "$tmp/causal_kv.yaml"
has "$tmp/err" "causal_kv.yaml:2:61: error: causal attention needs at least as many keys (kv 4) as queries (seq 8)" "causal: fewer keys than queries refused where it is written"
printf 'problem:\n  conv_pool: {C: 2, M: 2, P: 9, pool: 3, stride: 2}\n' >"$tmp/cp_rows.yaml"
expect 2 "overlapping pooling windows written by window" -- "$bin" bound -q --curve "$tmp/cp_rows.yaml"
has "$tmp/err" "cp_rows.yaml:2:14: error: conv_pool: pooling windows of 3 at stride 2 overlap, so the convolution cannot write its output by window: write 'rows: false'" "overlapping windows need rows: false, said where"
printf 'problem:\n  conv_pool: {C: 2, M: 2, P: 8, pool: 3, stride: 2, rows: false}\n' >"$tmp/cp_odd.yaml"
expect 2 "pooling windows that do not end at the last row" -- "$bin" bound -q --curve "$tmp/cp_odd.yaml"
has "$tmp/err" "is not a whole number of 3 x 3 pooling windows at stride 2 (the last window ends at the last row: 7 rows, or 9)" "the sizes that fit, said"
printf 'problem:\n  conv_pool: {C: 2, M: 2, P: 9, pool: 3, stride: 2, rows: false}\n' >"$tmp/cp_ok.yaml"
expect 0 "overlapping pooling windows" -- "$bin" bound -q --curve "$tmp/cp_ok.yaml"
has "$tmp/out" "O\[m,p,q\] = I\[m,2\*p+i,2\*q+j\]\|conv_pool: a chain of 2" "the pooling reads I at stride 2"
printf 'problem:\n  attention: {heads: 1, seq: 8, head_dim: 4, softmax: fast}\n' >"$tmp/fast.yaml"
expect 2 "an unknown softmax form" -- "$bin" bound -q --curve "$tmp/fast.yaml"
has "$tmp/err" "softmax 'fast': one of parts, online, single" "the softmax forms named"

finish
