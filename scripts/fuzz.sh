#!/usr/bin/env bash
# Fuzzing as a habit: the libFuzzer front-end fuzzer (scripts/fuzz-frontend.sh,
# needs the clang fuzz build: FLASH_FUZZ=1 bash scripts/setup.sh installs
# clang-22 and libclang-rt-22-dev) and the mutation fuzzer
# (scripts/mutate-kernels.py: mutated kernels of kernels/ through --emit=ptx
# and through interp vs emulate on small shapes; needs only flashc), each for
# SECONDS, one after the other, single process, and the Python-package
# fuzzer (scripts/fuzz-python.py: hostile arrays and scalars, damaged
# caches, odd paths; needs the extension in build/python; the mutation
# fuzzer also checks its mutants through the package then). Findings are left
# in FINDINGS (default: fuzz-findings/); each one fixed becomes a corpus
# entry or a regression test (docs/emulator.md, "Fuzzing").
#
#   bash scripts/fuzz.sh [SECONDS] [frontend|mutation|python|all]   (600, all)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
which=${2:-all}
findings=${FINDINGS:-$root/fuzz-findings}
status=0
python_flags=()
[ -d "$root/build/python/flashc" ] && python_flags=(--python)

if [ "$which" = all ] || [ "$which" = frontend ]; then
  if command -v clang++-22 > /dev/null; then
    bash "$root/scripts/fuzz-frontend.sh" "$seconds" || status=1
  else
    echo "fuzz.sh: clang++-22 missing (FLASH_FUZZ=1 bash scripts/setup.sh): front-end fuzzer skipped"
  fi
fi
if [ "$which" = all ] || [ "$which" = mutation ]; then
  python3 "$root/scripts/mutate-kernels.py" --seconds "$seconds" \
    --findings "$findings" "${python_flags[@]}" || status=1
fi
if [ "$which" = all ] || [ "$which" = python ]; then
  if [ -d "$root/build/python/flashc" ]; then
    PYTHONPATH="$root/build/python" python3 "$root/scripts/fuzz-python.py" \
      --seconds "$seconds" --findings "$findings" || status=1
  else
    echo "fuzz.sh: build/python missing (-DFLASHC_PYTHON=ON): Python fuzzer skipped"
  fi
fi
exit $status
