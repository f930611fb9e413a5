#!/usr/bin/env bash
# Measures a cold build: configures a scratch build folder the way
# scripts/setup.sh does, with ccache off, builds, and prints the wall time, the
# CPU time (user + sys of every compiler and linker), the compiles' summed
# CPU and wall times and the critical path through the build graph (`ninja -t
# graph`, each output weighted by its CPU time; the wall times come from
# ninja's .ninja_log).
#   bash scripts/measure-setup.sh                      # build-cold/, every target
#   bash scripts/measure-setup.sh DIR -DFLASH_PCH=OFF  # without the precompiled header
#   FLASH_MEASURE_TARGETS="flashc flashc-doc" bash scripts/measure-setup.sh  # some targets
# On a shared machine wall times grow with the load and CPU times barely do:
# compare CPU times there. On an idle machine with N cores the build's wall
# time is about max(CPU / N, critical path).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$root/build-cold}"
shift || true
export FLASH_MEASURE_TARGETS=${FLASH_MEASURE_TARGETS:-all}
export CCACHE_DISABLE=1

rm -rf "$dir"
mkdir -p "$dir"
cpu_log="$dir/.compile-cpu.log"
# Every compile and link runs under GNU time, which appends its CPU times.
/usr/bin/time --format="%e %U %S" --output="$dir/.measure-times" bash -c '
  set -e
  cmake -G Ninja -S "$0" -B "$1" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DFLASHC_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" \
    "-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/time;--append;--output=$2;--format=%U %S %e %C" \
    "-DCMAKE_CXX_LINKER_LAUNCHER=/usr/bin/time;--append;--output=$2;--format=%U %S %e %C" \
    "${@:3}" >/dev/null
  ninja -C "$1" $FLASH_MEASURE_TARGETS >/dev/null' "$root" "$dir" "$cpu_log" "$@"

ninja -C "$dir" -t graph $FLASH_MEASURE_TARGETS > "$dir/.measure-graph.dot"
python3 - "$dir" <<'EOF'
import re, sys
build = sys.argv[1]
wall, user, sys_ = map(float, open(f"{build}/.measure-times").read().split())
walls = {}
for line in open(f"{build}/.ninja_log"):
    if not line.startswith("#"):
        start, end, _, output, _ = line.rstrip("\n").split("\t")
        walls[output] = (int(end) - int(start)) / 1000.0
cpus = {}
for line in open(f"{build}/.compile-cpu.log"):
    fields = line.split()
    if len(fields) > 3 and "-o" in fields:
        output = fields[fields.index("-o") + 1]
        cpus[output] = float(fields[0]) + float(fields[1])
compiles = [o for o in cpus if o.endswith((".o", ".gch"))]

# ninja -t graph: files and build edges are nodes; an output's chain is its
# slowest input's chain plus its own CPU time.
labels, preds = {}, {}
for line in open(f"{build}/.measure-graph.dot"):
    m = re.match(r'"(0x[0-9a-f]+)" \[label="([^"]*)"', line)
    if m:
        labels[m.group(1)] = m.group(2)
        continue
    m = re.match(r'"(0x[0-9a-f]+)" -> "(0x[0-9a-f]+)"', line)
    if m:
        preds.setdefault(m.group(2), []).append(m.group(1))
sys.setrecursionlimit(100000)
memo = {}
def chain(node):
    if node not in memo:
        memo[node] = (0.0, [])
        best = max((chain(p) for p in preds.get(node, [])), default=(0.0, []),
                   key=lambda c: c[0])
        own = cpus.get(labels.get(node, ""), 0.0)
        memo[node] = (best[0] + own, best[1] + ([labels[node]] if own else []))
    return memo[node]
length, path = max((chain(n) for n in labels), key=lambda c: c[0])

print(f"wall {wall:.0f} s; CPU {user + sys_:.0f} s (user {user:.0f}, sys {sys_:.0f})")
print(f"{len(compiles)} compiles: CPU {sum(cpus[o] for o in compiles):.0f} s, "
      f"wall {sum(walls.get(o, 0) for o in compiles):.0f} s summed; "
      f"links and the rest: CPU {sum(v for o, v in cpus.items() if o not in compiles):.0f} s")
print(f"critical path: CPU {length:.0f} s over {len(path)} steps")
for output in path:
    print(f"  {cpus[output]:7.1f} s  {output}")
print("slowest compiles (CPU):")
for output in sorted(compiles, key=lambda o: -cpus[o])[:12]:
    print(f"  {cpus[output]:7.1f} s  {output}")
EOF
