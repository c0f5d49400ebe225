#!/bin/sh
# bad_inputs.sh — the malformed-input catalogue (tests/data/bad/CATALOGUE):
# each input must make nestmap exit 2 with exactly the located message the
# catalogue gives as the first line on stderr.  Prints one line per input
# and a closing "N passed, M failed".

name=bad_inputs
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
cd "$src" || exit 99
n=0
while IFS= read -r line; do
    case $line in '#'* | '') continue ;; esac
    file=tests/data/$(echo "$line" | awk -F ' [|] ' '{ print $1 }')
    cmd=$(echo "$line" | awk -F ' [|] ' '{ print $2 }')
    want=$(echo "$line" | awk -F ' [|] ' '{ print substr($0, index($0, $3)) }')
    n=$((n + 1))
    # shellcheck disable=SC2086 # the command and its design are words
    "$bin" $cmd "$file" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(head -1 "$tmp/err" | LC_ALL=C tr -d '\r')
    if [ "$rc" -eq 2 ] && [ "$got" = "$file:$want" ]; then
        ok "$file"
    else
        bad "$file: exit $rc"
        echo "  want: $file:$want"
        echo "  got:  $got"
    fi
done <"$src/tests/data/bad/CATALOGUE"
if [ "$n" -ge 60 ]; then ok "the catalogue holds $n inputs"; else bad "the catalogue holds only $n inputs (60 wanted)"; fi
finish
