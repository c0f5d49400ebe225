#!/bin/sh
# exercises.sh — the configurations of the public timeloop-accelergy-exercises
# (a copy in ../shared/timeloop-exercises, or $NESTMAP_EXERCISES) run as a
# Timeloop user has them, against the reference outputs Timeloop wrote
# beside them (compared by tests/timeloop_stats.py):
#
# - each model exercise, its files given as its run script gives them (with
#   the reference ERT, so that energies compare too): every count, cycle and
#   energy equal;
# - each mapper exercise, searched by nestmap under the exercise's own
#   constraints: its mapping keeps every constraint of the reference's
#   processed input, and is at or below the reference by the exercise's own
#   metric;
# - each reference's parsed-processed-input.yaml (what Timeloop itself ran),
#   as it is, with the reference's mapping: every count, cycle and energy
#   equal.
#
# The eleven Sparseloop configurations (example_designs/sparseloop, which
# the 2021 ISCA sparse tutorial's notebooks run) are checked the same way.
name=exercises
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

ex=${NESTMAP_EXERCISES:-$src/../shared/timeloop-exercises}
if [ ! -d "$ex/workspace" ]; then
    echo "exercises.sh: no timeloop-exercises copy at $ex (set NESTMAP_EXERCISES); skipped"
    exit 77
fi
ws=$ex/workspace
t=$ws/tutorial_exercises/01_accelergy_timeloop_2020_ispass/timeloop
ta=$ws/tutorial_exercises/01_accelergy_timeloop_2020_ispass/timeloop+accelergy
ed=$ws/example_designs/example_designs
cmp="python3 $src/tests/timeloop_stats.py"
# The reference outputs were written by Timeloop before January 2025, whose
# rule for keeping a tile that stood still differs from today's (see
# --stride-rule); the conformance corpus pins today's.
rule="--stride-rule 2024"
# The mapper runs search less than nestmap's default (16 lanes, not 128) to
# keep the suite short; they still must reach the reference's metric.
MAPOPTS=${MAPOPTS---lanes 16}

# model NAME REFDIR FILES...: nestmap model on FILES plus the reference ERT.
model() {
    what=$1 ref=$2 r=
    shift 2
    out=$tmp/$(echo "$what" | tr ' /()' '____')
    if "$bin" model -q $rule -o "$out" --timeloop-names "$@" "$ref/timeloop-model.ERT.yaml" \
        >"$out.log" 2>&1 &&
        r=$($cmp --energy "$out/timeloop-model.stats.txt" "$ref/timeloop-model.stats.txt"); then
        ok "$what: $r"
    else
        bad "$what: ${r:-$(tail -3 "$out.log")}"
    fi
}

# mapper NAME REFDIR METRIC FILES...: nestmap map (2 threads, its own
# search) on the files as the exercise's script gives them, with the
# reference ERT; then its best mapping on the reference's processed input,
# as Timeloop counted (--stride-rule 2024): the mapping must keep every
# constraint Timeloop's front end wrote there (model checks them), and reach
# the exercise's own metric at or below the reference's.
mapper() {
    what=$1 ref=$2 metric=$3 r=
    shift 3
    out=$tmp/$(echo "$what" | tr ' /()' '____')
    if "$bin" map -q --threads 2 $MAPOPTS -o "$out" "$@" "$ref/timeloop-mapper.ERT.yaml" \
        >"$out.log" 2>&1 &&
        "$bin" model -q $rule -o "$out.tl" --timeloop-names "$ref/parsed-processed-input.yaml" \
            "$ref/timeloop-mapper.ERT.yaml" "$out/map.yaml" >>"$out.log" 2>&1 &&
        r=$($cmp --metric "$metric" "$out.tl/timeloop-model.stats.txt" \
            "$ref/timeloop-mapper.stats.txt"); then
        ok "$what: $r"
    else
        bad "$what: ${r:-$(tail -3 "$out.log")}"
    fi
}

# processed NAME REFDIR KIND: the reference's processed input as it is; a
# mapper's with the mapping it found (timeloop-mapper.map.yaml).
processed() {
    what=$1 ref=$2 kind=$3 r=
    out=$tmp/$(echo "$what" | tr ' /()' '____').p
    set -- "$ref/parsed-processed-input.yaml" "$ref/timeloop-$kind.ERT.yaml"
    [ "$kind" = mapper ] && set -- "$@" "$ref/timeloop-mapper.map.yaml"
    if "$bin" model -q $rule -o "$out" --timeloop-names "$@" >"$out.log" 2>&1 &&
        r=$($cmp --energy "$out/timeloop-model.stats.txt" \
            "$ref/timeloop-$kind.stats.txt"); then
        ok "$what (processed input): $r"
    else
        bad "$what (processed input): ${r:-$(tail -3 "$out.log")}"
    fi
}

# ---- tutorial exercises 00-06 (run_example.py) ----
model "00" "$t/00-model-conv1d-1level/ref-output" \
    "$t"/00-*/arch/*.yaml "$t"/00-*/map/*.yaml "$t"/00-*/prob/*.yaml
for m in ws os; do
    model "01_$m" "$t/01-model-conv1d-2level/ref-output/$m" \
        "$t"/01-*/arch/*.yaml "$t/01-model-conv1d-2level/map/conv1d-2level-$m.map.yaml" \
        "$t"/01-*/prob/*.yaml
done
e=$t/02-model-conv1d+oc-2level
model "02_os" "$e/ref-output/no-tiling" "$e"/arch/*.yaml "$e/map/conv1d+oc-2level-os.map.yaml" \
    "$e"/prob/*.yaml
model "02_os_tiled" "$e/ref-output/tiling" "$e"/arch/*.yaml \
    "$e/map/conv1d+oc-2level-os-tiled.map.yaml" "$e"/prob/*.yaml
e=$t/03-model-conv1d+oc-3level
model "03_no_bypass" "$e/ref-output/no-bypass" "$e"/arch/*.yaml \
    "$e/map/conv1d+oc-3level.map.yaml" "$e"/prob/*.yaml
model "03_bypass" "$e/ref-output/bypass" "$e"/arch/*.yaml \
    "$e/map/conv1d+oc-3level-bypass.map.yaml" "$e"/prob/*.yaml

# Exercise 04 targets the container PE in its mapping.  Its reference
# outputs were written from an earlier version of its design whose PE
# container enclosed the GlobalBuffer too (the processed input has
# GlobalBuffer[1..16] below inter_PE_spatial); as written today the
# GlobalBuffer is shared.  So: the design as the reference had it must give
# the reference numbers exactly, and the design as written must run with
# one GlobalBuffer feeding 16 register files.
e=$t/04-model-conv1d+oc-3levelspatial
python3 - "$e/arch/3levelspatial.arch.yaml" >"$tmp/04-as-referenced.arch.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head, *nodes = re.split(r"(?m)^(?=  - !)", text)
name = [re.search(r"name: (\w+)", n).group(1) for n in nodes]
g, p = name.index("GlobalBuffer"), name.index("PE")
nodes[g], nodes[p] = nodes[p], nodes[g]
sys.stdout.write(head + "".join(nodes))
PY
for m in cp kp; do
    model "04_$m (PE enclosing GlobalBuffer, as the reference ran)" "$e/ref-output/$m" \
        "$tmp/04-as-referenced.arch.yaml" "$e/map/conv1d+oc+ic-3levelspatial-$m-ws.map.yaml" \
        "$e"/prob/*.yaml
    if "$bin" model --json "$e"/arch/*.yaml "$e/map/conv1d+oc+ic-3levelspatial-$m-ws.map.yaml" \
        "$e"/prob/*.yaml 2>"$tmp/04.err" | python3 -c '
import json, sys
st = json.load(sys.stdin)
lv = {l["name"]: l for l in st["levels"]}
assert st["valid"], "invalid"
assert lv["GlobalBuffer"]["instances"] == 1, lv["GlobalBuffer"]["instances"]
assert "inter_PE_spatial" in json.dumps(st["mapping"]), "no inter_PE_spatial in the mapping"
assert lv["RegisterFile"]["instances"] == 16
' 2>>"$tmp/04.err"; then
        ok "04_$m (as written): one GlobalBuffer, 16 register files behind inter_PE_spatial"
    else
        bad "04_$m (as written): $(tail -2 "$tmp/04.err")"
    fi
done

e=$t/05-mapper-conv1d+oc-3level
for c in baked:1mapping freebypass:freebypass null:null; do
    dir=${c%%:*} file=${c#*:}
    mapper "05_$dir" "$e/ref-output/$dir" delay-energy "$e"/arch/*.yaml \
        "$e"/constraints/*"$file".constraints.yaml "$e"/prob/*.yaml "$e"/mapper/*.yaml
done
e=$t/06-mapper-convlayer-eyeriss
mapper "06" "$e/ref-output" edp "$e"/arch/*.yaml "$e"/arch/components/*.yaml \
    "$e"/prob/*.yaml "$e"/mapper/*.yaml
# timeloop+accelergy: a Jinja2 design, with the variables run_example.py gives.
mapper "timeloop+accelergy intmac" "$ta/ref-output/intmac" edp \
    --jinja mac_class=intmac --jinja input_weight_datawidth=8 --jinja psum_datawidth=16 \
    "$ta/arch/arch.yaml" "$ta"/arch/components/*.yaml "$ta"/prob/*.yaml "$ta"/mapper/*.yaml
mapper "timeloop+accelergy fpmac" "$ta/ref-output/fpmac" edp \
    --jinja mac_class=fpmac --jinja input_weight_datawidth=32 --jinja psum_datawidth=32 \
    "$ta/arch/arch.yaml" "$ta"/arch/components/*.yaml "$ta"/prob/*.yaml "$ta"/mapper/*.yaml
# The example designs, through their top.yaml.jinja2 (run_example_designs.py).
for d in eyeriss_like simba_like simple_output_stationary simple_weight_stationary; do
    mapper "example_designs $d" "$ed/$d/ref_outputs/default_problem" edp \
        --jinja "architecture=$d" "$ed/top.yaml.jinja2"
done

# The Sparseloop designs (densities, gating and skipping, compressed
# formats), as run_example_designs.py runs them: searched under their
# mapping.yaml (which leaves bypass free, so nestmap may find a better
# mapping than the reference's) or, for 04.2.2 and 04.2.3, their own
# constraints; the metric is their mapper's, EDP.
for d in $(ls "$ed/sparseloop"); do
    mapper "example_designs sparseloop/$d" "$ed/sparseloop/$d/ref_outputs/default_problem" edp \
        --jinja "architecture=sparseloop/$d" "$ed/top.yaml.jinja2"
done

# ---- every reference's processed input ----
for p in 00-model-conv1d-1level/ref-output 01-model-conv1d-2level/ref-output/ws \
    01-model-conv1d-2level/ref-output/os 02-model-conv1d+oc-2level/ref-output/no-tiling \
    02-model-conv1d+oc-2level/ref-output/tiling 03-model-conv1d+oc-3level/ref-output/no-bypass \
    03-model-conv1d+oc-3level/ref-output/bypass 04-model-conv1d+oc-3levelspatial/ref-output/cp \
    04-model-conv1d+oc-3levelspatial/ref-output/kp; do
    processed "${p%%/*}${p#*/ref-output}" "$t/$p" model
done
for p in 05-mapper-conv1d+oc-3level/ref-output/baked 05-mapper-conv1d+oc-3level/ref-output/freebypass \
    05-mapper-conv1d+oc-3level/ref-output/null 06-mapper-convlayer-eyeriss/ref-output; do
    processed "${p%%/ref-output*}${p#*/ref-output}" "$t/$p" mapper
done
for c in intmac fpmac; do
    processed "timeloop+accelergy/$c" "$ta/ref-output/$c" mapper
done
for d in eyeriss_like simba_like simple_output_stationary simple_weight_stationary; do
    processed "example_designs/$d" "$ed/$d/ref_outputs/default_problem" mapper
done
# ... the Sparseloop ones too: every actual, gated and skipped count, the
# representations and their capacities, cycles and energies.
for d in $(ls "$ed/sparseloop"); do
    processed "example_designs/sparseloop/$d" "$ed/sparseloop/$d/ref_outputs/default_problem" mapper
done

# A mapper's processed input searched as it is (Timeloop's mapper keys,
# null values): at or below the reference.
ref=$t/06-mapper-convlayer-eyeriss/ref-output
out=$tmp/06map
if "$bin" map -q $rule --threads 2 $MAPOPTS -o "$out" --timeloop-names \
    "$ref/parsed-processed-input.yaml" "$ref/timeloop-mapper.ERT.yaml" >"$out.log" 2>&1 &&
    r=$($cmp --metric edp "$out/timeloop-mapper.stats.txt" "$ref/timeloop-mapper.stats.txt"); then
    ok "06 (processed input, searched): $r"
else
    bad "06 (processed input, searched): ${r:-$(tail -3 "$out.log")}"
fi

# Every workload file of layer_shapes/ loads (templates, <<< merges, the
# files' HStride for Hstride read as Timeloop reads it; the three with
# sparse densities too).
n=0 failed=0
for f in $(find "$ws/example_designs/layer_shapes" -name '*.yaml' ! -name problem_base.yaml | sort); do
    n=$((n + 1))
    if ! "$bin" bound -q --precision int8 "$f" >/dev/null 2>"$tmp/ls.err"; then
        failed=$((failed + 1))
        [ "$failed" -le 3 ] && head -1 "$tmp/ls.err"
    fi
done
if [ "$n" -ge 1363 ] && [ "$failed" -eq 0 ]; then
    ok "layer_shapes: all $n workload files load"
else
    bad "layer_shapes: $failed of $n do not load"
fi

finish
