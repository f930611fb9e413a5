#!/usr/bin/env bash
# The before/after tables of two builds in docs/perf.md (between its BEGIN/END
# perf-report markers): registers, shared memory, static instruction mix,
# emulated global bytes and bank conflicts per kernel configuration.
#
#   bash scripts/perf-report.sh before BIN_DIR KERNELS_DIR [COLLECT OPTIONS...]
#   bash scripts/perf-report.sh after [BIN_DIR] [KERNELS_DIR] [COLLECT OPTIONS...]
#                                  (default: build/bin and kernels/)
#   bash scripts/perf-report.sh render    (re-render from the saved JSON only)
#
# before/after run bench/perf_report.py collect (flashc, ptxas, the emulator;
# a few minutes on 2 cores) into bench/perf-data/perf-report-LABEL.json, then
# render the section from whichever of the two JSON files exist. COLLECT
# OPTIONS go to `perf_report.py collect` (e.g. --commit TEXT, --no-ptxas).
# scripts/ptxas-report.sh writes the current build's ptxas section.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/bench/perf-data
label=${1:-}
case $label in
  before|after) shift ;;
  render) shift; [ $# -eq 0 ] || { echo "usage: $0 render" >&2; exit 2; } ;;
  *) echo "usage: $0 before|after [BIN_DIR] [KERNELS_DIR] [OPTIONS...] | render" >&2; exit 2 ;;
esac

if [ "$label" != render ]; then
  bin=$root/build/bin kernels=$root/kernels
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then bin=$1; shift; fi
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then kernels=$1; shift; fi
  if [ "$label" = before ] && [ "$bin" = "$root/build/bin" ]; then
    echo "$0: before needs the BIN_DIR and KERNELS_DIR of the snapshot" >&2; exit 2
  fi
  mkdir -p "$data"
  # perf_report.py records this command line plus the options after it.
  python3 "$root/bench/perf_report.py" collect --bin "$bin" --kernels "$kernels" \
    --label "$label" --json "$data/perf-report-$label.json" \
    --invoked-as "bash scripts/perf-report.sh $label $bin $kernels" "$@"
fi

[ -f "$data/perf-report-before.json" ] || { echo "$0: no $data/perf-report-before.json yet" >&2; exit 1; }
after=()
[ -f "$data/perf-report-after.json" ] && after=(--after "$data/perf-report-after.json")
python3 "$root/bench/perf_report.py" render --before "$data/perf-report-before.json" \
  "${after[@]}" --update-perf "$root/docs/perf.md"
