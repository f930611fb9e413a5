#!/usr/bin/env bash
# Installs the build into a fresh prefix and checks that what landed there
# works on its own: flashc compiles fa2 to PTX, flash-opt runs a named
# pipeline, the public headers and generated docs are present.
#   test/install-check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/flashc" "$src/kernels/fa2.tile" --arch=sm_80 -o "$prefix/fa2.ptx"
grep -q "mma.sync.aligned.m16n8k16" "$prefix/fa2.ptx"
grep -q '"entry"' "$prefix/fa2.ptx.json"
"$prefix/bin/flashc" "$src/kernels/fa2.tile" --emit=tile -o "$prefix/fa2.mlir"
"$prefix/bin/flash-opt" --flashc-layout "$prefix/fa2.mlir" -o "$prefix/fa2-layout.mlir"
grep -q "tile.local_load" "$prefix/fa2-layout.mlir"
for f in include/flashc/Dialect/Tile/TileDialect.h \
         include/flashc/Dialect/Tile/TileOps.h.inc \
         include/flashc/Pipelines/Pipelines.h \
         share/doc/flashc/Dialects/Tile.md; do
  [ -f "$prefix/$f" ] || { echo "install-check: missing $f" >&2; exit 1; }
done
for tool in flash-emulate flash-launch; do
  [ -x "$prefix/bin/$tool" ] || { echo "install-check: missing bin/$tool" >&2; exit 1; }
done
echo "install-check: OK ($prefix)"
