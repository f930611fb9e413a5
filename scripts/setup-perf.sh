#!/usr/bin/env bash
# Opt-in tools for the static SASS comparison (docs/perf.md, bench/sass_compare.py);
# the normal build and tests need none of them.
#   bash scripts/setup-perf.sh
# Creates a venv in the cache directory (FLASHC_PERF_CACHE, default
# ~/.cache/flashc-perf; outside the repository) with pinned versions of
#   triton                 the peer compiler (ships its own ptxas 12.9),
#   nvidia-cuda-nvdisasm   nvdisasm (SASS with labels, for the control-flow graph),
#   nvidia-cuda-cuobjdump  cuobjdump (registers and stack per kernel),
# and downloads FlashAttention-2's source distribution (flash-attn, pinned by
# sha256) and FlashAttention-3's wheels (fa3-fwd, flash-attn3-jax: their
# cubins are the FlashAttention-3 peer; pinned by sha256) into the same cache.
# nvcc comes from the CUDA toolkit (/usr/local/cuda), as ptxas does for
# flashc. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${FLASHC_PERF_CACHE:-$HOME/.cache/flashc-perf}"
venv="$cache/venv"
packages=(triton==3.9.0 nvidia-cuda-nvdisasm==13.5.37 nvidia-cuda-cuobjdump==13.5.37)

mkdir -p "$cache"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-perf: creating $venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -m pip show -q triton nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump \
     >/dev/null 2>&1; then
  echo "setup-perf: installing ${packages[*]}"
  "$venv/bin/python" -m pip install --quiet "${packages[@]}"
fi

echo "setup-perf: fetching the flash-attn sdist into $cache/src"
(cd "$root/bench" && python3 -c "from peers import fa2; print(fa2.source_tree())")
echo "setup-perf: fetching FlashAttention-3's wheels into $cache/src"
(cd "$root/bench" && python3 -c "from peers import fa3; [print(fa3.wheel_module(n)) for n in fa3.WHEELS]")
if ! command -v c++filt >/dev/null; then
  echo "setup-perf: warning: no c++filt (binutils); FlashAttention-3's kernels cannot be" \
       "found by name" >&2
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup-perf: warning: no nvcc (CUDA toolkit); FlashAttention-2 cannot be built," \
       "run bench/sass_compare.py with --kernels flashc,Triton" >&2
fi
echo "setup-perf: ready (python3 bench/sass_compare.py)"
