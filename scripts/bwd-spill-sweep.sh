#!/usr/bin/env bash
# Compiles every backward kernel at its default block sizes for HEAD_DIM
# 16..256 step 16 x {plain, causal, window left, window left+right,
# causal+window} x {sm_80, sm_90} and prints each configuration whose
# `ptxas -v` reports spill bytes (issue 16: 0 everywhere). Exit 1 if any.
#
#   bash scripts/bwd-spill-sweep.sh [BUILD_DIR] [KERNEL...]
#
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(flash_attn_bwd flash_attn_bwd_bf16 flash_attn_bwd_dq
  flash_attn_bwd_dq_bf16 flash_attn_bwd_preprocess flash_attn_bwd_preprocess_bf16
  flash_attn_bwd_dq_convert flash_attn_bwd_dq_convert_bf16)
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
masks=("" "-D CAUSAL=true" "-D WINDOW_LEFT=32" "-D WINDOW_LEFT=32 -D WINDOW_RIGHT=32"
       "-D CAUSAL=true -D WINDOW_LEFT=32")
one() { # kernel arch defines...
  local k=$1 arch=$2; shift 2
  local o; o=$work/$k.$arch.$RANDOM$RANDOM.ptx
  if ! "$build/bin/flashc" "$root/kernels/$k.tile" "$@" --arch="$arch" -o "$o" 2>/dev/null; then
    echo "FAIL $k $arch $* (compile)"; return
  fi
  local v; v=$("$ptxas" -v -arch="$arch" "$o" -o /dev/null 2>&1)
  local st ld; st=$(grep -o '[0-9]* bytes spill stores' <<<"$v" | awk '{s+=$1} END {print s+0}')
  ld=$(grep -o '[0-9]* bytes spill loads' <<<"$v" | awk '{s+=$1} END {print s+0}')
  [ "$st$ld" = 00 ] && echo "ok $k $arch $*" || echo "SPILL $k $arch $* stores=$st loads=$ld"
  rm -f "$o"
}
export -f one; export build root ptxas work
for k in "${kernels[@]}"; do
  for d in $(seq 16 16 256); do
    for arch in sm_80 sm_90; do
      case $k in *preprocess*|*convert*) echo "$k $arch -D HEAD_DIM=$d" ;;
      *) for m in "${masks[@]}"; do echo "$k $arch -D HEAD_DIM=$d${m:+ $m}"; done ;; esac
    done
  done
done | xargs -P "${JOBS:-2}" -L 1 bash -c 'one "$@"' _ | sort -k2,2 -k3,3 >"$work/out"
grep -v '^ok' "$work/out"
echo "$(grep -c '^ok' "$work/out") of $(wc -l <"$work/out") without spills"
! grep -qv '^ok' "$work/out"
