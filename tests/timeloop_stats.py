#!/usr/bin/env python3
"""Compares nestmap's timeloop-model.stats.txt (written with -o DIR
--timeloop-names) with a reference one that Timeloop wrote.

    timeloop_stats.py [--energy] [--metric edp|delay-energy] NESTMAP_STATS REFERENCE_STATS

Without --metric: every count and cycle Timeloop prints per level and data
space must be equal (partition size, utilized capacity and instances,
reads, fills, updates, temporal reductions, cycles, computes, utilization);
with --energy, every energy too, within 0.01 pJ or 0.01 % (Timeloop prints
two decimals), and the total within 0.01 uJ.

With --metric (mapper runs, whose mappings may differ): nestmap's result
must be at least as good as the reference by the mapper's own metric:
`edp` (energy x cycles), or `delay-energy` (cycles, then energy).

Timeloop's layout changed over its versions; the labels of both are read
("Utilized instances" and "Utilized instances (max)", "Computes (total)" and
"Actual Computes (total)").  Prints one line, "ok ..." or "FAIL ...", and
exits 0 or 1.
"""
import re
import sys

ALIASES = {
    "Utilized instances": "Utilized instances (max)",
    "Actual Computes (total)": "Computes (total)",
}
COUNTS = [
    "Partition size", "Utilized capacity", "Utilized instances (max)",
    "Scalar reads (per-instance)", "Scalar fills (per-instance)",
    "Scalar updates (per-instance)", "Temporal reductions (per-instance)",
]
# Timeloop's sparse layout (Sparseloop) splits the counts: compared where
# the reference prints them.
COUNTS += [
    "Data tile shape", "Max utilized data storage capacity", "Representation format",
    "Max utilized Repr format storage capacity", "Utilized instances (average)",
    "Algorithmic scalar reads (per-instance)", "Actual scalar reads (per-instance)",
    "Gated scalar reads (per-instance)", "Skipped scalar reads (per-instance)",
    "Algorithmic scalar fills (per-instance)", "Actual scalar fills (per-instance)",
    "Gated scalar fills (per-instance)", "Skipped scalar fills (per-instance)",
    "Algorithmic scalar updates (per-instance)", "Actual scalar updates (per-instance)",
    "Gated scalar updates (per-instance)", "Skipped scalar updates (per-instance)",
    "Address generations (per-cluster)",
]
ARITH = ["Utilized instances (max)", "Computes (total)", "Cycles"]
ARITH_SPARSE = ["Algorithmic Computes (total)", "Gated Computes (total)",
                "Skipped Computes (total)"]


def parse(path):
    """{level: {"_": {key: text}, dataspace: {key: text}}} plus "Summary"."""
    levels, cur, ds = {}, None, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            head = line.strip()
            if head.startswith("Networks") or head.startswith("Operational Intensity"):
                cur = None
                continue
            if head == "Summary Stats":
                cur, ds = levels.setdefault("Summary", {"_": {}}), None
                continue
            m = re.match(r"^=== (.+) ===$", head)
            if m:
                cur, ds = levels.setdefault(m.group(1), {"_": {}}), None
                continue
            if cur is None:
                continue
            m = re.match(r"^    (\w+):$", line)
            if m:
                ds = cur.setdefault(m.group(1), {})
                continue
            m = re.match(r"^\s*([^:]+?)\s*:\s*(\S.*)$", line)
            if not m:
                continue
            key = ALIASES.get(m.group(1), m.group(1))
            if line.startswith("        ") and ds is not None:
                ds[key] = m.group(2)
            elif not line.startswith("        "):
                ds = None
                cur["_"][key] = m.group(2)
    return levels


def num(text):
    m = re.match(r"^-?[0-9.]+(e[-+]?[0-9]+)?", text)
    return float(m.group(0)) if m else None


def close(a, b):
    return abs(a - b) <= max(0.011, 1e-4 * abs(b))


def summary(levels, path):
    """Cycles and energy (uJ): the energy from the computes and the total
    fJ per compute where the file has them (the printed uJ has two decimals,
    0.00 for a small layer)."""
    s = levels.get("Summary", {"_": {}})["_"]
    cycles, energy = num(s.get("Cycles", "nan")), num(s.get("Energy", "nan"))
    text = open(path).read()
    m = re.search(r"(?m)^(?:Actual )?Computes = (\d+)\nfJ/Compute\n((?:    .*\n?)*)", text)
    if m:
        t = re.search(r"(?m)^\s*Total\s*=\s*([0-9.eE+-]+)", m.group(2))
        if t:
            energy = int(m.group(1)) * float(t.group(1)) * 1e-9
    return cycles, energy


def compare_counts(ours, ref, energy):
    bad, n = [], 0

    def check(where, a, b, tol):
        nonlocal n
        n += 1
        if a is None:
            bad.append(f"{where}: missing (reference {b})")
        elif num(b) is None:  # text (a representation format)
            if a.strip() != b.strip():
                bad.append(f"{where}: nestmap {a}, reference {b}")
        elif (close(num(a), num(b)) if tol else num(a) == num(b)) is False:
            bad.append(f"{where}: nestmap {a}, reference {b}")

    for name, lv in ref.items():
        if name == "Summary":
            continue
        spaces = [k for k in lv if k != "_"]
        arith = "Computes (total)" in lv["_"]
        if not arith and not spaces:
            continue  # a level every data space bypasses
        if name not in ours:
            bad.append(f"level {name}: not in nestmap's output")
            continue
        o = ours[name]
        if arith:
            for k in ARITH:
                check(f"{name}.{k}", o["_"].get(k), lv["_"][k], False)
            for k in ARITH_SPARSE:
                if k in lv["_"]:
                    check(f"{name}.{k}", o["_"].get(k), lv["_"][k], False)
            if energy:
                check(f"{name}.Energy (total)", o["_"].get("Energy (total)"),
                      lv["_"]["Energy (total)"], True)
            continue
        check(f"{name}.Cycles", o["_"].get("Cycles"), lv["_"]["Cycles"], False)
        for d in spaces:
            od = o.get(d, {})
            for k in COUNTS:
                if k in lv[d]:
                    check(f"{name}.{d}.{k}", od.get(k), lv[d][k], False)
            if energy:
                check(f"{name}.{d}.Energy (total)", od.get("Energy (total)"),
                      lv[d]["Energy (total)"], True)
    rs, os_ = ref["Summary"]["_"], ours.get("Summary", {"_": {}})["_"]
    check("Summary.Cycles", os_.get("Cycles"), rs["Cycles"], False)
    check("Summary.Utilization", os_.get("Utilization"), rs["Utilization"], False)
    if energy:
        n += 1
        a, b = num(os_.get("Energy", "nan")), num(rs["Energy"])
        if a is None or abs(a - b) > 0.011:
            bad.append(f"Summary.Energy: nestmap {os_.get('Energy')}, reference {rs['Energy']}")
    return bad, n


def main(argv):
    energy, metric = False, None
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--energy":
            energy = True
        elif opt == "--metric":
            metric = argv.pop(0)
        else:
            sys.exit(f"timeloop_stats.py: unknown option {opt}")
    if len(argv) != 2:
        sys.exit(__doc__)
    ours, ref = parse(argv[0]), parse(argv[1])
    if "Summary" not in ref:
        print(f"FAIL {argv[1]}: no Summary Stats (not a Timeloop stats file)")
        return 1
    if metric:
        (oc, oe), (rc, re_) = summary(ours, argv[0]), summary(ref, argv[1])
        if oc is None or oe is None:
            print(f"FAIL {argv[0]}: no Summary Stats")
            return 1
        if metric == "edp":
            good = oc * oe <= rc * re_ * (1 + 1e-4)
            what = f"EDP {oc * oe:.6g} vs reference {rc * re_:.6g} (cycles x uJ)"
        else:
            good = oc < rc or (oc == rc and oe <= re_ + 0.011)
            what = f"cycles {oc:.0f} vs {rc:.0f}, energy {oe} vs {re_} uJ"
        print(("ok " if good else "FAIL ") + what)
        return 0 if good else 1
    bad, n = compare_counts(ours, ref, energy)
    if bad:
        print(f"FAIL {len(bad)} of {n} fields differ: " + "; ".join(bad[:6]))
        return 1
    print(f"ok {n} fields equal" + (" (energies within 0.01 pJ)" if energy else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
