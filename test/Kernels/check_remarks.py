#!/usr/bin/env python3
"""Checks `flashc -R` on every kernel of kernels/ at its defaults: a kernel
whose tile IR has a tile.online_softmax in a loop gets a key-loop remark
(how the loop was split, or why not), one with a loop that asks for stages
(tile.num_stages) a staged-loop remark (what it got); no kernel gets a
warning; without -R nothing is printed.

  check_remarks.py --flashc F --kernels DIR
"""
import argparse
import glob
import os
import re
import subprocess
import sys


# Kernels that compile only for sm_90a (f8e4m3 MMAs): remarked there.
ARCH_FLAGS = {"fa3_fp8.tile": ["--arch=sm_90a"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernels", required=True)
    args = ap.parse_args()
    failures = 0
    kernels = sorted(glob.glob(os.path.join(args.kernels, "*.tile")))
    for path in kernels:
        name = os.path.basename(path)
        arch = ARCH_FLAGS.get(name, [])
        tile = subprocess.run([args.flashc, path, "--emit=tile"] + arch, check=True,
                              capture_output=True, text=True)
        plain = subprocess.run([args.flashc, path, "--emit=layout", "-o", os.devnull] + arch,
                               check=True, capture_output=True, text=True)
        remarks = subprocess.run([args.flashc, path, "-R", "--emit=layout", "-o",
                                  os.devnull] + arch,
                                 check=True, capture_output=True, text=True).stderr
        want = []
        # tile.online_softmax itself, not tile.online_softmax_finalize (the
        # dropout kernels write their softmax step out: no key-loop remark).
        if re.search(r"tile\.online_softmax\b(?!_)", tile.stdout) and "scf.for" in tile.stdout:
            want.append("remark: key loop")
        if "tile.num_stages" in tile.stdout:
            want.append("remark: staged loop")
        problems = [w for w in want if w not in remarks]
        if "warning:" in remarks:
            problems.append("a warning")
        if plain.stderr:
            problems.append("output without -R: " + plain.stderr.splitlines()[0])
        if not want and "remark:" in remarks:
            problems.append("a remark where no loop is split or staged")
        if problems:
            print("FAIL %s: %s" % (name, "; ".join(problems)))
            failures += 1
        else:
            print("OK %s: %s" % (name, ", ".join(want) or "no key or staged loop"))
    print("%d kernels, %d failed" % (len(kernels), failures))
    return 1 if failures or not kernels else 0


if __name__ == "__main__":
    sys.exit(main())
