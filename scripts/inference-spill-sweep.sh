#!/usr/bin/env bash
# Compiles every inference kernel (f16 and bf16) at its default block sizes
# for HEAD_DIM 16..256 step 16 x the modes of docs/kernels.md's inference
# register table (flash_attn_kvcache and _split: PACK_GQA off and on x
# PAGE_SIZE 16 and 256 x CAUSAL off and on, and LEFTPAD with ALIBI at
# PAGE_SIZE 16; flash_attn_varlen: CAUSAL off and on, each with ALIBI, with
# PAGED at PAGE_SIZE 16 and 256, and with both; kvcache_append:
# PAGE_SIZE 16 and 256; kvcache_rotary: ROTARY_DIM 16, interleaved or not)
# x {sm_80, sm_90} and prints each
# configuration whose `ptxas -v` reports spill bytes (expected: none),
# then how many did not spill. Exit 1 if any spilled or failed.
# VERBOSE=1 prints every configuration with its registers instead.
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
  kvcache_append kvcache_append_bf16 kvcache_rotary kvcache_rotary_bf16)
source "$root/scripts/spill-sweep-lib.sh"
modes() { # the -D options of each mode of kernel $1
  case $1 in
  flash_attn_varlen*) for c in "" " -D CAUSAL=true"; do
       printf '%s\n' "${c# }" "-D ALIBI=true$c" "-D PAGED=true -D PAGE_SIZE=16$c" \
         "-D PAGED=true -D PAGE_SIZE=256$c" "-D PAGED=true -D PAGE_SIZE=256 -D ALIBI=true$c"
     done ;;
  flash_attn_kvcache_combine*) echo "" ;;
  kvcache_append*) printf '%s\n' "" "-D PAGE_SIZE=256" ;;
  kvcache_rotary*) printf '%s\n' "-D ROTARY_DIM=16" "-D ROTARY_DIM=16 -D INTERLEAVED=false" ;;
  *) for p in false true; do for s in "" " -D PAGE_SIZE=256"; do for c in "" " -D CAUSAL=true"; do
       echo "-D PACK_GQA=$p$s$c"; done; done
       for c in "" " -D CAUSAL=true"; do echo "-D PACK_GQA=$p -D LEFTPAD=true -D ALIBI=true$c"; done
     done ;;
  esac
}
for k in "${kernels[@]}"; do
  for d in $(seq 16 16 256); do
    for arch in sm_80 sm_90; do
      modes "$k" | while IFS= read -r m; do echo "$k $arch -D HEAD_DIM=$d${m:+ $m}"; done
    done
  done
done | spill_sweep
spill_report
