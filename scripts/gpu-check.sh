#!/usr/bin/env bash
# flashc's kernels checked and timed on a Hopper GPU (H100/H200) from PTX
# compiled here (bench/gpu_check.py; docs/bench.md, "GPU check"):
#   bash scripts/gpu-check.sh --prepare [DIR]   # here: every kernel of kernels/ for
#                                               # sm_90 and sm_90a into DIR (default bench/gpu-check)
#   bash scripts/gpu-check.sh --dry-run [DIR]   # here: every launch, no GPU
#   bash scripts/gpu-check.sh [DIR]             # GPU machine: checks + timings into $OUT
# With the device tool: run `bash scripts/gpu-check.sh` with carry ["bench/gpu-check"]
# and timeout_s 480; then, here,
#   python3 bench/gpu_check.py report --from FILES_AT/gpu-check.json --update-perf docs/perf.md
# The GPU step stops its checks at 5 minutes and its timings at 7 (whatever is
# done is written), so that a lease of 15 minutes holds a start and a rerun.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=run
case "${1:-}" in
  --prepare) mode=prepare; shift ;;
  --dry-run) mode=dry-run; shift ;;
  -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
esac
dir="${1:-$root/bench/gpu-check}"
case "$mode" in
  prepare)
    [ -x "$root/build/bin/flashc" ] || cmake --build "$root/build" --target flashc
    rm -rf "$dir"
    exec python3 "$root/bench/gpu_check.py" prepare --out-dir "$dir" ;;
  dry-run)
    exec python3 "$root/bench/gpu_check.py" dry-run --ptx-dir "$dir" ;;
  run)
    out="${OUT:-$root/bench/gpu-check-results}"
    mkdir -p "$out"
    export PYTHONUNBUFFERED=1
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
    timeout 460 python3 "$root/bench/gpu_check.py" run --ptx-dir "$dir" --out-dir "$out" \
      2>&1 | tee "$out/gpu-check.log"
    exit "${PIPESTATUS[0]}" ;;
esac
