#!/usr/bin/env python3
"""Grades a student's answer file against an exercise's key.

    python3 grade.py key/5_search.answers answers.txt
    python3 grade.py --model key/5_search.answers     (a full-marks answer file)

Both files hold one answer a line, `QUESTION: ANSWER` (`#` starts a
comment).  How the key's answer grades the student's:

  a number        right within 1 % (or the key's own `+- TOL`, absolute)
  words           right when equal, ignoring case, spaces, '-' and '_';
                  `a | b` accepts either
  a list          `a, b` (with a comma): the same items in any order
  ? text          not graded here: the teacher reads it (the key's text
                  says what to look for)

Prints a line per question of the key and a score; exits 0 when every
graded answer is right, 1 when one is wrong or missing, 2 on a bad file.
"""
import re
import sys


def read(path):
    answers, order = {}, []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        print("grade: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
        sys.exit(2)
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            print("grade: %s:%d: expected 'QUESTION: ANSWER', got %r" % (path, n, line),
                  file=sys.stderr)
            sys.exit(2)
        q, a = (s.strip() for s in line.split(":", 1))
        if q in answers:
            print("grade: %s:%d: question %s answered twice" % (path, n, q), file=sys.stderr)
            sys.exit(2)
        answers[q] = a
        order.append(q)
    return answers, order


def number(text):
    text = text.replace(",", "").replace("_", "")
    m = re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?x?", text)
    return float(text.rstrip("x")) if m else None


def norm(word):
    return re.sub(r"[\s_\-]+", "", word.lower())


def grade(key, got):
    """(right, what was expected) for one answer; right is None when the
    key leaves it to the teacher."""
    if key.startswith("?"):
        return None, key[1:].strip()
    tol = None
    if "+-" in key:
        key, t = key.split("+-", 1)
        key, tol = key.strip(), float(t)
    want = number(key)
    if want is not None:
        have = number(got.split("+-", 1)[0].strip())
        if have is None:
            return False, key
        limit = tol if tol is not None else 0.01 * abs(want)
        return abs(have - want) <= limit, key
    if "," in key:
        return sorted(map(norm, key.split(","))) == sorted(map(norm, got.split(","))), key
    return any(norm(k) == norm(got) for k in key.split("|")), key


def model(key, order):
    """An answer file with full marks: each question's first accepted
    answer, numbers without their tolerance."""
    for q in order:
        a = key[q]
        if a.startswith("?"):
            continue
        a = a.split("+-", 1)[0].strip()
        if "," not in a:
            a = a.split("|", 1)[0].strip()
        print("%s: %s" % (q, a))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--model":
        model(*read(sys.argv[2]))
        return
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[1].strip(), file=sys.stderr)
        sys.exit(2)
    key, order = read(sys.argv[1])
    got, _ = read(sys.argv[2])
    right = graded = 0
    for q in order:
        if q not in got:
            ok, want = grade(key[q], "")
            if ok is None:
                print("by hand   %s: (no answer)" % q)
                continue
            graded += 1
            print("missing   %s: expected %s" % (q, want))
            continue
        ok, want = grade(key[q], got[q])
        if ok is None:
            print("by hand   %s: %s   (look for: %s)" % (q, got[q], want))
            continue
        graded += 1
        right += ok
        print("%-9s %s: %s%s" % ("right" if ok else "wrong", q, got[q],
                                 "" if ok else "   (expected %s)" % want))
    for q in got:
        if q not in key:
            print("unknown   %s: no such question in the key" % q)
    print("score: %d of %d graded answers right" % (right, graded))
    sys.exit(0 if right == graded else 1)


if __name__ == "__main__":
    main()
