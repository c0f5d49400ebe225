#!/bin/sh
# cli.sh — the nestmap binary as a user meets it: help, exit codes, located
# errors with a caret, JSON, output files, and no crash on any malformed input.
# Prints one line per check and a closing "N passed, M failed".

bin=${NESTMAP_BIN:-./nestmap}
src=${NESTMAP_SRCDIR:-.}
data="$src/tests/data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

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
has "$tmp/out" "not yet implemented" "--help says which commands are not implemented yet"
expect 0 "--version" -- "$bin" --version
has "$tmp/out" "^nestmap [0-9]" "--version prints the version"
expect 2 "no arguments" -- "$bin"
expect 2 "unknown command" -- "$bin" modle
has "$tmp/err" "did you mean 'model'" "unknown command suggests the closest"
expect 0 "model --help" -- "$bin" model --help
has "$tmp/out" "usage: nestmap model" "model --help shows usage"
expect 2 "model without files" -- "$bin" model
expect 2 "unknown option" -- "$bin" model --frobnicate "$data/good/conv1d_1level.yaml"

for cmd in map energy mapspace bound network sweep; do
    expect 2 "$cmd is not yet implemented" -- "$bin" $cmd "$data/good/conv1d_1level.yaml"
    has "$tmp/err" "not yet implemented" "$cmd says so"
    expect 0 "$cmd --help" -- "$bin" $cmd --help
done

expect 0 "model on a good input" -- "$bin" model "$data/good/conv1d_1level.yaml"
has "$tmp/out" "Summary" "model prints a summary"
has "$tmp/out" "for P in \[0:16)" "model prints the loop nest"
expect 0 "model --json" -- "$bin" model --json "$data/good/conv1d_1level.yaml"
has "$tmp/out" '"valid": true' "JSON says the mapping is valid"
has "$tmp/out" '"cycles": 48.0' "JSON has the cycles"
expect 0 "model -o DIR" -- "$bin" model -q -o "$tmp/outdir" "$data/good/conv1d_1level.yaml"
for f in stats.txt stats.json map.txt; do
    if [ -s "$tmp/outdir/$f" ]; then ok "-o writes $f"; else bad "-o did not write $f"; fi
done

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
has "$tmp/out" '"computes": 48.0' "split inputs give the same result"
expect 0 "a later file replaces a key" -- "$bin" model "$tmp/arch.yaml" "$tmp/rest.yaml" "$tmp/rest.yaml"
has "$tmp/err" "warning: top-level key 'problem' replaces" "replacement is reported"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
