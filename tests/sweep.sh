#!/bin/sh
# sweep.sh — nestmap sweep as a design study uses it: each point equals the
# same design run alone with network --set; a sweep killed with SIGKILL (and
# a row cut short, as by a power loss) resumes to byte-identical files;
# under mpirun (when built --with-mpi) 2 and 3 ranks write what one process
# writes; bad sweep files are located errors that write nothing.
name=sweep
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
data="$src/tests/data/sweep"
# The search is Timeloop's random one without nestmap's local search after
# it (--no-refine): these test the sweep driver (each point as `network
# --set` gives it, resume, MPI), and the climb's 800,000 evaluations a
# layer cost minutes under ASan.
nr=--no-refine
same() { if cmp -s "$1" "$2"; then ok "$3"; else bad "$3"; diff "$1" "$2" | head -5; fi; }

# A 3 x 2 grid, written out.
"$bin" sweep -q $nr --threads 2 -o "$tmp/a" "$data/buffer_dram.yaml" >"$tmp/summary" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ]; then ok "sweep runs (exit 0)"; else bad "sweep: exit $rc"; cat "$tmp/err"; fi
grep -q "^6 points: 6 mapped, 0 failed$" "$tmp/summary" && grep -q "^lowest energy: point [0-5] (GlobalBuffer.depth=[0-9]*, DRAM.type=[A-Z0-9]*), [0-9.]* uJ$" "$tmp/summary" &&
    grep -q "^Pareto front (energy x time x area): [0-9]* points\{0,1\}:\( [0-5]\)*$" "$tmp/summary" && grep -q "^written: $tmp/a/points.csv" "$tmp/summary" &&
    ok "with -o: a closing summary on stdout" || { bad "with -o: the summary"; cat "$tmp/summary"; }
rows=$(($(wc -l <"$tmp/a/points.csv") - 1))
if [ "$rows" -eq 6 ]; then ok "points.csv has a row per point"; else bad "points.csv has $rows rows"; fi
head -1 "$tmp/a/points.csv" | grep -q '^point,GlobalBuffer.depth,DRAM.type,energy_uj,cycles,seconds,edp_j_s,area_mm2,.*,power_w,dram_bytes,bound_by_pct,.*,bound_by,over_budget,status,reason$' &&
    ok "points.csv columns: the varied attributes, then energy_uj, cycles, seconds, edp_j_s, area_mm2 ... power_w, dram_bytes, bound_by_pct, energy by level, bound_by, over_budget, status" ||
    bad "points.csv header: $(head -1 "$tmp/a/points.csv")"
for f in pareto.csv sweep.json plots/GlobalBuffer.depth.gp plots/GlobalBuffer.depth.dat plots/pareto.gp plots/pareto.dat; do
    if [ -s "$tmp/a/$f" ]; then ok "sweep writes $f"; else bad "sweep writes $f"; fi
done
if command -v gnuplot >/dev/null; then
    for f in GlobalBuffer.depth DRAM.type pareto; do
        if [ -s "$tmp/a/plots/$f.png" ] && [ -s "$tmp/a/plots/$f.svg" ]; then ok "gnuplot renders $f"; else bad "gnuplot renders $f"; fi
    done
fi
grep -q ' with points lt 1 title ' "$tmp/a/plots/DRAM.type.gp" && grep -q ' with linespoints lt 2 title ' "$tmp/a/plots/GlobalBuffer.depth.gp" &&
    grep -q 'layout 1,1 title .*; time [0-9.]* .*s at every point' "$tmp/a/plots/GlobalBuffer.depth.gp" &&
    [ "$(cut -d, -f6 "$tmp/a/points.csv" | sed 1d | sort -u | wc -l)" -eq 1 ] &&
    grep -q 'with labels' "$tmp/a/plots/pareto.gp" && grep -q 'do for \[k = 1:16\]' "$tmp/a/plots/DRAM.type.gp" &&
    ok "plots: categories as points, numbers as lines, 16 distinct series, a constant time said in the title, the front labelled" ||
    bad "plots: the scripts' styles"
grep -q '"wall_seconds"' "$tmp/a/sweep.json" && ok "wall-clock figures are in sweep.json" || bad "sweep.json has no wall time"
if grep -q -i 'second' "$tmp/a/pareto.csv" && ! grep -q -i 'wall' "$tmp/a/points.csv" "$tmp/a/pareto.csv"; then
    ok "no wall-clock figure in points.csv or pareto.csv"; else bad "wall-clock in the CSVs"; fi

# Every point equals the design run alone with network --set: the same
# per-layer results, byte for byte, and the same total cycles.
tail -n +2 "$tmp/a/points.csv" | while IFS=, read -r p depth dram energy cycles rest; do
    "$bin" network -q --threads 2 $nr --set "GlobalBuffer.depth=$depth" --set "DRAM.type=$dram" \
        -o "$tmp/alone$p" "$src/arch/eyeriss/eyeriss.yaml" "$src/tests/data/network/small_net.yaml" >"$tmp/alone$p.txt"
    if cmp -s "$tmp/alone$p/layers.csv" "$tmp/a/points/$p/small_net.layers.csv"; then
        echo "ok   - point $p ($depth, $dram) equals network --set"
    else
        echo "FAIL - point $p ($depth, $dram) differs from network --set"
    fi
    total=$(awk '/^total/ {print $4}' "$tmp/alone$p.txt")
    if [ "$total" = "$cycles" ]; then echo "ok   - point $p: cycles $cycles as network --set"; else echo "FAIL - point $p: cycles $cycles, network --set $total"; fi
done >"$tmp/alone.log"
tally "$tmp/alone.log"

# Without -o: a table on stdout.
"$bin" sweep -q $nr --threads 2 "$data/buffer_dram.yaml" >"$tmp/table" 2>&1 &&
    grep -q "^5 .*HBM2 .* ok" "$tmp/table" && ok "sweep without -o prints the points" || { bad "sweep without -o"; cat "$tmp/table"; }

# A random sweep: `samples` distinct grid points, the same for the same seed.
abs=$(cd "$src" && pwd)
cat >"$tmp/random.yaml" <<EOR
sweep:
  design: $abs/arch/eyeriss/eyeriss.yaml
  workloads: [$abs/tests/data/network/small_net.yaml]
  vary:
    - {set: GlobalBuffer.depth, values: {from: 4096, to: 16384, step: 4096}}
    - {set: column.meshX, values: [8, 14, 16]}
  mode: random
  samples: 3
  seed: 7
EOR
"$bin" sweep -q $nr --threads 2 -o "$tmp/r1" "$tmp/random.yaml" >/dev/null && "$bin" sweep -q $nr -o "$tmp/r2" "$tmp/random.yaml" >/dev/null || bad "random sweep"
[ "$(($(wc -l <"$tmp/r1/points.csv") - 1))" -eq 3 ] && ok "random sweep: 3 samples" || bad "random sweep: rows"
same "$tmp/r1/points.csv" "$tmp/r2/points.csv" "random sweep: same seed, same points (2 threads or 1)"
[ "$(cut -d, -f2,3 "$tmp/r1/points.csv" | sort -u | wc -l)" -eq 4 ] && ok "random sweep: distinct points" || bad "random sweep: repeated points"
# ... whose unrelated points search cold, each as network --set does, the
# local search on (a hundredth of the budget)
"$bin" sweep -q --effort 0.01 --threads 2 -o "$tmp/r3" "$tmp/random.yaml" >/dev/null 2>&1 || bad "random sweep, local search on"
grep -q '"warm": {"block": 1,' "$tmp/r3/sweep.json" && grep -q '"warm": {"block": 1,' "$tmp/r1/sweep.json" &&
    ok "sweep.json: a random sweep, or one without the local search, searched every point cold (warm block 1)" || bad "sweep.json: warm of a random sweep"
tail -n +2 "$tmp/r3/points.csv" | while IFS=, read -r p depth mx rest; do
    "$bin" network -q --effort 0.01 --threads 2 --set "GlobalBuffer.depth=$depth" --set "column.meshX=$mx" \
        -o "$tmp/r3alone$p" "$src/arch/eyeriss/eyeriss.yaml" "$src/tests/data/network/small_net.yaml" >/dev/null 2>&1
    if cmp -s "$tmp/r3alone$p/layers.csv" "$tmp/r3/points/$p/small_net.layers.csv"; then
        echo "ok   - random sweep point $p searched cold, as network --set"
    else
        echo "FAIL - random sweep point $p differs from network --set (warm?)"
    fi
done >"$tmp/r3.log"
tally "$tmp/r3.log"

# SIGKILL mid-run, then --resume: the same files as an uninterrupted run.
"$bin" sweep -q $nr --threads 1 -o "$tmp/whole" "$data/slow_2x2.yaml" >/dev/null || bad "uninterrupted slow sweep"
"$bin" sweep -q $nr --threads 1 -o "$tmp/killed" "$data/slow_2x2.yaml" >/dev/null &
pid=$!
n=0
while [ "$(cat "$tmp/killed/points.csv" 2>/dev/null | wc -l)" -lt 2 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
done_rows=$(($(wc -l <"$tmp/killed/points.csv") - 1))
if [ "$done_rows" -ge 1 ] && [ "$done_rows" -lt 4 ]; then ok "killed with SIGKILL after $done_rows of 4 points"; else bad "the kill came after $done_rows points (the test wants 1 to 3)"; fi
printf '3,40' >>"$tmp/killed/points.csv"   # a row cut short, as by a power loss
"$bin" sweep -q $nr --threads 1 --resume -o "$tmp/killed" "$data/slow_2x2.yaml" >/dev/null 2>"$tmp/err" && ok "--resume ends (exit 0)" || { bad "--resume"; cat "$tmp/err"; }
same "$tmp/whole/points.csv" "$tmp/killed/points.csv" "resumed points.csv is byte-identical"
same "$tmp/whole/pareto.csv" "$tmp/killed/pareto.csv" "resumed pareto.csv is byte-identical"
"$bin" sweep -q $nr -o "$tmp/killed" "$data/slow_2x2.yaml" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--resume continues it" "$tmp/err" && ok "a second run into the same directory needs --resume" || bad "rerun into a sweep directory"
"$bin" sweep -q $nr --resume --metric energy -o "$tmp/killed" "$data/slow_2x2.yaml" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "other inputs or options" "$tmp/err" && ok "--resume with other options is refused" || bad "--resume with other options"
cp "$tmp/killed/sweep.json" "$tmp/before.json"
"$bin" sweep -q $nr --threads 1 --resume -o "$tmp/killed" "$data/slow_2x2.yaml" >"$tmp/out" 2>"$tmp/err" &&
    grep -q "^4 points: 4 mapped, 0 failed$" "$tmp/out" && cmp -s "$tmp/before.json" "$tmp/killed/sweep.json" &&
    ok "--resume of a finished sweep: its summary, sweep.json (and its run figures) left as they were" ||
    { bad "--resume of a finished sweep"; cat "$tmp/err"; diff "$tmp/before.json" "$tmp/killed/sweep.json" | head -4; }
"$bin" sweep -q $nr --resume -o "$tmp/nothing_here" "$data/slow_2x2.yaml" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "holds no sweep" "$tmp/err" && [ ! -e "$tmp/nothing_here" ] &&
    ok "--resume into a directory without a sweep: an error, nothing written" || { bad "--resume of nothing"; cat "$tmp/err"; }

# A point that cannot be mapped is a result: a blank row with its reason,
# exit 0, counted in the summary (and null in sweep.json).
"$bin" sweep -q $nr --max-evals 3000 -o "$tmp/f" "$data/one_fails.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "a sweep with a failed point exits 0" || { bad "failed point: exit $rc"; cat "$tmp/err"; }
grep -q "^0,256,,,,,,,,,,,,,*,unmapped,layer: no valid mapping among 3000 candidates (mostly capacity at RegisterFile)$" "$tmp/f/points.csv" &&
    grep -q "^1,512,[0-9]" "$tmp/f/points.csv" &&
    ok "the failed point's row: blank figures, status and reason" || { bad "failed point's row"; cat "$tmp/f/points.csv"; }
grep -q "^2 points: 1 mapped, 1 failed$" "$tmp/out" && grep -q "^  failed: point 0 (RegisterFile.depth=256): layer: no valid mapping" "$tmp/out" &&
    grep -q "^lowest energy: point 1 " "$tmp/out" && ok "the summary counts the failed point and says why" || { bad "failed point: summary"; cat "$tmp/out"; }
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['points']; sys.exit(0 if p[0]['energy_uj'] is None and p[0]['status']=='unmapped' and p[1]['energy_uj'] > 0 else 1)" "$tmp/f/sweep.json" &&
    ok "sweep.json: the failed point's figures are null" || bad "sweep.json: failed point"

# Bad sweep files: located errors, exit 2, nothing written.
check_bad() {
    "$bin" sweep -q -o "$tmp/bad_$1" "$data/$1.yaml" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "^$data/$1.yaml:[0-9]*:[0-9]*: error: .*$2" "$tmp/err" && [ ! -e "$tmp/bad_$1" ]; then
        ok "$1: located error, exit 2, nothing written"
    else
        bad "$1: exit $rc"; cat "$tmp/err"; ls "$tmp/bad_$1" 2>/dev/null
    fi
}
check_bad bad_component "did you mean 'GlobalBuffer'"
check_bad bad_empty "is empty"
check_bad bad_times "times must be greater than 1"
check_bad bad_constraint "PE.meshY=1 breaks a constraint"
check_bad bad_value "must be a positive integer"
check_bad bad_zip_lengths "'PE.meshY' has 2 values but 'PE.meshX' has 3"
check_bad bad_problem_key "unknown key 'batch' in conv2d shorthand"
check_bad bad_budget_column "budget: no column 'aera_mm2' in points.csv"
check_bad bad_warm_effort "effort must be above 0 and at most 1000"

# A budget: the point over it keeps its figures, says which budget it
# breaks, stays off the Pareto front and out of the summary's picks.
cat >"$tmp/budget.yaml" <<EOB
sweep:
  design: $abs/tests/data/network/design.yaml
  workloads: [$abs/tests/data/network/small_net.yaml]
  vary:
    - {set: problem.N, values: [1, 2, 4]}
  budget: {energy_uj: 8, power_w: 100}
EOB
"$bin" sweep -q --no-refine --max-evals 2000 -o "$tmp/bud" "$tmp/budget.yaml" >"$tmp/out" 2>"$tmp/err" || { bad "budget sweep"; cat "$tmp/err"; }
head -1 "$tmp/bud/points.csv" | grep -q ',cycles_over_bound,objective_bound,gap,power_w,dram_bytes,bound_by_pct,energy_uj\..*,bound_by,over_budget,status,reason$' &&
    grep -q '^2,4,1[0-9.]*,.*,energy_uj 1[0-9.]* > 8,ok,$' "$tmp/bud/points.csv" && grep -q '^0,1,[0-9.]*,.*,,ok,$' "$tmp/bud/points.csv" &&
    ok "budget: the point over it says which, the others leave over_budget empty" || { bad "budget: points.csv"; cat "$tmp/bud/points.csv"; }
! grep -q '^2,' "$tmp/bud/pareto.csv" && grep -q "^3 points: 3 mapped, 0 failed; 1 over budget" "$tmp/out" &&
    ok "budget: off the Pareto front, counted in the summary" || { bad "budget: front or summary"; cat "$tmp/out"; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['points']; sys.exit(0 if d['budget']=={'energy_uj': 8, 'power_w': 100} and d['options'][:3]==['--no-refine','--max-evals','2000'] and p[2]['over_budget'].startswith('energy_uj') and p[0]['over_budget'] is None and abs(p[0]['power_w']-p[0]['energy_uj']*1e-6/p[0]['seconds'])<1e-9*p[0]['power_w'] else 1)" "$tmp/bud/sweep.json" &&
    ok "sweep.json: the budget, the options as given, over_budget, power_w = energy / seconds" || { bad "budget: sweep.json"; head -c 800 "$tmp/bud/sweep.json"; }

# Two workloads: each one's energy and cycles in its own columns (they sum
# to the point's), in sweep.json by the same names, and open to a budget.
printf 'problem:\n  conv2d: {C: 16, M: 16, P: 14, Q: 14, R: 3, S: 3}\n' >"$tmp/layer.yaml"
cat >"$tmp/two.yaml" <<EOW
sweep:
  design: $abs/tests/data/network/design.yaml
  workloads: [$abs/tests/data/network/small_net.yaml, $tmp/layer.yaml]
  vary:
    - {set: problem.N, values: [1, 2]}
  budget: {layer.cycles: 200000}
EOW
"$bin" sweep -q --no-refine --max-evals 2000 -o "$tmp/two" "$tmp/two.yaml" >/dev/null 2>"$tmp/err" || { bad "two workloads"; cat "$tmp/err"; }
head -1 "$tmp/two/points.csv" | grep -q ',small_net.energy_uj,small_net.cycles,layer.energy_uj,layer.cycles,bound_by,over_budget,status,reason$' &&
    python3 - "$tmp/two/points.csv" "$tmp/two/sweep.json" <<'EOP' && ok "two workloads: a column each for energy and cycles, summing to the point's; in sweep.json by the same names; a budget on one" || bad "two workloads: columns"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))["points"]
good = len(rows) == 2
for r, p in zip(rows, j):
    e = float(r["small_net.energy_uj"]) + float(r["layer.energy_uj"])
    c = int(r["small_net.cycles"]) + int(r["layer.cycles"])
    good &= abs(e - float(r["energy_uj"])) <= 1e-9 * e and c == int(r["cycles"])
    good &= p["layer.cycles"] == int(r["layer.cycles"]) and p["energy_uj.MACC"] == float(r["energy_uj.MACC"])
    good &= set(k for k in r if k not in ("point", "problem.N")) <= set(p)
good &= rows[0]["over_budget"] == "" and rows[1]["over_budget"].startswith("layer.cycles ")
sys.exit(0 if good else 1)
EOP
python3 "$src/tests/validate_json.py" "$src/doc/nestmap.schema.json" sweep "$tmp/two/sweep.json" >/dev/null 2>&1 &&
    ok "two workloads: sweep.json validates" || bad "two workloads: sweep.json does not validate"

# zip_sweep FILE MESHX MESHY N: a sweep of the PE array's sides, linked in a
# zip (lists), against the batch problem.N (a list or a range).
zip_sweep() {
    cat >"$1" <<EOZ
sweep:
  design: $abs/arch/teaching/pe_array.yaml
  workloads: [$abs/tests/data/network/small_net.yaml]
  vary:
    - zip:
      - {set: PE.meshX, values: $2}
      - {set: PE.meshY, values: $3}
    - {set: problem.N, values: $4}
EOZ
}

# Linked attributes (zip) and a workload axis (problem.N): each row is what
# network --set gives for its values, the zip's attributes set together.
zip_sweep "$tmp/zip.yaml" "[8, 16]" "[8, 16]" "[1, 2]"
zs="--no-refine --max-evals 2000 --threads 2"
"$bin" sweep -q $zs -o "$tmp/zip" "$tmp/zip.yaml" >/dev/null 2>"$tmp/err" || { bad "zip sweep"; cat "$tmp/err"; }
[ "$(head -1 "$tmp/zip/points.csv" | cut -d, -f1-5)" = "point,PE.meshX,PE.meshY,problem.N,energy_uj" ] &&
    [ "$(tail -n +2 "$tmp/zip/points.csv" | cut -d, -f2-4 | tr '\n' ' ')" = "8,8,1 8,8,2 16,16,1 16,16,2 " ] &&
    ok "zip: one dimension of the grid, a column per attribute" || { bad "zip: the points"; cat "$tmp/zip/points.csv"; }
tail -n +2 "$tmp/zip/points.csv" | while IFS=, read -r p mx my n rest; do
    "$bin" network -q $zs --set "PE.meshX=$mx" --set "PE.meshY=$my" --set "problem.N=$n" \
        -o "$tmp/zalone$p" "$src/arch/teaching/pe_array.yaml" "$src/tests/data/network/small_net.yaml" >/dev/null 2>&1
    if cmp -s "$tmp/zalone$p/layers.csv" "$tmp/zip/points/$p/small_net.layers.csv"; then
        echo "ok   - zip point $p ($mx x $my, N=$n) equals network --set"
    else
        echo "FAIL - zip point $p ($mx x $my, N=$n) differs from network --set"
    fi
done >"$tmp/zalone.log"
tally "$tmp/zalone.log"
[ -s "$tmp/zip/plots/PE.meshX.gp" ] && [ ! -e "$tmp/zip/plots/PE.meshY.gp" ] && grep -q "PE.meshX = PE.meshY" "$tmp/zip/plots/PE.meshX.gp" &&
    ok "zip: one plot, its axis naming the linked attributes" || bad "zip: plots"
# The combined figure: a row per dimension of the grid (the zip's first
# attribute and problem.N), two blocks of data each; none for one dimension.
ov=1
grep -q "multiplot layout 2," "$tmp/zip/plots/overview.gp" || ov=0
[ "$(grep -c '^# .*: the lowest at each value' "$tmp/zip/plots/overview.dat")" -eq 2 ] || ov=0
grep -q "xlabel 'PE.meshX = PE.meshY'" "$tmp/zip/plots/overview.gp" || ov=0
if command -v gnuplot >/dev/null 2>&1 && [ ! -s "$tmp/zip/plots/overview.png" ]; then ov=0; fi
[ $ov = 1 ] && ok "zip: the combined figure, a row per dimension" || bad "zip: overview"

# A zip whose attributes move by different values (an array's sides, 16 by
# 8) is a category each ("16/8"), not the first attribute's number, which
# would put 16/8 and 16/16 at one x; past 16 series the axis plot draws
# them grey and unnamed.
zip_sweep "$tmp/zip2.yaml" "[8, 16, 16]" "[8, 8, 16]" "{from: 1, to: 17, step: 1}"
"$bin" sweep -q $zs -o "$tmp/zip2" "$tmp/zip2.yaml" >/dev/null 2>"$tmp/err" || { bad "zip2 sweep"; cat "$tmp/err"; }
z2=1
for v in 8/8 16/8 16/16; do
    grep -q "^\"$v\"" "$tmp/zip2/plots/PE.meshX.dat" || z2=0
    [ "$(awk -v v="\"$v\"" '/the lowest at each value/ { on = /PE.meshX/ } on && $1 == v' "$tmp/zip2/plots/overview.dat" | wc -l)" -eq 1 ] || z2=0
done
grep -q "xlabel 'PE.meshX/PE.meshY'" "$tmp/zip2/plots/overview.gp" || z2=0
grep -q 'xtic(1)' "$tmp/zip2/plots/PE.meshX.gp" || z2=0
[ $z2 = 1 ] && ok "zip of different values: a category per pair, 16/8 apart from 16/16" ||
    { bad "zip of different values"; cat "$tmp/zip2/plots/PE.meshX.gp"; }
grep -q '^unset key' "$tmp/zip2/plots/PE.meshX.gp" && grep -q 'in grey the 17 combinations' "$tmp/zip2/plots/PE.meshX.gp" &&
    [ "$(grep -c 'notitle' "$tmp/zip2/plots/PE.meshX.gp")" -eq 34 ] && ! grep -q '^unset key' "$tmp/zip2/plots/problem.N.gp" &&
    ok "17 series: grey and unnamed; 3: a key" || bad "many series: the axis plot"

# The proven gap: every point's objective over its bound, at least 1; the
# bound the same as the network's (its summary's lower_bound, pJ*cycles,
# in J*s at the design's clock).
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { if (!($c["gap"] >= 1) || !($c["objective_bound"] > 0)) bad = 1
      if ($c["edp_j_s"] / $c["objective_bound"] - $c["gap"] > 1e-9 * $c["gap"]) bad = 1 }
    END { exit bad }' "$tmp/a/points.csv" && ok "points.csv: gap = edp_j_s / objective_bound >= 1 at every point" || bad "points.csv: gap"
"$bin" network -q --json --threads 2 $nr --set GlobalBuffer.depth=2048 --set DRAM.type=LPDDR4 "$src/arch/eyeriss/eyeriss.yaml" \
    "$src/tests/data/network/small_net.yaml" >"$tmp/net.json" 2>/dev/null
lb=$(sed -n 's/^ *"lower_bound": \([0-9.e+-]*\),*$/\1/p' "$tmp/net.json" | tail -1)
row=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $2 == 2048 && $3 == "LPDDR4" { print $c["objective_bound"], $c["seconds"] / $c["cycles"] }' "$tmp/a/points.csv")
awk -v lb="$lb" -v row="$row" 'BEGIN { split(row, r, " "); v = lb * 1e-12 * r[2]; exit !(lb > 0 && (v - r[1]) ^ 2 <= (1e-12 * v) ^ 2) }' &&
    ok "points.csv objective_bound is network --json's summary lower_bound in J*s ($lb pJ*cycles)" || bad "objective_bound $row against network's $lb"

# Warm starts (blocks of 2, a hundredth of the budget, the local search
# on): 1 or 2 threads, and a resume from inside a block, write the same
# files; a block's first point is the cold search `network --effort` runs;
# a warm point is, layer by layer, never worse than that cold search.
w="$data/warm_blocks.yaml"
"$bin" sweep -q --threads 2 -o "$tmp/w2" "$w" >/dev/null 2>"$tmp/err" || { bad "warm sweep"; cat "$tmp/err"; }
"$bin" sweep -q --threads 1 -o "$tmp/w1" "$w" >/dev/null 2>&1 || bad "warm sweep, 1 thread"
same "$tmp/w2/points.csv" "$tmp/w1/points.csv" "warm sweep: points.csv the same on 1 and 2 threads"
[ ! -e "$tmp/w2/plots/overview.gp" ] && ok "one dimension: no combined figure" || bad "one dimension: an overview"
grep -q '"warm": {"block": 2, "first": 0.01, "effort": 0.01}' "$tmp/w2/sweep.json" &&
    ok "sweep.json records the warm starts in effect" || { bad "sweep.json: warm"; grep warm "$tmp/w2/sweep.json"; }
cp -r "$tmp/w2" "$tmp/wr" && head -2 "$tmp/w2/points.csv" >"$tmp/wr/points.csv" && rm -rf "$tmp/wr/points/1" "$tmp/wr/points/2" "$tmp/wr/points/3"
"$bin" sweep -q --threads 2 --resume -o "$tmp/wr" "$w" >/dev/null 2>"$tmp/err" || { bad "warm sweep --resume"; cat "$tmp/err"; }
same "$tmp/w2/points.csv" "$tmp/wr/points.csv" "warm sweep resumed inside a block: points.csv byte-identical"
tail -n +2 "$tmp/w2/points.csv" | while IFS=, read -r p depth rest; do
    "$bin" network -q --threads 2 --effort 0.01 --set "GlobalBuffer.depth=$depth" \
        -o "$tmp/wcold$p" "$src/arch/eyeriss/eyeriss.yaml" "$src/tests/data/network/small_net.yaml" >/dev/null 2>&1
    if [ $((p % 2)) -eq 0 ]; then
        if cmp -s "$tmp/wcold$p/layers.csv" "$tmp/w2/points/$p/small_net.layers.csv"; then
            echo "ok   - warm sweep: point $p (a block's first) equals network --effort 0.01"
        else
            echo "FAIL - warm sweep: point $p (a block's first) differs from network --effort 0.01"
        fi
    else
        # layer, same_as, repeat, macs, valid, energy_pj, cycles: EDP per layer
        paste -d, "$tmp/wcold$p/layers.csv" "$tmp/w2/points/$p/small_net.layers.csv" | tail -n +2 |
            awk -F, -v p="$p" -v n="$(head -1 "$tmp/wcold$p/layers.csv" | tr ',' '\n' | wc -l)" '
            { cold = $6 * $7; warm = $(n + 6) * $(n + 7)
              if (warm > cold * (1 + 1e-12)) { bad = 1; printf "FAIL - warm sweep: point %d layer %s: EDP %g above the cold search'"'"'s %g\n", p, $1, warm, cold }
              else if (warm < cold * (1 - 1e-12)) better++ }
            END { if (!bad) printf "ok   - warm sweep: point %d no layer worse than network --effort 0.01 (%d better)\n", p, better }'
    fi
done >"$tmp/wcold.log"
tally "$tmp/wcold.log"
[ "$(grep -c '^ok' "$tmp/wcold.log")" -eq 4 ] || bad "warm sweep: 4 points compared"

# A design axis: two designs with different levels, varying fastest, in
# warm blocks.  Each point's design differs from the point's before, so
# each searches cold as a block's first does: its layers equal network
# --effort 0.01 on its design; the level columns are both designs', blank
# where a design has no such level; sweep.json lists the designs.
d="$data/designs.yaml"
"$bin" sweep -q --threads 2 -o "$tmp/d" "$d" >/dev/null 2>"$tmp/err" || { bad "design sweep"; cat "$tmp/err"; }
tail -n +2 "$tmp/d/points.csv" | while IFS=, read -r p n design rest; do
    case $design in eyeriss/eyeriss) df="$src/arch/eyeriss/eyeriss.yaml" ;; *) df="$src/arch/teaching/pe_array.yaml" ;; esac
    "$bin" network -q --threads 2 --effort 0.01 --set "problem.N=$n" -o "$tmp/dalone$p" "$df" \
        "$src/tests/data/network/small_net.yaml" >/dev/null 2>&1
    if cmp -s "$tmp/dalone$p/layers.csv" "$tmp/d/points/$p/small_net.layers.csv"; then
        echo "ok   - design axis: point $p ($design, N=$n) equals network --effort 0.01 on it"
    else
        echo "FAIL - design axis: point $p ($design, N=$n) differs from network --effort 0.01 on it"
    fi
done >"$tmp/dalone.log"
tally "$tmp/dalone.log"
[ "$(grep -c '^ok' "$tmp/dalone.log")" -eq 4 ] || bad "design axis: 4 points compared"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { eye = $3 == "eyeriss/eyeriss"
      if (eye != ($c["energy_uj.PsumScratchpad"] != "") || eye != ($c["energy_uj.RegisterFile"] == "")) bad = 1
      if ($c["energy_uj.DRAM"] == "" || $c["energy_uj.MAC"] == "") bad = 1 }
    END { exit bad || NR != 5 }' "$tmp/d/points.csv" &&
    ok "design axis: a column for each design's levels, blank where the design has none" ||
    { bad "design axis: level columns"; head -3 "$tmp/d/points.csv"; }
grep -q '"design": \["[^"]*pe_array.yaml", "[^"]*eyeriss.yaml"\]' "$tmp/d/sweep.json" &&
    python3 "$src/tests/validate_json.py" "$src/doc/nestmap.schema.json" sweep "$tmp/d/sweep.json" >/dev/null 2>&1 &&
    ok "design axis: sweep.json lists the designs and validates" || { bad "design axis: sweep.json"; grep '"design"' "$tmp/d/sweep.json"; }
check_bad bad_design_twice "the sweep varies its design (set: design): leave out 'design'"
check_bad bad_design_missing "no file 'eyeriss/eyerss.yaml' (a design)"

# A chain of operations as a workload: each point is `map` on the chain
# with the point's --set (fused, or with `fuse: false` each operation
# alone: map --no-fuse), with map's proven bound and gap (each operation's
# roofline, the intermediates on chip); points/N/ holds each operation's row.
# Each search has 20,000 evaluations (the design sets no budget, and with
# the default one `map --no-refine` on the chain took 34 s; under ASan,
# minutes).
cb="$nr --max-evals 20000"
for v in chain:"" chain_unfused:--no-fuse; do
    f=${v%%:*}; flag=${v#*:}
    "$bin" sweep -q $cb --threads 2 -o "$tmp/$f" "$data/$f.yaml" >/dev/null 2>"$tmp/err" || { bad "$f sweep"; cat "$tmp/err"; }
    for p in 0 1; do
        depth=$(awk -F, -v p=$p '$1 == p {print $2}' "$tmp/$f/points.csv")
        "$bin" map -q $cb --threads 2 --json $flag --set "GLB.depth=$depth" "$data/chain_design.yaml" \
            "$data/ffn_chain.yaml" >"$tmp/$f.map$p.json" 2>"$tmp/err"
        if python3 - "$tmp/$f/points.csv" "$p" "$tmp/$f.map$p.json" "$tmp/$f/points/$p/ffn_chain.layers.csv" <<'PY'
import csv, json, sys
rows = {r["point"]: r for r in csv.DictReader(open(sys.argv[1]))}
r = rows[sys.argv[2]]
t = json.load(open(sys.argv[3]))["best"]["total"]
assert r["status"] == "ok", r
assert int(r["cycles"]) == t["cycles"], (r["cycles"], t["cycles"])
assert abs(float(r["energy_uj"]) * 1e6 - t["energy"]) <= 1e-9 * t["energy"], (r["energy_uj"], t["energy"])
# the proven bound: each operation's roofline with the intermediates on chip
m = json.load(open(sys.argv[3]))["search"]
assert float(r["objective_bound"]) > 0 and float(r["gap"]) >= 1 - 1e-12, r
assert abs(float(r["gap"]) - m["gap"]) <= 1e-9 * m["gap"], (r["gap"], m["gap"])
ops = list(csv.DictReader(open(sys.argv[4])))
assert [o["operation"] for o in ops] == ["up", "down"], ops
assert abs(sum(float(o["energy_pj"]) for o in ops) - t["energy"]) <= 1e-9 * t["energy"]
PY
        then ok "$f: point $p (GLB.depth=$depth) is map ${flag:-(fused)} on the chain"; else bad "$f: point $p differs from map ${flag:-(fused)}"; fi
    done
done
grep -q '^1,2048,.*,ok,$' "$tmp/chain/points.csv" && [ "$(awk -F, '$1 == 1 {print $3}' "$tmp/chain/points.csv")" != "$(awk -F, '$1 == 1 {print $3}' "$tmp/chain_unfused/points.csv")" ] &&
    ok "fuse: false gives the unfused figures, not the fused" || bad "fuse: false changed nothing"

# A chain that fuses by recomputing a halo on the smaller buffer: each
# point is `map` on it with the point's --set (its energy by operation from
# the chain as rewritten).
"$bin" sweep -q $nr --threads 2 -o "$tmp/halo" "$data/halo.yaml" >/dev/null 2>"$tmp/err" || { bad "halo sweep"; cat "$tmp/err"; }
for p in 0 1; do
    depth=$(awk -F, -v p=$p '$1 == p {print $2}' "$tmp/halo/points.csv")
    "$bin" map -q $nr --threads 2 --json --set "GLB.depth=$depth" "$data/chain_design.yaml" \
        "$data/halo_chain.yaml" >"$tmp/halo.map$p.json" 2>"$tmp/err"
    if python3 - "$tmp/halo/points.csv" "$p" "$tmp/halo.map$p.json" "$tmp/halo/points/$p/halo_chain.layers.csv" <<'PY'
import csv, json, sys
r = {x["point"]: x for x in csv.DictReader(open(sys.argv[1]))}[sys.argv[2]]
m = json.load(open(sys.argv[3]))["best"]
t = m["total"]
assert r["status"] == "ok" and int(r["cycles"]) == t["cycles"], (r, t)
assert abs(float(r["energy_uj"]) * 1e6 - t["energy"]) <= 1e-9 * t["energy"]
ops = list(csv.DictReader(open(sys.argv[4])))
assert sum(int(o["computes"]) for o in ops) == t["computes"], (ops, t)
assert abs(sum(float(o["energy_pj"]) for o in ops) - t["energy"]) <= 1e-9 * t["energy"]
# the smaller buffer recomputes the halo: the pointwise layer computes 96
# points for its 80 (2 steps of 6 rows of 10, 4 x 2 channels)
if sys.argv[2] == "0":
    assert m["groups"][0]["recompute"] == {"p": 2}, m["groups"]
    assert int(ops[0]["computes"]) == 96, ops[0]
PY
    then ok "halo: point $p (GLB.depth=$depth) is map on the chain"; else bad "halo: point $p differs from map"; fi
done

# Warm starts on a chain (blocks of two; a block's first point with a
# twentieth of the budget, the next with a hundredth, each of its searches
# that the first ran too also starting from what that one found): 1 or 2
# threads and a resume inside a block write the same points; a block's
# first point is `map --effort 0.05`; a warm point is no worse than `map
# --effort 0.01`, its budget, and the warm starts show: better on one.
wch="$data/warm_chain.yaml"
"$bin" sweep -q --threads 2 -o "$tmp/wc2" "$wch" >/dev/null 2>"$tmp/err" || { bad "warm chain sweep"; cat "$tmp/err"; }
"$bin" sweep -q --threads 1 -o "$tmp/wc1" "$wch" >/dev/null 2>&1 || bad "warm chain sweep, 1 thread"
same "$tmp/wc2/points.csv" "$tmp/wc1/points.csv" "warm chain sweep: points.csv the same on 1 and 2 threads"
cp -r "$tmp/wc2" "$tmp/wcr" && head -2 "$tmp/wc2/points.csv" >"$tmp/wcr/points.csv" && rm -rf "$tmp/wcr/points/1" "$tmp/wcr/points/2" "$tmp/wcr/points/3"
"$bin" sweep -q --threads 2 --resume -o "$tmp/wcr" "$wch" >/dev/null 2>"$tmp/err" || { bad "warm chain sweep --resume"; cat "$tmp/err"; }
same "$tmp/wc2/points.csv" "$tmp/wcr/points.csv" "warm chain sweep resumed inside a block: points.csv byte-identical"
for p in 0 1 2 3; do
    depth=$(awk -F, -v p=$p '$1 == p {print $2}' "$tmp/wc2/points.csv")
    for e in 0.05 0.01; do
        "$bin" map -q --threads 2 --json --effort $e --set "GLB.depth=$depth" "$data/chain_design.yaml" \
            "$data/ffn_chain.yaml" >"$tmp/wc.map$p.$e.json" 2>"$tmp/err" || { bad "map --effort $e on point $p"; cat "$tmp/err"; }
    done
done
if python3 - "$tmp/wc2/points.csv" "$tmp" <<'PY'
import csv, json, sys
rows = {int(r["point"]): r for r in csv.DictReader(open(sys.argv[1]))}
def edp(p, e):
    t = json.load(open("%s/wc.map%d.%s.json" % (sys.argv[2], p, e)))["best"]["total"]
    return t["energy"] * t["cycles"]
better = 0
for p, r in rows.items():
    got = float(r["energy_uj"]) * 1e6 * int(r["cycles"])
    if p % 2 == 0:  # a block's first: map with its budget
        assert abs(got - edp(p, "0.05")) <= 1e-9 * got, (p, got, edp(p, "0.05"))
    else:
        cold = edp(p, "0.01")
        assert got <= cold * (1 + 1e-12), (p, got, cold)
        better += got < cold * (1 - 1e-12)
assert better >= 1, "no warm point better than its cold search"
PY
then ok "warm chain sweep: blocks' first points are map --effort 0.05, the warm ones no worse than map --effort 0.01 (one better)"
else bad "warm chain sweep against map"; fi

# A network with `fuse: true`: each point is `network --fuse` with the
# point's --set (the totals fused, its fused gap); its layers.csv gives
# each layer or fused operation with its run, then the network's totals
# fused and unfused.
# (3,000 evaluations a search: at the default, 48 s a run)
"$bin" sweep -q $nr --max-evals 3000 --threads 2 -o "$tmp/nfu" "$data/network_fused.yaml" >/dev/null 2>"$tmp/err" || { bad "network_fused sweep"; cat "$tmp/err"; }
for p in 0 1; do
    depth=$(awk -F, -v p=$p '$1 == p {print $2}' "$tmp/nfu/points.csv")
    "$bin" network -q $nr --max-evals 3000 --threads 2 --json --fuse --set "GlobalBuffer.depth=$depth" \
        "$src/tests/data/network/design.yaml" "$src/tests/data/network/fuse_net.yaml" >"$tmp/nfu$p.json" 2>"$tmp/err"
    if python3 - "$tmp/nfu/points.csv" "$p" "$tmp/nfu$p.json" "$tmp/nfu/points/$p/fuse_net.layers.csv" <<'PY'
import csv, json, sys
rows = {r["point"]: r for r in csv.DictReader(open(sys.argv[1]))}
r = rows[sys.argv[2]]
n = json.load(open(sys.argv[3]))["fusion"]
f, u = n["fused"], n["unfused"]
assert r["status"] == "ok" and float(r["gap"]) >= 1 - 1e-12, r
assert abs(float(r["gap"]) - n["gap"]) <= 1e-9 * n["gap"], (r["gap"], n["gap"])
assert int(r["cycles"]) == f["cycles"], (r["cycles"], f)
assert abs(float(r["energy_uj"]) * 1e6 - f["energy"]) <= 1e-9 * f["energy"], (r["energy_uj"], f)
assert float(r["dram_bytes"]) == f["backing_accesses"], (r["dram_bytes"], f)  # 8-bit words
lay = list(csv.DictReader(open(sys.argv[4])))
tot = {x["layer"]: x for x in lay if x["layer"].startswith("(network")}
assert float(tot["(network fused)"]["energy_pj"]) == f["energy"] and float(tot["(network unfused)"]["energy_pj"]) == u["energy"], tot
assert int(tot["(network unfused)"]["backing_accesses"]) == u["backing_accesses"], tot
body = [x for x in lay if not x["layer"].startswith("(network")]
e = sum(float(x["energy_pj"]) * int(x["repeat"]) for x in body)
assert abs(e - f["energy"]) <= 1e-9 * f["energy"], (e, f["energy"])
used = {"%s..%s" % (x["layers"][0], x["layers"][-1]) for x in n["runs"] if x.get("fused")}
assert used and {x["run"] for x in body if x["fused"] == "true"} == used, (body, used)
PY
    then ok "network_fused: point $p (GlobalBuffer.depth=$depth) is network --fuse"; else bad "network_fused: point $p differs from network --fuse"; fi
done

# MPI: 2 and 3 ranks write what one process writes.
if [ -n "$NESTMAP_MPIRUN" ]; then
    for np in 2 3; do
        $NESTMAP_MPIRUN --allow-run-as-root --oversubscribe -np $np "$bin" sweep -q $nr --threads 1 \
            -o "$tmp/mpi$np" "$data/buffer_dram.yaml" >/dev/null 2>"$tmp/err" || { bad "mpirun -np $np"; cat "$tmp/err"; }
        same "$tmp/a/points.csv" "$tmp/mpi$np/points.csv" "mpirun -np $np: points.csv as one process's"
        same "$tmp/a/pareto.csv" "$tmp/mpi$np/pareto.csv" "mpirun -np $np: pareto.csv as one process's"
        if diff -r "$tmp/a/points" "$tmp/mpi$np/points" >/dev/null; then ok "mpirun -np $np: per-point files as one process's"; else bad "mpirun -np $np: per-point files"; fi
        $NESTMAP_MPIRUN --allow-run-as-root --oversubscribe -np $np "$bin" sweep -q --threads 1 \
            -o "$tmp/wmpi$np" "$w" >/dev/null 2>"$tmp/err" || { bad "mpirun -np $np, warm"; cat "$tmp/err"; }
        same "$tmp/w2/points.csv" "$tmp/wmpi$np/points.csv" "mpirun -np $np: a warm sweep's points.csv as one process's"
        $NESTMAP_MPIRUN --allow-run-as-root --oversubscribe -np $np "$bin" sweep -q --threads 1 \
            -o "$tmp/wcmpi$np" "$wch" >/dev/null 2>"$tmp/err" || { bad "mpirun -np $np, warm chain"; cat "$tmp/err"; }
        same "$tmp/wc2/points.csv" "$tmp/wcmpi$np/points.csv" "mpirun -np $np: a warm chain sweep's points.csv as one process's"
    done
fi

finish
