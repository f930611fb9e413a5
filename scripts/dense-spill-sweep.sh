#!/usr/bin/env bash
# Compiles every dense forward variant (f16 and bf16) at its default block
# sizes for HEAD_DIM 16..256 step 16 x {defaults, causal + window left +
# soft-capping} x {sm_80, sm_90} and prints each configuration whose
# `ptxas -v` reports spill bytes (issue 14: 0 everywhere), with its
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
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
options=("" "-D CAUSAL=true -D WINDOW_LEFT=64 -D SOFTCAP=30.0")
one() { # kernel arch defines...
  local k=$1 arch=$2; shift 2
  local o; o=$work/$k.$arch.$RANDOM$RANDOM.ptx
  # shellcheck disable=SC2086
  if ! "$build/bin/flashc" "$root/kernels/$k.tile" "$@" ${FLASHC_FLAGS:-} --arch="$arch" \
       -o "$o" 2>/dev/null; then
    echo "FAIL $k $arch $* (compile)"; return
  fi
  # Not -o /dev/null: ptxas interrupted deletes its output file.
  local v; v=$("$ptxas" -v -arch="$arch" "$o" -o "$o.cubin" 2>&1)
  local st ld regs
  st=$(grep -o '[0-9]* bytes spill stores' <<<"$v" | awk '{s+=$1} END {print s+0}')
  ld=$(grep -o '[0-9]* bytes spill loads' <<<"$v" | awk '{s+=$1} END {print s+0}')
  regs=$(grep -o 'Used [0-9]* registers' <<<"$v" | awk '{print $2}' | sort -n | tail -1)
  if [ "$st$ld" = 00 ]; then echo "ok $k $arch $* regs=$regs"
  else echo "SPILL $k $arch $* regs=$regs stores=$st loads=$ld"; fi
  rm -f "$o" "$o.cubin"
}
export -f one; export build root ptxas work
for k in "${kernels[@]}"; do
  for d in $(seq 16 16 256); do
    for arch in sm_80 sm_90; do
      for opt in "${options[@]}"; do echo "$k $arch -D HEAD_DIM=$d${opt:+ $opt}"; done
    done
  done
done | xargs -P "${JOBS:-2}" -L 1 bash -c 'one "$@"' _ | sort -k2,2 -k3,3 >"$work/out"
if [ -n "${VERBOSE:-}" ]; then cat "$work/out"; else grep -v '^ok' "$work/out"; fi
echo "$(grep -c '^ok' "$work/out") of $(wc -l <"$work/out") without spills"
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
! grep -qv '^ok' "$work/out"
