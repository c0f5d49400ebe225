#!/bin/sh
# roofline.sh — `nestmap bound` as a roofline calculator: the CVPR 2024
# full-stack tutorial's example and NVIDIA's arithmetic-intensity table,
# with their units; rates with SI prefixes; padding and bias; the design's
# own peak and bandwidth; and what is refused.
name=roofline
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

tut="$src/workloads/layers/tutorial_conv.yaml"

# has FILE PATTERN WHAT
has() {
    if grep -q -- "$2" "$1"; then ok "$3"; else bad "$3: no '$2' in:"; cat "$1"; fi
}

# json_ok WHAT PYTHON-EXPRESSION (over j, the JSON in $tmp/out)
json_ok() {
    if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$tmp/out"; then
        ok "$1"
    else
        bad "$1: $2 fails on:"; cat "$tmp/out"
    fi
}

# The tutorial's layer: 3x3, stride 2, bias, 1x3x416x480 padded to
# 1x16x208x240, fp32, 1 TOPS, 1000 GB/s.
"$bin" bound --precision fp32 --peak 1T --bandwidth 1000GB/s "$tut" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] && ok "tutorial: exit 0" || { bad "tutorial: exit $rc"; cat "$tmp/err"; }
has "$tmp/out" "^operations  *44728320 FLOPs" "tutorial: 44,728,320 FLOPs"
has "$tmp/out" "^Inputs  *599040 words, 2396160 bytes" "tutorial: the padded input is 2,396,160 B"
has "$tmp/out" "^Outputs  *798720 words, 3194880 bytes" "tutorial: the output is 3,194,880 B"
has "$tmp/out" "^parameters  *448 words, 1792 bytes" "tutorial: 448 parameters, 1,792 B"
has "$tmp/out" "^compute time  *44.73 µs" "tutorial: 44.73 µs of compute"
has "$tmp/out" "^memory time  *5.593 µs" "tutorial: 5.59 µs of memory traffic"
has "$tmp/out" "^roofline time  *44.73 µs: compute-bound" "tutorial: compute-bound"
"$bin" bound --json --precision fp32 --peak 1T --bandwidth 1000GB/s "$tut" >"$tmp/out" 2>"$tmp/err"
json_ok "tutorial --json: FLOPs, bytes, parameters" \
    "j['flops'] == 44728320 and j['bias_adds'] == 798720 and j['parameter_words'] == 448 and j['parameter_bytes'] == 1792 and [t['bytes'] for t in j['tensors'] if t['name'] in ('Inputs', 'Outputs')] == [2396160, 3194880] and j['min_bytes'] == 5592832"
json_ok "tutorial --json: seconds and rates" \
    "abs(j['compute_s'] - 44.72832e-6) < 1e-15 and abs(j['memory_s'] - 5.592832e-6) < 1e-15 and j['bound_s'] == j['compute_s'] and j['time_bound_by'] == 'compute' and j['peak_flops_per_s'] == 1e12 and j['bandwidth_bytes_per_s'] == 1e12 and j['compute_cycles'] is None"

# NVIDIA, "GPU Performance Background User's Guide", arithmetic intensity
# at fp16: a 4096x1024 linear layer at batch 512 and 1, 3x3 max pooling at
# unit stride, ReLU; layer normalization under 10.
# of_problem WHAT PRECISION PROBLEM CHECK: bound --json on the one-line
# problem; CHECK is a Python expression over j, the JSON.
of_problem() {
    printf 'problem: {%s}\n' "$3" >"$tmp/p.yaml"
    "$bin" bound --json --precision "$2" "$tmp/p.yaml" >"$tmp/out" 2>"$tmp/err" ||
        { bad "$1: exit $?"; cat "$tmp/err"; return; }
    json_ok "$1" "$4"
}
intensity() { # WHAT PROBLEM EXPECTED-EXPRESSION (over a, the intensity)
    of_problem "$1" fp16 "$2" "(lambda a: $3)(j['arithmetic_intensity_flops_per_byte'])"
}
intensity "linear 4096x1024, batch 512: 315 FLOPs/B" "gemm: {M: 512, N: 4096, K: 1024}" "round(a) == 315"
intensity "linear 4096x1024, batch 1: 1 FLOPs/B" "gemm: {M: 1, N: 4096, K: 1024}" "round(a) == 1"
intensity "3x3 max pooling, unit stride: 2.25 FLOPs/B" "maxpool: {N: 1, C: 64, P: 56, Q: 56, window: 3, stride: 1, padding: same}" "a == 2.25"
intensity "ReLU: 0.25 FLOPs/B" "relu: {N: 1, C: 64, P: 56, Q: 56}" "a == 0.25"
intensity "layer normalization: under 10 FLOPs/B" "layernorm: {C: 4096, P: 2048}" "0 < a < 10"

# Rates: SI prefixes and units, all the same figure.
for peak in 1T 1000G 1e12 1TFLOP/s "1 TOPS"; do
    "$bin" bound --json --precision fp32 --peak "$peak" "$tut" >"$tmp/out" 2>"$tmp/err"
    json_ok "--peak '$peak' is 1e12 FLOP/s" "j['peak_flops_per_s'] == 1e12"
done
for bw in 1TB/s 1000GB/s 1e12 1000000MB/s; do
    "$bin" bound --json --precision fp32 --bandwidth "$bw" "$tut" >"$tmp/out" 2>"$tmp/err"
    json_ok "--bandwidth '$bw' is 1e12 B/s" "j['bandwidth_bytes_per_s'] == 1e12 and j['compute_s'] is None and j['bound_s'] is None"
done
"$bin" bound --json --precision int8 --bandwidth 1GiB/s "$tut" >"$tmp/out" 2>"$tmp/err"
json_ok "--bandwidth 1GiB/s is 2^30 B/s" "j['bandwidth_bytes_per_s'] == 2**30"

# refused CODE WHAT MESSAGE -- ARGS...
refused() {
    code=$1 what=$2 msg=$3
    shift 4
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq "$code" ] && grep -q -- "$msg" "$tmp/err"; then
        ok "$what"
    else
        bad "$what: exit $rc, wanted $code and '$msg'"; cat "$tmp/err"
    fi
}
refused 2 "bits per second are refused" "give bytes per second" -- bound --precision fp32 --bandwidth 1Tb/s "$tut"
refused 2 "a zero peak is refused" "give operations per second" -- bound --precision fp32 --peak 0 "$tut"
refused 2 "an unknown precision is refused" "not a precision" -- bound --precision fp12 "$tut"
refused 2 "no design and no precision: asks for --precision" "give the word width with --precision" -- bound "$tut"
refused 2 "--set without a design is refused" "no 'architecture' in the input files to change" -- bound --precision fp32 --set DRAM.width=8 "$tut"

# Padding: 'same' (input = stride x output), 'valid', per side, [h, w].
pad() { # WHAT PROBLEM INPUT-WORDS
    of_problem "$1" int8 "$2" "[t['words'] for t in j['tensors'] if t['name'] == 'Inputs'] == [$3]"
}
pad "padding same, 3x3 stride 1: input = output" "conv2d: {C: 2, K: 2, P: 56, Q: 56, R: 3, S: 3, padding: same}" "2 * 56 * 56"
pad "padding same, 1x1 stride 2: input = 2 x output" "conv2d: {C: 2, K: 2, P: 7, Q: 7, stride: 2, padding: same}" "2 * 14 * 14"
pad "padding same, 7x7 stride 2 (ResNet conv1): 224x224" "conv2d: {C: 3, K: 64, P: 112, Q: 112, R: 7, S: 7, stride: 2, padding: same}" "3 * 224 * 224"
pad "padding valid: the window's extent" "conv2d: {C: 2, K: 2, P: 54, Q: 54, R: 3, S: 3, padding: valid}" "2 * 56 * 56"
pad "padding 1 per side" "conv2d: {C: 2, K: 2, P: 56, Q: 56, R: 3, S: 3, padding: 1}" "2 * 56 * 56"
pad "padding [height, width]" "conv2d: {C: 2, K: 2, P: 56, Q: 54, R: 3, S: 3, padding: [0, 1]}" "2 * 56 * 56"
printf 'problem: {conv2d: {C: 2, K: 2, P: 4, Q: 4, R: 3, S: 3, padding: 9}}\n' >"$tmp/p.yaml"
refused 2 "padding that leaves no input is refused, located" "p.yaml:1:65: error: padding of 9 on each side leaves no input" -- bound --precision fp32 "$tmp/p.yaml"
printf 'problem: {conv2d: {C: 2, K: 2, P: 4, Q: 4, R: 3, S: 3, padding: full}}\n' >"$tmp/p.yaml"
refused 2 "an unknown padding is refused" "padding takes 'same', 'valid'" -- bound --precision fp32 "$tmp/p.yaml"

# The model moves the loop nest's tensors, padded or not: the same stats.
printf 'problem: {conv2d: {C: 3, M: 16, P: 240, Q: 208, R: 3, S: 3, stride: 2}}\n' >"$tmp/nopad.yaml"
"$bin" map -q --json --max-evals 2000 "$src/arch/simple/weight_stationary.yaml" "$tut" >"$tmp/a.json" 2>"$tmp/err"
"$bin" map -q --json --max-evals 2000 "$src/arch/simple/weight_stationary.yaml" "$tmp/nopad.yaml" >"$tmp/b.json" 2>>"$tmp/err"
if python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); a,b=a['summary'],b['summary']; sys.exit(0 if a['energy_pj']==b['energy_pj'] and a['cycles']==b['cycles'] else 1)" "$tmp/a.json" "$tmp/b.json"; then
    ok "padding and bias change the roofline, not the model's counts"
else
    bad "padding changed the model:"; cat "$tmp/err"; head -5 "$tmp/a.json" "$tmp/b.json"
fi

# From a design: the peak is its units at its clock (2 FLOPs per MAC unit per
# cycle), the memory time its outermost bandwidth at its clock; another
# precision scales the bytes, not the design's cycle bound.
tpu="$src/arch/systolic/tpu_v1.yaml" conv1="$src/workloads/layers/resnet50_conv1.yaml"
"$bin" bound --json "$tpu" "$conv1" >"$tmp/out" 2>"$tmp/err"
cp "$tmp/out" "$tmp/design.json"
json_ok "design: peak = 2 x units x clock, memory time = memory cycles x period" \
    "j['peak_from'] == 'the design' and abs(j['peak_flops_per_s'] - 2 * 65536 / 1.428571e-9) < 1 and abs(j['compute_s'] - j['flops'] / j['peak_flops_per_s']) < 1e-18 and abs(j['memory_s'] - j['memory_cycles'] * 1.428571e-9) < 1e-15 and j['bandwidth_bytes_per_s'] == 48 / 1.428571e-9 and j['bound_cycles'] > 0"
"$bin" bound --json --precision fp32 "$tpu" "$conv1" >"$tmp/out" 2>"$tmp/err"
json_ok "design at another precision: the bytes and the memory time scale" \
    "(lambda d: abs(j['memory_s'] - d['memory_s'] * 32 / d['word_bits']) < 1e-15 and j['memory_cycles'] == d['memory_cycles'] and j['min_bytes'] == d['min_bytes'] * 32 / d['word_bits'])(json.load(open('$tmp/design.json')))"
# stair_of CSV <<PY: the Python on stdin fills pts with (capacity, traffic)
# of every mapping it enumerates; true when CSV holds their staircase (each
# capacity's least traffic, kept where it falls), as --curve writes it.
stair_of() {
    { cat; cat <<'PY'
pts.sort()
stair = []
for c, t in pts:
    if not stair or t < stair[-1][1]:
        stair.append((c, t))
got = [(int(r["capacity_words"]), int(r["least_traffic_words"])) for r in csv.DictReader(open(sys.argv[1]))]
sys.exit(0 if got == stair else print(got, stair) or 1)
PY
    } >"$tmp/stair.py"
    python3 "$tmp/stair.py" "$1"
}
# --curve (Orojenesis): the staircase of least off-chip traffic by buffer
# capacity equals an independent enumeration of the single-buffer mappings
# of a small GEMM (each loop split in two, the outer loops in every order;
# a read-only tensor moves its tile once per iteration of the loops down to
# its innermost relevant outer loop, an output twice less its first
# writes).
printf 'problem:\n  gemm: {M: 8, N: 12, K: 6}\n' >"$tmp/g.yaml"
"$bin" bound -q --curve --precision int8 -o "$tmp/curve" "$tmp/g.yaml" >"$tmp/out" 2>"$tmp/err" ||
    { bad "bound --curve"; cat "$tmp/err"; }
if stair_of "$tmp/curve/curve.csv" <<'PY'
import csv, itertools, sys
dims = {"M": 8, "N": 12, "K": 6}
rel = {"A": "MK", "B": "KN", "Z": "MN"}
pts = []
def divs(n): return [d for d in range(1, n + 1) if n % d == 0]
for f in itertools.product(*(divs(n) for n in dims.values())):
    outer = dict(zip(dims, f))
    tile = {t: 1 for t in rel}
    for t, ds in rel.items():
        for d in ds:
            tile[t] *= dims[d] // outer[d]
    cap = sum(tile.values())
    loops = [d for d in dims if outer[d] > 1]
    best = None
    for order in itertools.permutations(loops):        # outermost first
        traffic = 0
        for t, ds in rel.items():
            inner = max([i for i, d in enumerate(order) if d in ds], default=-1)
            r = 1
            for d in order[:inner + 1]:
                r *= outer[d]
            size = 1
            for d in ds:
                size *= dims[d]
            traffic += tile[t] * r if t != "Z" else 2 * tile[t] * r - size
        best = traffic if best is None else min(best, traffic)
    pts.append((cap, best))
PY
then ok "--curve: the staircase of an independent enumeration of a GEMM's single-buffer mappings"
else bad "--curve differs from the enumeration"; fi
# --json --curve: the same points under "curve", valid by the schema.
"$bin" bound -q --json --curve --precision int8 "$tmp/g.yaml" >"$tmp/out" 2>"$tmp/err"
json_ok "--json --curve: the CSV's points under \"curve\"" \
    "[(p['capacity_words'], p['least_traffic_words']) for p in j['curve']['points']] == [(float(r['capacity_words']), float(r['least_traffic_words'])) for r in __import__('csv').DictReader(open('$tmp/curve/curve.csv'))] and j['curve']['design_capacity_words'] is None"
python3 "$src/tests/validate_json.py" "$src/doc/nestmap.schema.json" bound "$tmp/out" >/dev/null 2>&1 &&
    ok "--json --curve validates" || bad "--json --curve does not validate"
[ -s "$tmp/curve/curve.gp" ] && { ! command -v gnuplot >/dev/null 2>&1 || [ -s "$tmp/curve/curve.png" ]; } &&
    ok "--curve -o: curve.csv, curve.gp (and the figure)" || bad "--curve -o: files"
# A design of one buffer: a mapping found on it moves at least the curve's
# least traffic at the buffer's capacity (the curve is a bound there).
cat >"$tmp/onebuf.yaml" <<'EOB'
architecture:
  version: '0.4'
  subtree:
  - name: chip
    local:
    - {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 16}}
    - {name: Buffer, class: SRAM, attributes: {depth: 96, width: 16, datawidth: 16}}
    - {name: MAC, class: intmac, attributes: {datawidth: 16}}
EOB
"$bin" map -q --threads 2 --metric last_level_accesses --max-evals 4000 -o "$tmp/onebuf" "$tmp/onebuf.yaml" "$tmp/g.yaml" >/dev/null 2>"$tmp/err"
"$bin" bound -q --curve "$tmp/onebuf.yaml" "$tmp/g.yaml" "$tmp/onebuf/map.yaml" >"$tmp/out" 2>"$tmp/err"
has "$tmp/out" "^the design's on-chip capacity: 96 words" "--curve with a design: its capacity on the curve"
awk '/^the mapping moves/ { x = $(NF - 6); sub(/x$/, "", x); found = 1; bad = !(x + 0 >= 1) } END { exit !found || bad }' "$tmp/out" &&
    ok "--curve with a mapping: it moves at least the least traffic at the design's capacity" ||
    { bad "--curve: a mapping below the curve"; cat "$tmp/out"; }
"$bin" bound -q -o "$tmp/x" --precision int8 "$tmp/g.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && has "$tmp/err" "-o writes the --curve files" "-o without --curve: a usage error"
"$bin" bound -q --curve --curve-budget 10 --precision int8 "$tmp/g.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && has "$tmp/err" "single-buffer mappings (each loop split in two, the outer loops in every order), more than the 10" \
    "--curve-budget: a layer past it is refused, with its count"

# --curve on a chain of two GEMMs: the staircase of an independent
# enumeration of its single-buffer mappings: each GEMM alone (as above; the
# cut runs them one after the other, each with the whole buffer), or both
# fused with Z kept in the buffer and the loops over m and n they share
# split in two, the outer ones in every order, each GEMM's other loops
# inside (fusion.h: while one GEMM runs, the buffer holds its tiles and the
# tiles of the other that the innermost stepping shared loop leaves in
# place).
cat >"$tmp/g2.yaml" <<'EOB'
problem:
  name: two_gemms
  chain:
  - {name: first, einsum: "Z[m,n] = A[m,k] * B[k,n]"}
  - {name: second, einsum: "Y[m,o] = Z[m,n] * C[n,o]"}
  bounds: {m: 8, n: 6, k: 4, o: 3}
EOB
"$bin" bound -q --curve -o "$tmp/chain" "$tmp/g2.yaml" >"$tmp/out" 2>"$tmp/err" ||
    { bad "bound --curve on a chain"; cat "$tmp/err"; }
if stair_of "$tmp/chain/curve.csv" <<'PY'
import csv, itertools, sys
B = {"m": 8, "n": 6, "k": 4, "o": 3}
ops = [{"A": "mk", "B": "kn", "Z": "mn"}, {"Z": "mn", "C": "no", "Y": "mo"}]
out = ["Z", "Y"]
def divs(n): return [d for d in range(1, n + 1) if n % d == 0]
def size(ds): return eval("*".join(str(B[d]) for d in ds))
def tile(ds, f): return eval("*".join(str(B[d] // f.get(d, 1)) for d in ds))
def traffic(t, ds, f, order, output):   # order: outermost first
    inner = max([i for i, d in enumerate(order) if d in ds], default=-1)
    r = 1
    for d in order[:inner + 1]:
        r *= f[d]
    return 2 * tile(ds, f) * r - size(ds) if output else tile(ds, f) * r
def alone(i):
    rel, dims = ops[i], sorted(set("".join(ops[i].values())))
    for fs in itertools.product(*(divs(B[d]) for d in dims)):
        f = dict(zip(dims, fs))
        loops = [d for d in dims if f[d] > 1]
        for order in itertools.permutations(loops):
            yield (sum(tile(ds, f) for ds in rel.values()),
                   sum(traffic(t, ds, f, order, t == out[i]) for t, ds in rel.items()))
pts = [(max(c1, c2), t1 + t2) for c1, t1 in alone(0) for c2, t2 in alone(1)]
for fm, fn in itertools.product(divs(8), divs(6)):
    f = {"m": fm, "n": fn}
    for order in itertools.permutations([d for d in "mn" if f[d] > 1]):
        t = sum(traffic(x, ds, f, order, x == "Y") for op in ops for x, ds in op.items() if x != "Z")
        own = [sum(tile(ds, f) for ds in op.values()) for op in ops]
        step = order[-1] if order else None   # the innermost stepping loop
        kept = [sum(tile(ds, f) for ds in op.values() if step and step not in ds) for op in ops]
        pts.append((max(own[0] + kept[1], own[1] + kept[0]), t))
PY
then ok "--curve on a chain: the staircase of an independent enumeration of two GEMMs' single-buffer mappings, alone and fused"
else bad "--curve on a chain differs from the enumeration"; fi
has "$tmp/out" "first+second: " "--curve on a chain: a fused group named on the curve"
"$bin" bound -q --json --curve "$tmp/g2.yaml" >"$tmp/out" 2>"$tmp/err"
python3 "$src/tests/validate_json.py" "$src/doc/nestmap.schema.json" bound_chain "$tmp/out" >/dev/null 2>&1 &&
    ok "--json --curve on a chain validates" || bad "--json --curve on a chain does not validate"
json_ok "--json --curve on a chain: the CSV's points" \
    "j['operations'] == ['first', 'second'] and [(p['capacity_words'], p['least_traffic_words']) for p in j['curve']['points']] == [(float(r['capacity_words']), float(r['least_traffic_words'])) for r in __import__('csv').DictReader(open('$tmp/chain/curve.csv'))]"
"$bin" bound -q "$tmp/g2.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && has "$tmp/err" "a chain of operations: its bound is the least off-chip traffic" \
    "bound on a chain without --curve: said what it gives"
# A fused mapping found on the one-buffer design moves at least the chain
# curve's least traffic at its capacity.
"$bin" map -q --threads 2 --metric last_level_accesses --max-evals 2000 -o "$tmp/onebuf2" "$tmp/onebuf.yaml" "$tmp/g2.yaml" >/dev/null 2>"$tmp/err" ||
    { bad "map on a chain for the curve"; cat "$tmp/err"; }
"$bin" bound -q --curve "$tmp/onebuf.yaml" "$tmp/g2.yaml" "$tmp/onebuf2/map.yaml" >"$tmp/out" 2>"$tmp/err"
awk '/^the mapping moves/ { x = $(NF - 6); sub(/x$/, "", x); found = 1; bad = !(x + 0 >= 1) } END { exit !found || bad }' "$tmp/out" &&
    ok "--curve on a chain with a fused mapping: it moves at least the least traffic at the design's capacity" ||
    { bad "--curve on a chain: a mapping below the curve"; cat "$tmp/out" "$tmp/err"; }

# A sparse design (2:4 weights on the A100-like sparse tensor core): the
# first block counts what it must still do, as the cycle bound does: half
# the computes (at least: the bound's margin), the weights' nonzeros; so
# compute time = effectual FLOPs / peak and memory time = memory cycles x
# period.  The dense design keeps every MAC and word.
{ cat "$src/workloads/layers/resnet50_res5_3x3.yaml"
  printf '%s\n' "  densities:" "    Weights: {distribution: fixed_structured, density: 0.5}"; } >"$tmp/w24.yaml"
"$bin" bound --json "$src/arch/gpu/a100.yaml" "$tmp/w24.yaml" >"$tmp/dense.json" 2>"$tmp/err"
"$bin" bound --json "$src/arch/gpu/a100_sparse.yaml" "$tmp/w24.yaml" >"$tmp/out" 2>"$tmp/err"
json_ok "sparse design: effectual MACs, FLOPs, traffic and times as its cycle bound counts them" \
    "(lambda d: d['effectual_macs'] is None and j['macs'] == d['macs'] and 0.99998 * j['macs'] / 2 <= j['effectual_macs'] <= j['macs'] / 2 and j['flops'] == round(2 * j['effectual_macs']) and abs(j['compute_s'] - j['flops'] / j['peak_flops_per_s']) < 1e-18 and abs(j['memory_s'] - j['memory_cycles'] * 7.092199e-10) < 1e-15 and j['min_bytes'] < d['min_bytes'] and j['compute_cycles'] * 2 <= d['compute_cycles'] + 1)(json.load(open('$tmp/dense.json')))"

# Separate read and write ports: the slower of the two.
sed 's/shared_bandwidth: 4}/read_bandwidth: 4, write_bandwidth: 2}/' "$src/arch/teaching/pe_array.yaml" >"$tmp/rw.yaml"
"$bin" bound --json "$tmp/rw.yaml" "$conv1" >"$tmp/out" 2>"$tmp/err"
json_ok "design with read and write bandwidths: memory time = memory cycles x period" \
    "j['bandwidth_from'] == 'the design' and j['bandwidth_bytes_per_s'] is None and abs(j['memory_s'] - j['memory_cycles'] * 1e-9) < 1e-15 and j['memory_cycles'] == max((9408 + 157323) / 4, 802816 / 2)"
"$bin" bound --peak 1T "$tpu" "$conv1" >"$tmp/out" 2>"$tmp/err"
has "$tmp/out" "^peak  *1 TFLOP/s (given)" "a given peak overrides the design's"
has "$tmp/out" "^roofline bound  *[0-9]* cycles" "the design's cycle bound is still there"

# Exact to 10^30 MACs and beyond: FLOPs are counted to the last digit.
printf 'problem:\n  gemm: {M: 10000000000, N: 10000000000, K: 10000000000, bias: true}\n' >"$tmp/e30.yaml"
"$bin" bound --precision bf16 "$tmp/e30.yaml" >"$tmp/out" 2>"$tmp/err"
has "$tmp/out" "^operations  *2000000000200000000000000000000 FLOPs" "10^30 MACs with a bias: FLOPs exact"

# Units in a design (nestmap's extension; doc/design-reference.md): a
# bandwidth in bytes per second, a depth in bytes and the clock as a period
# give exactly what the plain forms give (0.5 GB/s at 1 ns with 8-bit words
# is 0.5 words per cycle, which throttles this mapping; 1 KiB of 8-word rows
# is 128 rows).
cat >"$tmp/units.yaml" <<'EOF'
architecture:
  version: '0.4'
  subtree:
  - name: system
    attributes: {technology: 40nm, global_cycle_seconds: 1ns}
    local:
    - {name: MainMemory, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 8, shared_bandwidth: 0.5GB/s}}
    - {name: Buffer, class: SRAM, attributes: {depth: 1KiB, width: 64, datawidth: 8, read_bandwidth: 32GB/s}}
    - {name: MACC, class: intmac, attributes: {datawidth: 8}}
problem:
  shape:
    name: conv1d
    dimensions: [R, P]
    data_spaces:
    - {name: Weights, projection: [[[R]]]}
    - {name: Inputs, projection: [[[R], [P]]]}
    - {name: Outputs, projection: [[[P]]], read_write: true}
  instance: {R: 3, P: 16}
mapping:
- {target: MainMemory, type: temporal, factors: R=1 P=1, permutation: RP}
- {target: Buffer, type: temporal, factors: R=3 P=16, permutation: RP}
EOF
sed -e 's|0.5GB/s|0.5|' -e 's|depth: 1KiB|depth: 128|' -e 's|32GB/s|32|' -e 's|1ns|1e-9|' \
    "$tmp/units.yaml" >"$tmp/plain.yaml"
"$bin" model -q --json "$tmp/units.yaml" >"$tmp/units.json" 2>"$tmp/err" &&
    "$bin" model -q --json "$tmp/plain.yaml" >"$tmp/plain.json" 2>>"$tmp/err"
if cmp -s "$tmp/units.json" "$tmp/plain.json"; then
    ok "units in a design: the same stats as the plain forms"
else
    bad "units in a design differ from the plain forms:"; cat "$tmp/err"; diff "$tmp/units.json" "$tmp/plain.json" | head
fi
cp "$tmp/units.json" "$tmp/out"
json_ok "units: 0.5GB/s throttles the layer to 74 cycles (37 words at 0.5 a cycle)" \
    'j["summary"]["cycles"] == 74'
json_ok "units: 1KiB of 64-bit rows is 1024 words" \
    '[l["size"] for l in j["levels"] if l["name"] == "Buffer"] == [1024]'
"$bin" model -q --json --set MainMemory.shared_bandwidth=1GB/s --set Buffer.depth=2KiB \
    "$tmp/units.yaml" >"$tmp/out" 2>"$tmp/err"
json_ok "units through --set: at 1GB/s the layer is compute-bound (48 cycles), 2KiB doubles the words" \
    'j["summary"]["cycles"] == 48 and [l["size"] for l in j["levels"] if l["name"] == "Buffer"] == [2048]'

# Expressions with units: the same stats again when the quantities are
# computed (`variables:` and attributes referring to one another).
sed -e 's|attributes: {technology: 40nm, global_cycle_seconds: 1ns}|attributes: {technology: 40nm, global_cycle_seconds: 1 / 1GHz, row: 8B}|' \
    -e 's|shared_bandwidth: 0.5GB/s|shared_bandwidth: 1GB/s / 2|' \
    -e 's|depth: 1KiB|depth: 128 * row|' -e 's|read_bandwidth: 32GB/s|read_bandwidth: 2 * 16GB/s|' \
    "$tmp/units.yaml" >"$tmp/exprs.yaml"
"$bin" model -q --json "$tmp/exprs.yaml" >"$tmp/exprs.json" 2>"$tmp/err"
if cmp -s "$tmp/exprs.json" "$tmp/plain.json"; then
    ok "expressions with units (2 * 16GB/s, 128 * row, 1 / 1GHz): the plain forms' stats"
else
    bad "expressions with units differ from the plain forms:"; cat "$tmp/err"; diff "$tmp/exprs.json" "$tmp/plain.json" | head
fi
sed -e 's|depth: 1KiB|depth: 1KiB + 1ns|' "$tmp/units.yaml" >"$tmp/mixed.yaml"
"$bin" model -q "$tmp/mixed.yaml" >/dev/null 2>"$tmp/err"
has "$tmp/err" "mixed.yaml:[0-9]*:[0-9]*: error: attribute 'depth': '+' adds B and s" "units that do not add: a located error"

# A DRAM's type sets its bandwidth too (--set, or a sweep's type axis): one
# HBM2 stack peaks at 256 GB/s (JESD235A), unless a bandwidth of its own is
# set with it.
"$bin" bound -q --set DRAM.type=HBM2 "$src/arch/systolic/systolic_16x16.yaml" "$tut" >"$tmp/out" 2>"$tmp/err"
has "$tmp/out" "^bandwidth  *256 GB/s (the design)" "--set DRAM.type=HBM2: the stack's 256 GB/s"
"$bin" bound -q --set DRAM.type=HBM2 --set DRAM.shared_bandwidth=8 "$src/arch/systolic/systolic_16x16.yaml" "$tut" >"$tmp/out" 2>"$tmp/err"
has "$tmp/out" "^bandwidth  *8 GB/s (the design)" "--set DRAM.type=HBM2 with a bandwidth of its own keeps that (8 bytes a cycle at 1 GHz)"

# A level with no bandwidth has none, said in one warning naming it;
# `unlimited` states it and the warning goes, the numbers the same.
"$bin" model -q --json "$src/examples/conv1d_os.yaml" >"$tmp/out" 2>"$tmp/err"
json_ok "no bandwidth: one warning names the level (Buffer), unlimited" \
    'len([w for w in j["warnings"] if w["message"].startswith("no bandwidth given for Buffer: it is unlimited")]) == 1'
cp "$tmp/out" "$tmp/given.json"
sed 's/{depth: 64, width: 8, datawidth: 8}/{depth: 64, width: 8, datawidth: 8, read_bandwidth: unlimited, write_bandwidth: unlimited}/' \
    "$src/examples/conv1d_os.yaml" >"$tmp/unlimited.yaml"
"$bin" model -q --json "$tmp/unlimited.yaml" >"$tmp/out" 2>"$tmp/err"
json_ok "'unlimited' written: no warning, the same cycles" \
    'j["warnings"] == [] and j["summary"]["cycles"] == json.load(open("'"$tmp/given.json"'"))["summary"]["cycles"]'

finish
