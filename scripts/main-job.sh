#!/usr/bin/env bash
# The main job: compile kernels/fa2.tile and check it. Today that means: the
# tile IR it compiles to, and its numbers on the tile-level interpreter against
# a float64 reference (PTX emission arrives with the lowering to warps).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=build/main-job
mkdir -p "$out"
build/bin/flashc kernels/fa2.tile --emit=tile -o "$out/fa2.tile.mlir"
grep -q "tile.mma" "$out/fa2.tile.mlir"
grep -q "tile.online_softmax" "$out/fa2.tile.mlir"
echo "main job: kernels/fa2.tile -> $out/fa2.tile.mlir ($(wc -l < "$out/fa2.tile.mlir") lines of tile IR)"
python3 test/Kernels/check_kernel.py --flashc build/bin/flashc --kernel fa2 \
  --workdir "$out" --B 2 --H 2 --Nq 200 --Nk 136 --D 64
python3 test/Kernels/check_kernel.py --flashc build/bin/flashc --kernel fa2 \
  --workdir "$out" --B 1 --H 2 --Nq 160 --Nk 96 --D 64 -D CAUSAL=true
