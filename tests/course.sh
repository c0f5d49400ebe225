#!/bin/sh
# course.sh — the exercises of examples/course run as their READMEs say:
# every "$ command" line of a ```console block is run in the exercise's
# directory (with this build's nestmap first on PATH and no NESTMAP_PATH: a
# build finds the shipped designs and workloads by name, as a student's
# fresh build does), and what it prints must be the lines
# the README shows under it, exactly.  So the handouts never rot.
name=course
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/nestmap"
n=0
for readme in "$src"/examples/course/*/README.md; do
    n=$((n + 1))
    if PATH="$tmp/bin:$PATH" NESTMAP_PATH= python3 - "$readme" "$tmp/run" >"$tmp/report" 2>&1 <<'PY'
import os, subprocess, sys
readme, scratch = sys.argv[1], sys.argv[2]
cmds, inside = [], False
for line in open(readme, encoding="utf-8").read().split("\n"):
    if line.startswith("```"):
        inside = line.strip() == "```console"
        continue
    if not inside:
        continue
    if line.startswith("$ "):
        cmds.append([line[2:], []])
    elif cmds:
        cmds[-1][1].append(line)
if not cmds:
    print("FAIL - %s has no commands" % readme)
    sys.exit(1)
failed = 0
where = os.path.dirname(readme)
name = os.path.basename(where)
for cmd, want in cmds:
    got = subprocess.run(["sh", "-c", cmd], cwd=where, capture_output=True, text=True)
    lines = got.stdout.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not want:
        failed += 1
        print("FAIL - %s: %s shows no output in the README" % (name, cmd))
    elif lines == want:
        print("ok   - %s: %s" % (name, cmd))
    else:
        failed += 1
        print("FAIL - %s: %s (exit %d)" % (name, cmd, got.returncode))
        import difflib
        for d in difflib.unified_diff(want, lines, "README", "output", lineterm="", n=1):
            print("    " + d)
        if got.stderr:
            print("    stderr: " + got.stderr.strip().replace("\n", "\n    stderr: "))
sys.exit(1 if failed else 0)
PY
    then
        cat "$tmp/report"
        ok "$(basename "$(dirname "$readme")"): every command prints what its README shows"
    else
        cat "$tmp/report"
        bad "$(basename "$(dirname "$readme")"): the README and the output differ"
    fi
done
[ "$n" -eq 5 ] && ok "five exercises" || bad "$n exercises, not five"
finish
