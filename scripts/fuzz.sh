#!/usr/bin/env bash
# Fuzzing as a habit: the libFuzzer front-end fuzzer (scripts/fuzz-frontend.sh,
# needs the clang fuzz build: FLASH_FUZZ=1 bash scripts/setup.sh installs
# clang-22 and libclang-rt-22-dev) and the mutation fuzzer
# (scripts/mutate-kernels.py: mutated kernels of kernels/ through --emit=ptx
# and through interp vs emulate on small shapes; needs only flashc), each for
# SECONDS, one after the other, single process. Findings are left in
# FINDINGS (default: fuzz-findings/); each one fixed becomes a corpus entry
# or a regression test (docs/emulator.md, "Fuzzing").
#
#   bash scripts/fuzz.sh [SECONDS] [frontend|mutation|both]   (600, both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
which=${2:-both}
findings=${FINDINGS:-$root/fuzz-findings}
status=0

if [ "$which" != mutation ]; then
  if command -v clang++-22 > /dev/null; then
    bash "$root/scripts/fuzz-frontend.sh" "$seconds" || status=1
  else
    echo "fuzz.sh: clang++-22 missing (FLASH_FUZZ=1 bash scripts/setup.sh): front-end fuzzer skipped"
  fi
fi
if [ "$which" != frontend ]; then
  python3 "$root/scripts/mutate-kernels.py" --seconds "$seconds" \
    --findings "$findings" || status=1
fi
exit $status
