#!/usr/bin/env python3
"""Compiles every kernel of kernels/ with one extreme -D value at a time and
checks that each compile finishes within a time bound with success or a
located error (file:line:col: error), never a crash, an internal error or a
hang (resource limits are checked before lowering: tile-check-resources).

  python3 scripts/sweep-constants.py [--flashc build/bin/flashc]
      [--kernels kernels] [--only fa2.tile:STAGES,online_softmax.tile:BLOCK_R]
      [--values 0,-1,1,4096,1000000] [--limit 10] [--emit ptx]

Each kernel's constants (names and kinds) come from its tile.constants as
`flashc --emit=tile` prints them. Int constants get --values; bool ones
true/false; float ones 0, -1, 1e30; type ones every element type. Prints one line per compile and a
summary; exits 1 if any compile failed the check.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)
#: The values of a type constant (tile.constants prints them bare: T = f16).
TYPES = ("f16", "bf16", "f32", "i32", "bool")


def constants(flashc, kernel):
    out = subprocess.run([flashc, kernel, "--emit=tile"], capture_output=True,
                         text=True, timeout=60).stdout
    m = re.search(r"tile\.constants = \{([^}]*)\}", out)
    if not m:
        return {}
    kinds = {}
    for item in m.group(1).split(", "):
        name, _, value = item.partition(" = ")
        kinds[name.strip()] = ("bool" if value in ("true", "false") else
                               "float" if value.endswith(": f64") else
                               "type" if value in TYPES else "int")
    return kinds


def values_for(kind, ints):
    if kind == "type":
        return list(TYPES)
    if kind == "bool":
        return ["true", "false"]
    if kind == "float":
        return ["0.0", "-1.0", "1e30"]
    return ints


def compile_one(flashc, kernel, name, value, emit, limit, out):
    cmd = [flashc, kernel, "-D", f"{name}={value}", f"--emit={emit}", "-o", out]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return "HANG", time.monotonic() - start, ""
    secs = time.monotonic() - start
    first = (r.stderr.strip().splitlines() or [""])[0]
    if r.returncode == 0:
        return "ok", secs, ""
    if r.returncode == 1 and (LOCATED.search(r.stderr) or
                              first.startswith("flashc: error: -D")):
        return "error", secs, first
    return f"BAD(rc={r.returncode})", secs, first


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashc", default=os.path.join(root, "build/bin/flashc"))
    ap.add_argument("--kernels", default=os.path.join(root, "kernels"))
    ap.add_argument("--only", default="")
    ap.add_argument("--values", default="0,-1,1,3,4096,1000000,2147483647")
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--emit", default="ptx")
    args = ap.parse_args()
    ints = args.values.split(",")
    only = [p.split(":") for p in args.only.split(",") if p]
    failures, count, slowest, total = [], 0, (0.0, ""), 0.0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k." + ("ptx" if args.emit == "ptx" else "mlir"))
        for kernel in sorted(glob.glob(os.path.join(args.kernels, "*.tile"))):
            base = os.path.basename(kernel)
            for name, kind in sorted(constants(args.flashc, kernel).items()):
                if only and [base, name] not in only:
                    continue
                for value in values_for(kind, ints):
                    verdict, secs, msg = compile_one(args.flashc, kernel, name,
                                                     value, args.emit,
                                                     args.limit, out)
                    count += 1
                    total += secs
                    slowest = max(slowest, (secs, f"{base} -D {name}={value}"))
                    print(f"{verdict:6} {secs:6.2f}s {base} -D {name}={value}"
                          f"  {msg[:300]}", flush=True)
                    if verdict not in ("ok", "error"):
                        failures.append(f"{base} -D {name}={value}: {verdict}")
    print(f"{count} compiles in {total:.1f} s, slowest {slowest[0]:.2f} s "
          f"({slowest[1]}); {len(failures)} failed the check")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
