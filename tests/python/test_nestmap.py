"""The Python module against the command line: every function's result
equals the JSON the matching command prints with --json, to the last digit
(both are parsed with the json module, so every number compares exactly);
errors and warnings are the command line's; the results do not depend on
threads; the rows helpers give DataFrames where pandas is installed and
lists of dicts where it is not."""

import json
import os
import subprocess
import sys
import threading

import pytest

import nestmap

SRC = os.environ.get("NESTMAP_SRCDIR", ".")
BIN = os.environ.get("NESTMAP_BIN", "./nestmap")
DATA = os.path.join(SRC, "tests", "data")
CONV1D = os.path.join(SRC, "examples", "conv1d_os.yaml")
NET_DESIGN = os.path.join(DATA, "network", "design.yaml")
NET = os.path.join(DATA, "network", "small_net.yaml")
# A bounded search: these tests are about the binding, not the search.
SEARCH = {"max_evals": 4000, "no_refine": True, "seed": 3}
SEARCH_ARGS = ["--max-evals", "4000", "--no-refine", "--seed", "3"]


# What a search reports of its own speed: not a result, never equal twice.
TIMING = ("wall_seconds", "evaluations_per_second")


def results(r):
    """r without the search's timing."""
    r = dict(r)
    if "search" in r:
        r["search"] = {k: v for k, v in r["search"].items() if k not in TIMING}
    return r


def cli(*args, rc=0):
    """Runs the command line and returns its --json output, parsed."""
    p = subprocess.run([BIN, *args], capture_output=True, text=True, check=False)
    assert p.returncode == rc, p.stderr
    return json.loads(p.stdout)


def quiet(fn, *args, **kw):
    """Calls fn with nestmap's Python warnings silenced (they are compared
    through the result's "warnings" key)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nestmap.Warning)
        return fn(*args, **kw)


def test_model_equals_cli():
    py = quiet(nestmap.model, CONV1D)
    assert py["valid"] is True
    assert py == cli("model", "--json", CONV1D)


def test_model_with_sets_equals_cli():
    sets = {"Buffer.depth": 128}
    py = quiet(nestmap.model, CONV1D, sets=sets)
    assert py == cli("model", "--json", "--set", "Buffer.depth=128", CONV1D)
    assert py != quiet(nestmap.model, CONV1D)


def test_sparse_model_equals_cli():
    """Densities, gating and skipping, a compressed format: the split counts
    and the metadata per rank come back as the command prints them, and a
    density set from Python changes the computes."""
    sparse = os.path.join(SRC, "examples", "sparse", "gemm_compressed.yaml")
    py = quiet(nestmap.model, sparse)
    assert py == cli("model", "--json", sparse)
    a = py["levels"][1]["dataspaces"]["A"]
    assert a["format"] == "uop cp" and a["actual_reads"] < a["reads"]
    gating = os.path.join(SRC, "examples", "sparse", "gemm_gating.yaml")
    full = quiet(nestmap.model, gating)["summary"]["actual_computes"]
    fewer = quiet(nestmap.model, gating, sets={"problem.densities.A": 0.25})
    assert fewer["summary"]["actual_computes"] < full


def test_fused_model_and_map_equal_cli():
    """A chain of operations: model() evaluates its fused mapping, map()
    searches one (each operation alone and fused), as the command line does;
    the sparse options and the blocks come through sets."""
    fx = os.path.join(SRC, "examples", "fused")
    files = [os.path.join(fx, f) for f in ("accelerator.yaml", "attention.yaml",
                                           "attention_fused.yaml")]
    py = quiet(nestmap.model, *files)
    assert py == cli("model", "--json", *files)
    assert py["total"]["backing_accesses"] == 4 * 393216
    block = os.path.join(SRC, "tests", "data", "good", "fused_ffn.yaml")
    search = {"seed": 3}
    py = quiet(nestmap.map, block, **search)
    cmd = cli("map", "--json", "--seed", "3", block)
    for r in (py, cmd):
        r["search"].pop("seconds")
    assert py == cmd
    assert py["best"]["total"]["backing_accesses"] < py["unfused"]["total"]["backing_accesses"]


def test_recomputed_halo_equals_cli():
    """A fused pair whose consumer reads through overlapping windows:
    model() on its recomputing mapping and map() (which fuses it so on a
    32-word buffer) give what the command line does."""
    halo = os.path.join(SRC, "tests", "data", "good", "fused_halo.yaml")
    py = quiet(nestmap.model, halo)
    assert py == cli("model", "--json", halo)
    assert py["groups"][0]["recompute"] == {"p": 2}
    assert py["ops"][0]["recompute"] == 1.2
    assert py["total"]["backing_accesses"] == 72
    sets = {"GLB.depth": 32}
    py = quiet(nestmap.map, halo, sets=sets, seed=3)
    cmd = cli("map", "--json", "--seed", "3", "--set", "GLB.depth=32", halo)
    for r in (py, cmd):
        r["search"].pop("seconds")
    assert py == cmd
    assert py["best"]["groups"][0]["recompute"] == {"p": 2}


def test_map_equals_cli():
    py = quiet(nestmap.map, CONV1D, **SEARCH)
    assert results(py) == results(cli("map", "--json", *SEARCH_ARGS, CONV1D))
    assert py["valid"] is True
    assert set(TIMING) <= set(py["search"])


def test_map_options_as_the_cli_takes_them():
    py = quiet(nestmap.map, CONV1D, algorithm="exhaustive", metric=["energy", "delay"], top=3)
    assert results(py) == results(cli("map", "--json", "--algorithm", "exhaustive", "--metric",
                                      "energy,delay", "--top", "3", CONV1D))
    assert py["search"]["algorithm"] == "exhaustive"
    assert py["search"]["metrics"] == ["energy", "delay"]


def test_map_does_not_depend_on_threads():
    one = quiet(nestmap.map, CONV1D, threads=1, **SEARCH)
    two = quiet(nestmap.map, CONV1D, threads=2, **SEARCH)
    assert (one["mapping"], one["summary"]) == (two["mapping"], two["summary"])
    assert (one["search"]["threads"], two["search"]["threads"]) == (1, 2)


@pytest.mark.filterwarnings("ignore::nestmap.Warning")  # catch_warnings is per process
def test_searches_run_side_by_side_in_threads():
    """The GIL is released during a search: two searches in two Python
    threads give what each gives alone."""
    alone = [quiet(nestmap.map, CONV1D, seed=s, max_evals=4000, no_refine=True)
             for s in (1, 2)]
    out = [None, None]

    def run(i):
        out[i] = quiet(nestmap.map, CONV1D, seed=i + 1, max_evals=4000, no_refine=True)

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results(r) for r in out] == [results(r) for r in alone]


def test_network_equals_cli():
    py = quiet(nestmap.network, NET_DESIGN, NET, threads=2, **SEARCH)
    assert results(py) == results(cli("network", "--json", "--threads", "2", *SEARCH_ARGS, NET_DESIGN, NET))
    assert len(py["layers"]) == 4


def test_network_fuse_equals_cli():
    fuse_net = os.path.join(DATA, "network", "fuse_net.yaml")
    py = quiet(nestmap.network, NET_DESIGN, fuse_net, fuse=True, threads=2, **SEARCH)
    c = cli("network", "--json", "--fuse", "--threads", "2", *SEARCH_ARGS, NET_DESIGN, fuse_net)

    def untimed(r):  # the fused searches' wall times are not results
        r = results(r)
        f = dict(r["fusion"], seconds=0)
        f["runs"] = [dict(x, seconds=0) for x in f["runs"]]
        return dict(r, fusion=f)

    assert untimed(py) == untimed(c)
    assert [x["layers"][0] for x in py["fusion"]["runs"]] == ["conv", "dw", "conv_again",
                                                              "dw_again"]
    assert py["fusion"]["equal"] == py["fusion"]["checked"] == 20
    assert "fusion" not in quiet(nestmap.network, NET_DESIGN, fuse_net, **SEARCH)


def test_energy_equals_cli():
    assert quiet(nestmap.energy, NET_DESIGN) == cli("energy", "--json", NET_DESIGN)


def test_layers_as_rows(monkeypatch):
    result = quiet(nestmap.network, NET_DESIGN, NET, **SEARCH)
    monkeypatch.setitem(sys.modules, "pandas", None)  # as where pandas is absent
    rows = nestmap.layers(result)
    assert [r["name"] for r in rows] == ["conv", "dw", "pw", "conv_again"]
    levels = result["layers"][0]["energy_pj_by_level"]
    assert rows[0]["energy_pj"] == pytest.approx(sum(levels.values()), rel=1e-12)
    for level, pj in levels.items():
        assert rows[0][f"energy_pj.{level}"] == pj


def test_layers_as_dataframe():
    pandas = pytest.importorskip("pandas", reason="pandas (python3-pandas) is not installed")
    result = quiet(nestmap.network, NET_DESIGN, NET, **SEARCH)
    df = nestmap.layers(result)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["name"]) == ["conv", "dw", "pw", "conv_again"]
    assert df["cycles"].tolist() == [layer["cycles"] for layer in result["layers"]]


def test_read_sweep(tmp_path):
    out = tmp_path / "sw"
    p = subprocess.run([BIN, "sweep", "-q", "--no-refine", "--max-evals", "2000", "-o", str(out),
                        os.path.join(DATA, "sweep", "one_fails.yaml")],
                       capture_output=True, text=True, check=False, cwd=os.path.join(DATA, "sweep"))
    assert p.returncode == 0, p.stderr
    got = nestmap.read_sweep(out)
    with open(out / "sweep.json", encoding="utf-8") as f:
        assert got["sweep"] == json.load(f)
    points = got["points"]
    if not isinstance(points, list):
        points = points.to_dict("records")
    with open(out / "points.csv", encoding="utf-8") as f:
        assert len(points) == sum(1 for _ in f) - 1
    failed = [r for r in points if r["status"] != "ok"]
    assert failed, "one_fails.yaml has a point that fails"
    for r in failed:  # blank figures: None, or NaN in pandas
        assert r["energy_uj"] is None or r["energy_uj"] != r["energy_uj"]


def test_errors_are_the_cli_messages():
    with pytest.raises(nestmap.Error, match=r"nosuch\.yaml: error: no such file"):
        nestmap.model("nosuch.yaml")
    with pytest.raises(nestmap.Error, match="did you mean"):
        nestmap.model(CONV1D, sets=["Buffer.dpeth=4"])
    with pytest.raises(nestmap.Error, match="unknown algorithm 'sideways'"):
        nestmap.map(CONV1D, algorithm="sideways")
    with pytest.raises(nestmap.Error, match="--max-evals needs a non-negative integer"):
        nestmap.map(CONV1D, max_evals=-1)
    with pytest.raises(TypeError, match="unknown search option 'max_eval'"):
        nestmap.map(CONV1D, max_eval=5)
    with pytest.raises(nestmap.Error, match="no 'network' in the input files"):
        nestmap.network(CONV1D)
    bad = os.path.join(DATA, "bad")
    first = sorted(f for f in os.listdir(bad) if f.endswith(".yaml"))[0]
    p = subprocess.run([BIN, "model", os.path.join(bad, first)], capture_output=True, text=True,
                       check=False)
    with pytest.raises(nestmap.Error) as e:
        nestmap.model(os.path.join(bad, first))
    assert str(e.value) == p.stderr.splitlines()[-1] or str(e.value) in p.stderr


def test_warnings_are_issued():
    with pytest.warns(nestmap.Warning):
        r = nestmap.network(NET_DESIGN, NET, CONV1D, **SEARCH)  # CONV1D's problem: unused
    assert any("is not used" in w["message"] for w in r["warnings"])


def test_sweep_equals_cli(tmp_path):
    """The sweep from Python writes the command line's files: points.csv,
    pareto.csv and the per-layer files byte for byte, sweep.json but for the
    run's wall time; a failed point is a row with its reason."""
    sw = os.path.join(DATA, "sweep", "one_fails.yaml")
    py_dir, cli_dir = tmp_path / "py", tmp_path / "cli"
    got = quiet(nestmap.sweep, sw, out=py_dir, max_evals=2000, no_refine=True)
    p = subprocess.run([BIN, "sweep", "-q", "--max-evals", "2000", "--no-refine", "-o",
                        str(cli_dir), sw], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    for name in ("points.csv", "pareto.csv", "sweep.key", "points/0/layer.layers.csv"):
        assert (py_dir / name).read_bytes() == (cli_dir / name).read_bytes(), name
    py_json, cli_json = (json.loads((d / "sweep.json").read_text()) for d in (py_dir, cli_dir))
    py_json.pop("run"), cli_json.pop("run")
    assert py_json == cli_json
    assert got["sweep"]["options"] == ["--max-evals", "2000", "--no-refine", sw]
    assert [p["status"] for p in got["sweep"]["points"]] == ["unmapped", "ok"]


def test_sweep_errors_and_resume(tmp_path):
    with pytest.raises(nestmap.Error, match="no 'sweep' in the input files"):
        nestmap.sweep(CONV1D)
    with pytest.raises(nestmap.Error, match="bad_value.yaml:[0-9]+:[0-9]+: error:"):
        nestmap.sweep(os.path.join(DATA, "sweep", "bad_value.yaml"))
    sw = os.path.join(DATA, "sweep", "one_fails.yaml")
    out = tmp_path / "sw"
    first = quiet(nestmap.sweep, sw, out=out, max_evals=2000, no_refine=True)
    with pytest.raises(nestmap.Error, match="already holds a sweep"):
        nestmap.sweep(sw, out=out, max_evals=2000, no_refine=True)
    again = quiet(nestmap.sweep, sw, out=out, resume=True, max_evals=2000, no_refine=True)
    assert again["sweep"] == first["sweep"]  # finished: nothing run, nothing rewritten
    with pytest.raises(nestmap.Error, match="other inputs or options"):
        nestmap.sweep(sw, out=out, resume=True, max_evals=3000, no_refine=True)


def test_ctrl_c_ends_a_search():
    """Ctrl-C (SIGINT, a notebook's interrupt) during a search in the main
    thread ends it and raises KeyboardInterrupt; Python's own handler is
    back afterwards.  The search is exhaustive over a space far too large to
    finish, so the signal always arrives while it runs."""
    import signal
    before = signal.getsignal(signal.SIGINT)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            nestmap.map(os.path.join(SRC, "arch", "eyeriss", "eyeriss.yaml"),
                        os.path.join(SRC, "workloads", "layers", "resnet50_conv1.yaml"),
                        algorithm="exhaustive", victory=0, timeout=0, threads=2)
    finally:
        timer.cancel()
    assert signal.getsignal(signal.SIGINT) is before
