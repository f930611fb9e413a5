# Shared by the *-spill-sweep.sh scripts (sourced, after they set `root` and
# `build`): `spill_sweep` reads "KERNEL ARCH FLASHC-OPTIONS..." lines on
# stdin, compiles each with flashc and ptxas -v (JOBS at once, default 2) and
# leaves one line per configuration in $work/out: "ok ... regs=R" or
# "SPILL ... regs=R stores=S loads=L" or "FAIL ... (compile|ptxas)".
# `spill_report` prints the lines that are not ok (every line with
# VERBOSE=1) and how many did not spill, and fails if any did.
# FLASHC_FLAGS adds flashc options to every compile. KERNEL_bf16 is KERNEL
# compiled with -D T=bf16 (its type constant).
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
spill_one() { # kernel arch flashc-options...
  local k=$1 arch=$2; shift 2
  local o; o=$work/$k.$arch.$RANDOM$RANDOM.ptx
  local file=$k type=()
  case $k in *_bf16) file=${k%_bf16}; type=(-D T=bf16) ;; esac
  # shellcheck disable=SC2086
  if ! "$build/bin/flashc" "$root/kernels/$file.tile" "${type[@]}" "$@" ${FLASHC_FLAGS:-} --arch="$arch" \
       -o "$o" 2>/dev/null; then
    echo "FAIL $k $arch $* (compile)"; return
  fi
  # Not -o /dev/null: ptxas interrupted deletes its output file.
  local v
  if ! v=$("$ptxas" -v -arch="$arch" "$o" -o "$o.cubin" 2>&1); then
    echo "FAIL $k $arch $* (ptxas)"; rm -f "$o" "$o.cubin"; return
  fi
  local st ld regs
  st=$(grep -o '[0-9]* bytes spill stores' <<<"$v" | awk '{s+=$1} END {print s+0}')
  ld=$(grep -o '[0-9]* bytes spill loads' <<<"$v" | awk '{s+=$1} END {print s+0}')
  regs=$(grep -o 'Used [0-9]* registers' <<<"$v" | awk '{print $2}' | sort -n | tail -1)
  if [ "$st$ld" = 00 ]; then echo "ok $k $arch $* regs=$regs"
  else echo "SPILL $k $arch $* regs=$regs stores=$st loads=$ld"; fi
  rm -f "$o" "$o.cubin"
}
spill_sweep() {
  export -f spill_one; export build root ptxas work
  xargs -P "${JOBS:-2}" -L 1 bash -c 'spill_one "$@"' _ | sort -k2,2 -k3,3 >"$work/out"
}
spill_report() {
  if [ -n "${VERBOSE:-}" ]; then cat "$work/out"; else grep -v '^ok' "$work/out"; fi
  echo "$(grep -c '^ok' "$work/out") of $(wc -l <"$work/out") without spills"
  ! grep -qv '^ok' "$work/out"
}
