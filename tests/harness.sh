# harness.sh — what the shell tests share: the binary and source tree under
# test, a scratch directory removed on exit, and ok/bad counters.  Sourced
# after setting `name` (the scratch directory's prefix); the test ends with
# `finish`.
bin=${NESTMAP_BIN:-./nestmap}
src=${NESTMAP_SRCDIR:-.}
# Absolute, so that a test may change directory.
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
src=$(cd "$src" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nestmap-$name.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
# The ok/FAIL lines a loop wrote to FILE (a loop in a pipe runs in a
# subshell, where ok and bad cannot count): printed and counted.
tally() {
    cat "$1"
    pass=$((pass + $(grep -c '^ok' "$1")))
    fail=$((fail + $(grep -c '^FAIL' "$1")))
}

finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
