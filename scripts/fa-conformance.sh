#!/usr/bin/env bash
# FlashAttention-2's own test suite (tests/test_flash_attn.py of the pinned
# flash-attn sdist) run against flashc on the CPU; outside CI (it needs torch).
#   bash scripts/fa-conformance.sh [BUILD_DIR] [-- PYTEST_ARGS...]
# Environment: FA_CONFORMANCE_SAMPLE (fraction of the parametrizations,
# default 0.02), FA_CONFORMANCE_TARGET (interp or emulate), FA_CONFORMANCE_REPORT
# (Markdown table; default $cache/report-TARGET.md), FLASHC_CONFORMANCE_CACHE
# (default ~/.cache/flashc-conformance: the venv and the patched test file).
# The venv gets torch, einops, numpy, ml_dtypes and pytest from PyPI; the test
# file is upstream's with its device "cuda" spelled "cpu" and nothing else
# changed. test/Conformance/fa_conformance.py samples the cases, reports
# NotImplementedError as "unsupported" and writes the table docs/python.md shows.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build="$(cd "$1" && pwd)"; shift; fi
[ "${1:-}" = "--" ] && shift
cache="${FLASHC_CONFORMANCE_CACHE:-$HOME/.cache/flashc-conformance}"
venv="$cache/venv"
target="${FA_CONFORMANCE_TARGET:-interp}"

if [ ! -d "$build/python/flashc" ]; then
  echo "fa-conformance: no Python package in $build/python (configure with -DFLASHC_PYTHON=ON)" >&2
  exit 1
fi
mkdir -p "$cache/work"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, einops, numpy, ml_dtypes, pytest" 2>/dev/null; then
  echo "fa-conformance: installing torch, einops, numpy, ml_dtypes, pytest into $venv"
  "$venv/bin/python" -m pip install --quiet torch einops numpy ml_dtypes pytest
fi

src="$(cd "$root/bench" && python3 -c "from peers import fa2; print(fa2.source_tree())")"
sed 's/"cuda"/"cpu"/g' "$src/tests/test_flash_attn.py" > "$cache/work/test_flash_attn.py"

export FA_CONFORMANCE_TARGET="$target"
export FA_CONFORMANCE_REPORT="${FA_CONFORMANCE_REPORT:-$cache/report-$target.md}"
export PYTHONPATH="$root/test/Conformance:$build/python${PYTHONPATH:+:$PYTHONPATH}"
cd "$cache/work"
set +e
"$venv/bin/python" -m pytest -p fa_conformance -p no:cacheprovider -q -rN \
  test_flash_attn.py "$@"
status=$?
set -e
echo "fa-conformance: table in $FA_CONFORMANCE_REPORT"
# pytest's 1 means some case failed; the table says which.
exit $status
