#!/bin/sh
# python.sh — the Python module (import nestmap) under pytest: its results
# equal the command line's --json to the last digit (tests/python/).  The
# module is imported from the build tree: a scratch package directory holds
# the source's nestmap/__init__.py and the built _nestmap.so.
name=python
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"

py=${NESTMAP_PYTHON:-}
so=${NESTMAP_PYMODULE:-}
if [ -z "$py" ] || [ ! -f "$so" ]; then
    echo "SKIP: the Python module is not built (./configure found no python3-dev)"
    exit 77
fi
if ! "$py" -c "import pytest" 2>/dev/null; then
    echo "SKIP: pytest is not installed (Debian: python3-pytest)"
    exit 77
fi
mkdir "$tmp/nestmap"
ln -s "$src/python/nestmap/__init__.py" "$tmp/nestmap/__init__.py"
ln -s "$so" "$tmp/nestmap/_nestmap.so"
# Under AddressSanitizer the interpreter must load the runtime first; the
# interpreter's own allocations at exit are not ours to report.
if [ -n "${NESTMAP_ASAN_RUNTIME:-}" ]; then
    LD_PRELOAD=$NESTMAP_ASAN_RUNTIME
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    export LD_PRELOAD ASAN_OPTIONS
fi
PYTHONPATH=$tmp PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -p no:cacheprovider \
    --rootdir "$tmp" "$src/tests/python/test_nestmap.py"
