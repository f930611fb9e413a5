#!/usr/bin/env bash
# Compiles every backward kernel at its default block sizes for HEAD_DIM
# 16..256 step 16 x {plain, causal, window left, window left+right,
# causal+window} x {sm_80, sm_90} and prints each configuration whose
# `ptxas -v` reports spill bytes (expected: none). Exit 1 if any.
# VERBOSE=1 prints every configuration with its registers.
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
source "$root/scripts/spill-sweep-lib.sh"
masks=("" "-D CAUSAL=true" "-D WINDOW_LEFT=32" "-D WINDOW_LEFT=32 -D WINDOW_RIGHT=32"
       "-D CAUSAL=true -D WINDOW_LEFT=32")
for k in "${kernels[@]}"; do
  for d in $(seq 16 16 256); do
    for arch in sm_80 sm_90; do
      case $k in *preprocess*|*convert*) echo "$k $arch -D HEAD_DIM=$d" ;;
      *) for m in "${masks[@]}"; do echo "$k $arch -D HEAD_DIM=$d${m:+ $m}"; done ;; esac
    done
  done
done | spill_sweep
spill_report
