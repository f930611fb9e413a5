#!/usr/bin/env bash
# Compiles every inference kernel (f16 and bf16) at its default block sizes
# for HEAD_DIM 16..256 step 16 x the modes of docs/kernels.md's inference
# register table (flash_attn_kvcache and _split: PACK_GQA off and on x
# PAGE_SIZE 16 and 256 x CAUSAL off and on; flash_attn_varlen: CAUSAL off and
# on; kvcache_append: PAGE_SIZE 16 and 256) x {sm_80, sm_90} and prints each
# configuration whose `ptxas -v` reports spill bytes (issue 15 item 5: 0
# everywhere), then how many did not spill. Exit 1 if any spilled or failed.
# REGS=1 prints every configuration with its registers instead.
#
#   bash scripts/inference-spill-sweep.sh [BUILD_DIR] [KERNEL...]
#
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(flash_attn_varlen flash_attn_varlen_bf16
  flash_attn_kvcache flash_attn_kvcache_bf16 flash_attn_kvcache_split
  flash_attn_kvcache_split_bf16 flash_attn_kvcache_combine flash_attn_kvcache_combine_bf16
  kvcache_append kvcache_append_bf16)
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
one() { # kernel arch defines...
  local k=$1 arch=$2; shift 2
  local o; o=$work/$k.$arch.$RANDOM$RANDOM.ptx
  if ! "$build/bin/flashc" "$root/kernels/$k.tile" "$@" --arch="$arch" -o "$o" 2>/dev/null; then
    echo "FAIL $k $arch $* (compile)"; return
  fi
  local v; v=$("$ptxas" -v -arch="$arch" "$o" -o /dev/null 2>&1)
  local st ld regs; st=$(grep -o '[0-9]* bytes spill stores' <<<"$v" | awk '{s+=$1} END {print s+0}')
  ld=$(grep -o '[0-9]* bytes spill loads' <<<"$v" | awk '{s+=$1} END {print s+0}')
  regs=$(grep -o 'Used [0-9]* registers' <<<"$v" | awk '{print $2}' | sort -n | tail -1)
  if [ "$st$ld" = 00 ]; then echo "ok $k $arch $* regs=$regs"
  else echo "SPILL $k $arch $* regs=$regs stores=$st loads=$ld"; fi
  rm -f "$o"
}
export -f one; export build root ptxas work
modes() { # the -D options of each mode of kernel $1
  case $1 in
  flash_attn_varlen*) printf '%s\n' "" "-D CAUSAL=true" ;;
  flash_attn_kvcache_combine*) echo "" ;;
  kvcache_append*) printf '%s\n' "" "-D PAGE_SIZE=256" ;;
  *) for p in false true; do for s in "" " -D PAGE_SIZE=256"; do for c in "" " -D CAUSAL=true"; do
       echo "-D PACK_GQA=$p$s$c"; done; done; done ;;
  esac
}
for k in "${kernels[@]}"; do
  for d in $(seq 16 16 256); do
    for arch in sm_80 sm_90; do
      modes "$k" | while IFS= read -r m; do echo "$k $arch -D HEAD_DIM=$d${m:+ $m}"; done
    done
  done
done | xargs -P "${JOBS:-2}" -L 1 bash -c 'one "$@"' _ | sort -k2,2 -k3,3 >"$work/out"
if [ "${REGS:-0}" = 1 ]; then cat "$work/out"; else grep -v '^ok' "$work/out"; fi
echo "$(grep -c '^ok' "$work/out") of $(wc -l <"$work/out") without spills"
! grep -qv '^ok' "$work/out"
