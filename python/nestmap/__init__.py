"""nestmap from Python: the mapping-space explorer's jobs as functions.

Each function reads the same YAML files the command line reads (designs,
workloads and networks by path, or by their name under the shipped
``arch/`` and ``workloads/`` folders), runs the same C code in libnestmap
with the GIL released, and returns the JSON object the command prints with
``--json``, as plain Python objects (dicts, lists, numbers, strings).  A
result is the command line's to the last digit.

    >>> import nestmap
    >>> r = nestmap.map("arch/eyeriss/eyeriss.yaml", "workloads/layers/alexnet_conv3.yaml",
    ...                 max_evals=20000, no_refine=True)
    >>> r["best"]["energy_pj"], r["best"]["cycles"]

Options follow the command line: ``sets`` are its ``--set C.A=V`` (a dict
``{"GlobalBuffer.depth": "64Ki"}`` or a list of "C.A=V" strings; ``problem.N``
sets a workload dimension), ``jinja`` its ``--jinja NAME=VALUE``, and the
search options of ``map`` and ``network`` its ``--algorithm``, ``--metric``,
``--max-evals`` ... with dashes written as underscores.  The input's
warnings come back under the result's ``"warnings"`` key and are also
issued as Python warnings (category ``nestmap.Warning``).  Bad input raises
``nestmap.Error`` with the command line's message, ``FILE:LINE:COL: error:``.

``layers(result)`` turns a network's layers into rows, and ``read_sweep``
loads what ``nestmap sweep -o DIR`` wrote; both give a pandas DataFrame
where pandas is installed, else a list of dicts.
"""

import csv as _csv
import json as _json
import os as _os
import shutil as _shutil
import tempfile as _tempfile
import warnings as _warnings

from . import _nestmap
from ._nestmap import Error, __version__

__all__ = ["Error", "Warning", "model", "map", "network", "energy", "sweep", "layers",
           "read_sweep", "__version__"]


class Warning(UserWarning):  # noqa: A001 - nestmap.Warning, as nestmap.Error
    """A warning about the input or a result (the command line's 'warning:' lines)."""


# The search options of `map` and `network`, by their Python names.
_SEARCH = ("algorithm", "metric", "max_evals", "search_size", "victory", "timeout", "top",
           "time_limit", "lanes", "threads", "seed", "imperfect", "no_refine")


def _files(files):
    if not files:
        raise TypeError("give at least one input file")
    return tuple(_os.fspath(f) for f in files)


def _pairs(values, what):
    """A dict, or an iterable of 'NAME=VALUE' strings, as a tuple of strings."""
    if values is None:
        return ()
    if isinstance(values, str):
        raise TypeError(f"{what} must be a dict or a list of 'NAME=VALUE' strings, not a str")
    if isinstance(values, dict):
        return tuple(f"{k}={v}" for k, v in values.items())
    return tuple(values)


def _options(search):
    opts = []
    for name, value in search.items():
        if name not in _SEARCH:
            raise TypeError(f"unknown search option '{name}' (one of {', '.join(_SEARCH)})")
        cli = name.replace("_", "-")
        if name in ("imperfect", "no_refine"):
            opts.append((cli, "true" if value else "false"))
        elif name == "metric" and not isinstance(value, str):
            opts.append((cli, ",".join(value)))
        else:
            opts.append((cli, str(value)))
    return tuple(opts)


def _result(text):
    result = _json.loads(text)
    for w in result.get("warnings", ()):
        where = f"{w['file']}:{w['line']}:{w['col']}: " if w.get("file") else ""
        _warnings.warn(where + w["message"], Warning, stacklevel=3)
    return result


def model(*files, sets=None, jinja=None, builtin_energy=False, stride_rule=2025):
    """Evaluates the mapping in the files (`nestmap model --json`).

    The result has ``valid``; a valid mapping's counts, energy (pJ) and
    cycles per level and tensor, as in ``nestmap model --json``.  On a
    chain of operations with a fused mapping: per group and operation and
    in total (the schema's fused_model)."""
    if stride_rule not in (2024, 2025):
        raise ValueError("stride_rule is 2024 or 2025")
    return _result(_nestmap.model(_files(files), _pairs(sets, "sets"), _pairs(jinja, "jinja"),
                                  builtin_energy=bool(builtin_energy),
                                  stride_2024=stride_rule == 2024))


def map(*files, sets=None, jinja=None, builtin_energy=False, **search):  # noqa: A001
    """Searches the mappings of the problem onto the design (`nestmap map --json`).

    On a chain of operations: the best fused mapping and the unfused run
    beside it (``best``, ``unfused``, ``search``: the schema's fused_map)."""
    return _result(_nestmap.map(_files(files), _pairs(sets, "sets"), _pairs(jinja, "jinja"),
                                _options(search), builtin_energy=bool(builtin_energy)))


def network(*files, sets=None, jinja=None, builtin_energy=False, fuse=False, **search):
    """Maps every layer of a network onto the design (`nestmap network --json`);
    with fuse=True also the fused runs of consecutive layers (`--fuse`: the
    result's "fusion")."""
    run = _nestmap.network_fused if fuse else _nestmap.network
    return _result(run(_files(files), _pairs(sets, "sets"), _pairs(jinja, "jinja"),
                       _options(search), builtin_energy=bool(builtin_energy)))


def energy(*files, sets=None, jinja=None, builtin_energy=False):
    """The energy and area table in use and where each number comes from
    (`nestmap energy --json`)."""
    return _result(_nestmap.energy(_files(files), _pairs(sets, "sets"), _pairs(jinja, "jinja"),
                                   builtin_energy=bool(builtin_energy)))


def _cli_args(files, sets, jinja, opts, builtin_energy):
    """The command-line arguments these settings are (what `nestmap sweep`
    records in sweep.json's "options" and the resume fingerprint)."""
    args = []
    for name, value in opts:
        args.append("--" + name)
        if name not in ("imperfect", "no-refine"):
            args.append(value)
    for s in sets:
        args += ["--set", s]
    for j in jinja:
        args += ["--jinja", j]
    if builtin_energy:
        args.append("--builtin-energy")
    return args + list(files)


def sweep(*files, out=None, resume=False, sets=None, jinja=None, builtin_energy=False,
          threads=None, **search):
    """Runs the sweep in the files (`nestmap sweep -o OUT`), the library's
    driver with the GIL released, and returns ``read_sweep(out)``.

    ``out`` is the sweep directory (points.csv, pareto.csv, sweep.json,
    points/, plots/); without it a temporary one is used and removed.
    ``resume=True`` continues the sweep in ``out``.  A failed point is a
    result (blank figures, its reason), not an error; bad input raises
    nestmap.Error with the command line's message."""
    files = _files(files)
    sets = _pairs(sets, "sets")
    jinja = _pairs(jinja, "jinja")
    # a flag is given (value None, as on the command line) or left out
    flags = ("imperfect", "no-refine")
    opts = tuple((n, None if n in flags else v) for n, v in _options(search)
                 if not (n in flags and v == "false"))
    if resume and out is None:
        raise ValueError("resume=True needs out= (the sweep to continue)")
    args = tuple(_cli_args(files, sets, jinja, opts, builtin_energy))
    tmp = None
    if out is None:
        tmp = out = _tempfile.mkdtemp(prefix="nestmap-sweep.")
    out = _os.fspath(out)
    try:
        rc, messages, _summary = _nestmap.sweep(files, sets, jinja, opts, args, out,
                                                resume=bool(resume),
                                                threads=int(threads or 0),
                                                builtin_energy=bool(builtin_energy))
        lines = messages.splitlines()
        if rc != 0:
            errors = [ln for ln in lines if ": error:" in ln or ln.startswith("nestmap")]
            raise Error("\n".join(errors or lines) or f"the sweep failed (exit {rc})")
        for ln in lines:
            if ": warning:" in ln:
                _warnings.warn(ln, Warning, stacklevel=2)
        return read_sweep(out)
    finally:
        if tmp:
            _shutil.rmtree(tmp, ignore_errors=True)


def _frame(rows):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def layers(result):
    """A network result's layers as rows: one per layer, its energy by level
    as columns ``energy_pj.LEVEL``; a DataFrame where pandas is installed."""
    rows = []
    for layer in result["layers"]:
        row = {k: v for k, v in layer.items() if not isinstance(v, dict)}
        for level, pj in layer.get("energy_pj_by_level", {}).items():
            row[f"energy_pj.{level}"] = pj
        rows.append(row)
    return _frame(rows)


def _number(text):
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def read_sweep(directory):
    """What ``nestmap sweep -o DIRECTORY`` wrote: ``{"sweep": sweep.json's
    object, "points": points.csv's rows}``, the rows a DataFrame where pandas
    is installed (a failed point's figures blank: None, or NaN in pandas)."""
    with open(_os.path.join(directory, "sweep.json"), encoding="utf-8") as f:
        sweep = _json.load(f)
    with open(_os.path.join(directory, "points.csv"), newline="", encoding="utf-8") as f:
        rows = [{k: _number(v) for k, v in row.items()} for row in _csv.DictReader(f)]
    return {"sweep": sweep, "points": _frame(rows)}
