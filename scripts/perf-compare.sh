#!/usr/bin/env bash
# Rebuilds the static SASS comparison of flashc's fa2 with FlashAttention-2
# and Triton and rewrites its section of docs/perf.md (a benchmark, no GPU):
#   bash scripts/perf-compare.sh [before|after] [more bench/sass_compare.py options]
# About 15 minutes on 2 cores the first time (8 nvcc builds of FlashAttention-2,
# one at a time, and Triton's autotuning space); builds are cached outside the
# repository, so later runs take a minute or two.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
label="${1:-before}"
[ $# -gt 0 ] && shift
bash scripts/setup-perf.sh
cmake --build build --target flashc
python3 bench/sass_compare.py --label "$label" --update-perf docs/perf.md "$@"
