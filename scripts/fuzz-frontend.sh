#!/usr/bin/env bash
# Fuzzes the front end (lib/Frontend/fuzz: loader, lexer, parser, IRGen,
# verifier) for SECONDS starting from test/Frontend/fuzz-corpus, then merges
# the inputs that add coverage into the corpus (commit them; the corpus is
# replayed by test/Frontend/fuzz-corpus-replay.test). Crashes, leaks and
# slow inputs are left in the work directory printed at the end; each one
# fixed becomes a corpus entry.
#
#   bash scripts/fuzz-frontend.sh [SECONDS] [BUILD_DIR]   (600, build-fuzz)
#
# Needs clang-22 (apt-get install clang-22: it ships libFuzzer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
build=${2:-$root/build-fuzz}
corpus=$root/test/Frontend/fuzz-corpus
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}

if [ ! -f "$build/build.ninja" ]; then
  launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_C_COMPILER=clang-22 \
    -DFLASH_ENABLE_FUZZER=ON -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "${launcher[@]}"
fi
ninja -C "$build" -j2 flash-fuzz-frontend

work=$(mktemp -d)
mkdir "$work/new"
before=$(ls "$corpus" | wc -l)
# Run from the work directory: libFuzzer writes crash-*/timeout-* there.
(cd "$work" && "$build/bin/flash-fuzz-frontend" new "$corpus" \
   -dict="$root/lib/Frontend/fuzz/tile.dict" -max_len=4096 -timeout=10 \
   -max_total_time="$seconds" -print_final_stats=1 2>&1 | tee fuzz.log) || true
"$build/bin/flash-fuzz-frontend" -merge=1 "$corpus" "$work/new" 2>&1 | tail -2
echo "corpus: $before -> $(ls "$corpus" | wc -l) inputs; log and findings in $work"
ls "$work" | grep -E '^(crash|leak|timeout|slow-unit|oom)-' || echo "no findings"
