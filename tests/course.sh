#!/bin/sh
# course.sh — the exercises of examples/course run as their keys say: every
# "$ command" line of a ```console block of key/EXERCISE.md is run in the
# exercise's directory (with this build's nestmap first on PATH and no
# NESTMAP_PATH: a build finds the shipped designs and workloads by name, as
# a student's fresh build does), and what it prints must be the lines the
# key shows under it, exactly.  Each handout (EXERCISE/README.md) must ask
# for the same commands and answer names as its key, and grade.py must
# give the key's model answers full marks and a wrong answer file none.
# So the handouts never rot.  COURSE_DIR: another copy of examples/course
# (the installed one, from tests/install/installcheck.sh).  COURSE_SKIP:
# exercises not to run, each said as skipped (.ci/run's ASan+UBSan stage
# leaves out the two whose fused searches take most of the time; the plain
# stage and the installed copy run them all).
name=course
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

course=${COURSE_DIR:-$src/examples/course}
mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/nestmap"
n=0
for key in "$course"/key/*.md; do
    ex=$(basename "$key" .md)
    n=$((n + 1))
    case " ${COURSE_SKIP:-} " in
    *" $ex "*) echo "skip - $ex (COURSE_SKIP): not run"; continue ;;
    esac
    if PATH="$tmp/bin:$PATH" NESTMAP_PATH= python3 - "$key" "$course/$ex" >"$tmp/report" 2>&1 <<'PY'
import os, subprocess, sys
key, where = sys.argv[1], sys.argv[2]
name = os.path.basename(where)

def blocks(path, lang):
    """The fenced blocks of a Markdown file whose fence names lang."""
    out, fence, keep = [], False, False
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("```"):
            fence = not fence
            keep = fence and line.strip() == "```" + lang
            if keep:
                out.append([])
            continue
        if keep:
            out[-1].append(line)
    return out

cmds = []
for block in blocks(key, "console"):
    for line in block:
        if line.startswith("$ "):
            cmds.append([line[2:], []])
        elif cmds:
            cmds[-1][1].append(line)
failed = 0
if not cmds:
    print("FAIL - %s has no commands" % key)
    sys.exit(1)
# the handout asks for the same commands, and for the key's answers
readme = os.path.join(where, "README.md")
asked = [l for b in blocks(readme, "sh") for l in b if l.strip()]
if asked != [c for c, _ in cmds]:
    failed += 1
    print("FAIL - %s: the handout's commands are not the key's" % name)
keyed = [l.split(":", 1)[0].strip() for l in open(key[:-3] + ".answers", encoding="utf-8")
         if l.split("#", 1)[0].strip()]
sheet = [l.rstrip(":").strip() for b in blocks(readme, "") for l in b if l.strip()]
if sheet != keyed:
    failed += 1
    print("FAIL - %s: the handout's answer names are not the key's: %s" % (name, sheet))
for cmd, want in cmds:
    got = subprocess.run(["sh", "-c", cmd], cwd=where, capture_output=True, text=True)
    lines = got.stdout.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not want:
        failed += 1
        print("FAIL - %s: %s shows no output in the key" % (name, cmd))
    elif lines == want:
        print("ok   - %s: %s" % (name, cmd))
    else:
        failed += 1
        print("FAIL - %s: %s (exit %d)" % (name, cmd, got.returncode))
        import difflib
        for d in difflib.unified_diff(want, lines, "key", "output", lineterm="", n=1):
            print("    " + d)
        if got.stderr:
            print("    stderr: " + got.stderr.strip().replace("\n", "\n    stderr: "))
sys.exit(1 if failed else 0)
PY
    then
        cat "$tmp/report"
        ok "$ex: every command prints what its key shows; the handout asks for the same"
    else
        cat "$tmp/report"
        bad "$ex: the key, the handout and the output differ"
    fi
    # the checker: full marks for the key's model answers, none for wrong ones
    answers="$course/key/$ex.answers"
    python3 "$course/grade.py" --model "$answers" >"$tmp/model.txt"
    if python3 "$course/grade.py" "$answers" "$tmp/model.txt" >"$tmp/graded" 2>&1 &&
       grep -q "^score: \([0-9]*\) of \1 graded" "$tmp/graded"; then
        ok "$ex: grade.py gives the key's model answers full marks ($(tail -1 "$tmp/graded"))"
    else
        bad "$ex: grade.py does not accept the key's model answers"; cat "$tmp/graded"
    fi
    sed 's/: .*/: 12345 wrong/' "$tmp/model.txt" >"$tmp/wrong.txt"
    python3 "$course/grade.py" "$answers" "$tmp/wrong.txt" >"$tmp/graded" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "^score: 0 of" "$tmp/graded"; then
        ok "$ex: grade.py rejects a wrong answer file (exit 1, no marks)"
    else
        bad "$ex: grade.py gave a wrong answer file exit $rc: $(tail -1 "$tmp/graded")"
    fi
done
[ "$n" -eq 7 ] && ok "seven exercises" || bad "$n exercises, not seven"
finish
