"""Tables and chart data of the Eyeriss study from nestmap network -o.

python3 tabulate.py OUT DATAFLOW...  reads OUT/DATAFLOW/network.json (AlexNet
at batch 16) and OUT/fc_DATAFLOW/network.json (the FC layers at other
batches); writes OUT/table.txt (and prints it), OUT/energy.dat and
OUT/fc_batch.dat.  Energies are per MAC in the paper's normalized units
(framework.yaml: one MAC = 1).
"""
import json
import os
import sys

LEVELS = [("MAC", "ALU"), ("RegisterFile", "RF"), ("noc", "array"),
          ("GlobalBuffer", "buffer"), ("DRAM", "DRAM")]
BATCHES = [1, 4, 16, 64]
FC = ["FC6", "FC7", "FC8"]


def load(path):
    with open(path) as f:
        layers = json.load(f)["layers"]
    out = {}
    for ly in layers:
        if not ly.get("valid"):
            sys.exit("%s: layer %s has no valid mapping" % (path, ly["name"]))
        by = dict(ly["energy_pj_by_level"])
        by["noc"] = ly.get("on_chip_network_energy_pj", 0.0)
        # the RF-less design keeps a bypassed register: no energy of its own
        out[ly["name"]] = {"macs": ly["macs"], "energy": ly["energy_pj"], "by": by}
    return out


def per_mac(rows, names):
    """Energy per MAC of the layers names together, and by level."""
    macs = sum(rows[n]["macs"] for n in names)
    total = sum(rows[n]["energy"] for n in names) / macs
    by = {k: sum(rows[n]["by"].get(k, 0.0) for n in names) / macs for k, _ in LEVELS}
    return total, by


def main():
    out, dataflows = sys.argv[1], sys.argv[2:]
    main_runs = {d: load(os.path.join(out, d, "network.json")) for d in dataflows}
    fc_runs = {d: load(os.path.join(out, "fc_" + d, "network.json")) for d in dataflows}
    layers = list(main_runs[dataflows[0]].keys())
    conv = [n for n in layers if n.startswith("CONV")]
    groups = [(n, [n]) for n in layers] + [("CONV all", conv), ("FC all", FC)]

    lines = []
    head = "%-9s" % "layer" + "".join("%9s" % d.upper() for d in dataflows)
    head += "   RS vs best other"
    lines.append("Energy per MAC (normalized: a MAC = 1), AlexNet at batch 16")
    lines.append(head)
    with open(os.path.join(out, "energy.dat"), "w") as dat:
        dat.write("# energy per MAC by level, normalized (a MAC = 1); one block per layer\n")
        dat.write("# dataflow " + " ".join(lbl for _, lbl in LEVELS) + " total\n")
        for i, (name, names) in enumerate(groups):
            row = {d: per_mac(main_runs[d], names) for d in dataflows}
            other = min((row[d][0], d) for d in dataflows if d != "rs")
            ratio = other[0] / row["rs"][0]
            lines.append("%-9s" % name + "".join("%9.2f" % row[d][0] for d in dataflows)
                         + "   %.2fx (%s)" % (ratio, other[1].upper()))
            dat.write("%s# %s\n" % ("\n\n" if i else "", name))
            for d in dataflows:
                dat.write("%s %s %.4f\n" % (d.upper(), " ".join(
                    "%.4f" % row[d][1][k] for k, _ in LEVELS), row[d][0]))

    lines.append("")
    lines.append("FC layers (FC6+FC7+FC8) by batch size, energy per MAC")
    lines.append("%-9s" % "batch" + "".join("%9s" % d.upper() for d in dataflows)
                 + "   RS vs best other")
    with open(os.path.join(out, "fc_batch.dat"), "w") as dat:
        dat.write("# batch " + " ".join(d.upper() for d in dataflows)
                  + "  (FC energy per MAC, normalized)\n")
        for n in BATCHES:
            names = FC if n == 16 else ["%s_N%d" % (f, n) for f in FC]
            runs = main_runs if n == 16 else fc_runs
            row = {d: per_mac(runs[d], names)[0] for d in dataflows}
            other = min((row[d], d) for d in dataflows if d != "rs")
            lines.append("%-9d" % n + "".join("%9.2f" % row[d] for d in dataflows)
                         + "   %.2fx (%s)" % (other[0] / row["rs"], other[1].upper()))
            dat.write("%d %s\n" % (n, " ".join("%.4f" % row[d] for d in dataflows)))

    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
