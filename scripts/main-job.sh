#!/usr/bin/env bash
# The main job: compile kernels/fa2.tile to PTX and check it — ptxas accepts
# it for sm_80 with no spills and it uses mma.sync — then check its numbers
# on the CPU: the tile program on the interpreter (semantics) against a
# float64 reference, causal and not.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=build/main-job
mkdir -p "$out"
build/bin/flashc kernels/fa2.tile --emit=ptx --arch=sm_80 -o "$out/fa2.ptx"
grep -q "mma.sync.aligned.m16n8k16" "$out/fa2.ptx"
echo "main job: kernels/fa2.tile -> $out/fa2.ptx ($(grep -c mma.sync "$out/fa2.ptx") mma.sync) + $out/fa2.ptx.json"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -x "$ptxas" ]; then
  report=$("$ptxas" -arch=sm_80 -v "$out/fa2.ptx" -o "$out/fa2.cubin" 2>&1)
  grep -E "registers|spill" <<<"$report"
  grep -q "0 bytes spill stores, 0 bytes spill loads" <<<"$report"
else
  echo "main job: ptxas not found, PTX not assembled"
fi
python3 test/Kernels/check_kernel.py --flashc build/bin/flashc --kernel fa2 \
  --workdir "$out" --B 2 --H 2 --Nq 200 --Nk 136 --D 64
python3 test/Kernels/check_kernel.py --flashc build/bin/flashc --kernel fa2 \
  --workdir "$out" --B 1 --H 2 --Nq 160 --Nk 96 --D 64 -D CAUSAL=true
