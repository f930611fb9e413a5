#!/usr/bin/env bash
# Compiles every dense forward variant (f16 and bf16) at its default block
# sizes for HEAD_DIM 16..256 step 16 x {defaults, causal + window left +
# soft-capping} x {sm_80, sm_90} and prints each configuration whose
# `ptxas -v` reports spill bytes (expected: none), with its
# registers. Exit 1 if any spills or fails to compile.
#
#   bash scripts/dense-spill-sweep.sh [BUILD_DIR] [KERNEL...]
#
# FLASHC_FLAGS adds flashc options to every compile (e.g.
# --split-masked-loops=false to compare with the one masked loop);
# VERBOSE=1 prints every configuration, not only the spilling ones;
# TABLES=1 also prints the register tables of docs/kernels.md ("Registers
# and spills"; with the default kernel list).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
  for k in flash_attn flash_attn_lse flash_attn_alibi flash_attn_bias flash_attn_key_mask; do
    kernels+=("$k" "${k}_bf16")
  done
fi
source "$root/scripts/spill-sweep-lib.sh"
options=("" "-D CAUSAL=true -D WINDOW_LEFT=64 -D SOFTCAP=30.0")
for k in "${kernels[@]}"; do
  for d in $(seq 16 16 256); do
    for arch in sm_80 sm_90; do
      for opt in "${options[@]}"; do echo "$k $arch -D HEAD_DIM=$d${opt:+ $opt}"; done
    done
  done
done | spill_sweep
[ -z "${TABLES:-}" ] || python3 - "$work/out" <<'PY'
import re, sys
regs = {}
for line in open(sys.argv[1]):
    f, r = line.split(), re.search(r'regs=(\d+)', line)
    if not r:
        continue  # failed to compile: '?' in the table
    d = int(re.search(r'HEAD_DIM=(\d+)', line).group(1))
    r = r.group(1)
    b = re.search(r'stores=(\d+)', line)
    regs[f[1], f[2], d, 'CAUSAL' in line] = r + (f' ({b.group(1)} B)' if b else '')
kernels = ['flash_attn', 'flash_attn_lse', 'flash_attn_alibi', 'flash_attn_bias', 'flash_attn_key_mask']
for every in (False, True):
    print('| HEAD_DIM | ' + ' | '.join(f'`{k}`' for k in kernels) + ' |')
    print('|---' * (len(kernels) + 1) + '|')
    for d in range(16, 257, 16):
        cell = lambda k: ', '.join('/'.join(regs.get((t, a, d, every), '?') for a in ('sm_80', 'sm_90'))
                                   for t in (k, k + '_bf16'))
        print(f'| {d} | ' + ' | '.join(cell(k) for k in kernels) + ' |')
    print()
PY
spill_report
