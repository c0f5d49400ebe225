#!/bin/sh
# options.sh — every command accepts exactly the options it honours: an
# unknown option, or a common option the command would ignore, is a usage
# error (exit 2) that names it and shows the command's options; every option
# a command accepts is in its --help.  Prints one line per check and a
# closing "N passed, M failed".

name=options
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
data="$src/tests/data"
one="$data/good/conv1d_1level.yaml"
net="$data/network/design.yaml $data/network/small_net.yaml"
swp="$data/sweep/buffer_dram.yaml"

# The common options, each with a value where it takes one.
all_common="--output=$tmp/o --json --threads=1 --seed=1 --set=X.depth=1 --builtin-energy"

# command | input | the common options it honours (the rest must be refused)
cat >"$tmp/table" <<EOF
model|$one|-o --json --set --builtin-energy
map|$one|-o --json --threads --seed --set --builtin-energy
mapspace|$one|--json --seed --set --builtin-energy
energy|$one|--json --set --builtin-energy
bound|$one|-o --json --set
network|$net|-o --json --threads --seed --set --builtin-energy
sweep|$swp|-o --json --threads --seed --set --builtin-energy
census|$one|-o --json --threads --seed --set --builtin-energy
compare|$data/network/small_net.yaml $data/network/design.yaml|-o --json --threads --seed --set --builtin-energy
EOF

while IFS='|' read -r cmd input honours; do
    "$bin" "$cmd" --help >"$tmp/help" 2>&1
    for opt in $honours; do
        if grep -q -e "^ *$opt\([ ,]\|\$\)" -e "^ *-[a-z], $opt" "$tmp/help"; then
            ok "$cmd --help lists $opt"
        else
            bad "$cmd --help does not list $opt"
        fi
    done
    for word in $all_common; do
        opt=${word%%=*}
    [ "$opt" = --output ] && opt=-o
        case " $honours " in *" $opt "*) continue ;; esac
        # shellcheck disable=SC2086 # $input may name several files
        "$bin" "$cmd" "$word" $input >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -eq 2 ] && grep -q "nestmap $cmd: '${word%%=*}' is not an option of this command" "$tmp/err" &&
            grep -q "usage: nestmap $cmd" "$tmp/err" && [ ! -s "$tmp/out" ]; then
            ok "$cmd refuses $opt (exit 2, named, usage shown)"
        else
            bad "$cmd $opt: exit $rc"
            head -3 "$tmp/err"
        fi
    done
    # shellcheck disable=SC2086
    "$bin" "$cmd" --frobnicate $input >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q "nestmap $cmd: unknown option '--frobnicate'" "$tmp/err"; then
        ok "$cmd: an unknown option is a usage error"
    else
        bad "$cmd --frobnicate: exit $rc"
    fi
    # shellcheck disable=SC2086
    "$bin" "$cmd" -q --json=1 $input >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 2 ]; then ok "$cmd: a flag given a value is a usage error"; else bad "$cmd --json=1: exit $rc"; fi
done <"$tmp/table"

# A value where one is needed.
"$bin" map --threads >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "needs a value" "$tmp/err"; then ok "--threads without a value"; else bad "--threads without a value: exit $rc"; fi
"$bin" map -q --threads=2 --seed=3 --max-evals 200 --victory 0 "$one" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "--threads=N and --seed=S forms"; else bad "--threads=N: exit $rc"; cat "$tmp/err"; fi

# -q keeps what a failure message refers to.
sed 's/depth: 64/depth: 2/' "$one" >"$tmp/tiny.yaml"
"$bin" map -q --max-evals 100 "$tmp/tiny.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "see the counts by reason above" "$tmp/err" && grep -q "100 capacity (Buffer 100)" "$tmp/err"; then
    ok "map -q still shows the counts its failure refers to"
else
    bad "map -q failure: exit $rc"; cat "$tmp/err"
fi

# Counts are exact or refused: a 10^30-MAC GEMM is counted to the last
# digit by bound (text and JSON), refused by the 64-bit cost model with a
# message, and a layer past 2^120 MACs is refused as input.
ws="$src/arch/simple/weight_stationary.yaml"
printf 'problem:\n  gemm: {M: 10000000000, N: 10000000000, K: 10000000000}\n' >"$tmp/e30.yaml"
"$bin" bound -q "$ws" "$tmp/e30.yaml" >"$tmp/out" 2>"$tmp/err"
if grep -q "^multiply-accumulates   1000000000000000000000000000000$" "$tmp/out" &&
    grep -q "^least traffic          600000000000000000000 bytes" "$tmp/out" &&
    grep -q "^compute bound          3906250000000000000000000000 cycles (256 units)" "$tmp/out"; then
    ok "bound counts 10^30 MACs exactly"
else
    bad "bound at 10^30 MACs:"; cat "$tmp/out" "$tmp/err"
fi
"$bin" bound -q --json "$ws" "$tmp/e30.yaml" >"$tmp/out" 2>&1
if grep -q '"macs": 1000000000000000000000000000000,' "$tmp/out" && grep -q '"compute_cycles": 3906250000000000000000000000,' "$tmp/out"; then
    ok "bound --json carries the exact 10^30 count"
else
    bad "bound --json at 10^30:"; head -4 "$tmp/out"
fi
sed 's/instance: {R: 3, P: 16}/instance: {R: 3, P: 9000000000000000000}/' "$one" >"$tmp/e19.yaml"
"$bin" map -q --max-evals 10 "$tmp/e19.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "conv1d has 27000000000000000000 multiply-accumulates; the cost model counts accesses in 64 bits and takes layers of up to 2^60" "$tmp/err"; then
    ok "the 64-bit model refuses what it cannot count (exit 2)"
else
    bad "map at 10^30: exit $rc"; cat "$tmp/err"
fi
printf 'problem:\n  gemm: {M: 10000000000000, N: 10000000000000, K: 10000000000000}\n' >"$tmp/e36.yaml"
"$bin" bound -q "$ws" "$tmp/e36.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "more than 2^120 (about 1.3e36) multiply-accumulates" "$tmp/err"; then
    ok "a layer past 2^120 MACs is refused, located"
else
    bad "10^36: exit $rc"; cat "$tmp/out" "$tmp/err"
fi

# Inputs: '-' is standard input (once), a directory is named as one, a
# shipped design or workload is found by name.
"$bin" model -q --json - <"$one" >"$tmp/stdin.json" 2>"$tmp/err"
rc=$?
"$bin" model -q --json "$one" >"$tmp/file.json" 2>/dev/null
# (the same but for where the warnings point: <stdin> or the file)
nowarn() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j.pop("warnings"); print(json.dumps(j))' "$1"; }
if [ "$rc" -eq 0 ] && [ "$(nowarn "$tmp/stdin.json")" = "$(nowarn "$tmp/file.json")" ]; then ok "'-' reads standard input"; else bad "'-': exit $rc"; cat "$tmp/err"; fi
printf 'problem: {gemm: {M: 4, N: 4, K: 0}}\n' | "$bin" bound "$src/arch/simple/weight_stationary.yaml" - >"$tmp/out" 2>"$tmp/err"
if grep -q "^<stdin>:1:" "$tmp/err"; then ok "an error in standard input is located at <stdin>:LINE:COL"; else bad "stdin error:"; cat "$tmp/err"; fi
"$bin" model - - <"$one" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "standard input) is named 2 times" "$tmp/err"; then ok "'-' twice is refused"; else bad "'-' twice: exit $rc"; fi
"$bin" bound "$src/arch" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "arch: error: is a directory" "$tmp/err"; then ok "a directory says so"; else bad "directory: exit $rc"; cat "$tmp/err"; fi
(cd "$src" && "$bin" bound -q eyeriss/eyeriss resnet50_conv1) >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^multiply-accumulates *118013952" "$tmp/out"; then ok "designs and layers by name"; else bad "by name: exit $rc"; cat "$tmp/err"; fi
(cd "$tmp" && NESTMAP_PATH="/nonexistent:$src" "$bin" bound -q simba/simba resnet50_conv1) >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "NESTMAP_PATH is searched, in order"; else bad "NESTMAP_PATH: exit $rc"; cat "$tmp/err"; fi
(cd "$tmp" && NESTMAP_PATH="/nonexistent" "$bin" bound eyeriss/eyeris resnet50_conv1) >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "eyeriss/eyeris: error: no such file, nor a design or workload of that name under ., /nonexistent," "$tmp/err"; then
    ok "an unknown name says where it looked"
else
    bad "unknown name: exit $rc"; cat "$tmp/err"
fi

finish
