#!/usr/bin/env bash
# Runs every test: the lit suites (dialect, passes, front end, kernels'
# numerics) and the gtest unit suites, through CTest. Builds first, so a stale
# build is never what gets tested.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ ! -f build/build.ninja ]; then
  echo "test: no build/ yet; run 'bash scripts/setup.sh' first" >&2
  exit 1
fi
# As scripts/setup.sh: a clone in another folder shares this machine's ccache.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cmake --build build
# Two at a time: while one lit suite finishes its last long tests, the next
# keeps the other core busy. FLASHC_FULL=1 (scripts/test-full.sh) adds the
# complete numeric sweeps to the CI sample that runs by default.
ctest --test-dir build --output-on-failure --parallel 2 "$@"
