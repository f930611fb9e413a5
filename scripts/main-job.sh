#!/usr/bin/env bash
# The main job: compile kernels/fa2.tile to PTX and check it — ptxas accepts
# it for sm_80 with no spills, it uses mma.sync, and K and V reach the tensor
# cores through cp.async and ldmatrix (.trans for V) — then check its numbers
# on the CPU against a float64 reference: the tile program on the
# interpreter (semantics), causal and not, and the compiled SIMT program on
# the emulator (the lowering, with its race and bounds checks).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=build/main-job
mkdir -p "$out"
build/bin/flashc kernels/fa2.tile --emit=ptx --arch=sm_80 -o "$out/fa2.ptx"
count() { grep -c -- "$1" "$out/fa2.ptx" || true; }
for op in mma.sync.aligned.m16n8k16 cp.async.cg.shared.global ldmatrix.sync.aligned.m8n8.x4.trans; do
  [ "$(count "$op")" -gt 0 ] || { echo "main job: no $op in $out/fa2.ptx" >&2; exit 1; }
done
echo "main job: kernels/fa2.tile -> $out/fa2.ptx ($(count mma.sync) mma.sync," \
  "$(count 'cp.async.cg') cp.async, $(count ldmatrix) ldmatrix) + $out/fa2.ptx.json"
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
python3 test/Kernels/check_kernel.py --flashc build/bin/flashc --kernel fa2 \
  --workdir "$out" --target emulate --B 1 --H 2 --Nq 200 --Nk 136 --D 64 -D CAUSAL=true
