#!/bin/sh
# manpage.sh — doc/nestmap.1 keeps up with the binary: every command of
# `nestmap --help` has a section, every option of `nestmap COMMAND --help`
# is described in that command's section, and the page renders without
# warnings.  Prints one line per check and a closing "N passed, M failed".

name=manpage
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
page="$src/doc/nestmap.1"

commands=$("$bin" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$commands" ] && ok "nestmap --help lists commands" || bad "no commands in nestmap --help"
for cmd in $commands; do
    # The section: from ".SS nestmap CMD" to the next section heading.
    awk -v want=".SS nestmap $cmd" '$0 == want { on = 1; next } /^\.S[SH] / { on = 0 } on' \
        "$page" | sed 's/\\-/-/g; s/\\f[BIRP]//g' >"$tmp/section"
    if [ ! -s "$tmp/section" ]; then
        bad "no section '.SS nestmap $cmd' in nestmap.1"
        continue
    fi
    ok "nestmap.1 has a section for $cmd"
    "$bin" "$cmd" --help | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--*[a-z][a-z-]*\).*/\2/p' |
        sort -u >"$tmp/options"
    [ -s "$tmp/options" ] || bad "$cmd --help lists no options"
    while read -r opt; do
        if grep -q -e "$opt\\([^a-z-]\\|\$\\)" "$tmp/section"; then
            ok "nestmap.1 ($cmd) describes $opt"
        else
            bad "nestmap.1 ($cmd) does not describe $opt, which '$cmd --help' lists"
        fi
    done <"$tmp/options"
done

if command -v groff >/dev/null 2>&1; then
    LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>"$tmp/warn"
    if [ ! -s "$tmp/warn" ]; then ok "nestmap.1 renders without warnings"; else bad "groff warns:"; cat "$tmp/warn"; fi
else
    echo "skip - groff not installed: the rendering is not checked (the content checks above ran)"
fi

finish
