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
cmake --build build
ctest --test-dir build --output-on-failure "$@"
