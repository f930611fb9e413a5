#!/usr/bin/env python3
"""Checks `flashc -R` on every kernel of kernels/ at its defaults, loop by
loop: each key loop (a loop whose own body multiplies blocks, tile.mma, or
takes an online-softmax step) gets one key-loop remark (the ranges it was
split into and the blocks skipped, or why not), each loop that asks for
stages (tile.num_stages) a staged-loop remark (what it got); no
kernel gets a warning; without -R nothing is printed. The loops are counted
in the tile IR without the split (--split-masked-loops=false), and a
remark's loop is its location with its `called from` notes (an inlined
library loop has one per call). Prints a line per kernel and fails listing
the kernels that lack a remark.

  check_remarks.py --flashc F --kernels DIR
"""
import argparse
import glob
import os
import re
import subprocess
import sys

LOC = re.compile(r"^(\S+:\d+:\d+): (remark|note|warning|error): (.*)$")


def loops(tile_ir):
    """(key loops, staged loops) of a module's tile IR: each scf.for with
    tile.mma or tile.online_softmax among its own ops (not those of nested
    loops), and each whose closing line carries tile.num_stages."""
    lines = tile_ir.splitlines()
    key = staged = 0
    for i, line in enumerate(lines):
        if "scf.for" not in line or not line.rstrip().endswith("{"):
            continue
        indent = len(line) - len(line.lstrip())
        own = False
        for body in lines[i + 1:]:
            depth = len(body) - len(body.lstrip())
            if depth == indent and body.lstrip().startswith("}"):
                staged += "tile.num_stages" in body
                break
            if depth == indent + 2 and re.search(r"tile\.(mma|online_softmax)\b(?!_)", body):
                own = True
        key += own
    return key, staged


def remarked_loops(stderr):
    """{kind: set of loops}: the loops (location and call chain) that got a
    remark starting with `key loop` or `staged loop`."""
    found = {"key loop": set(), "staged loop": set()}
    current = None
    for line in stderr.splitlines():
        match = LOC.match(line)
        if not match:
            continue
        place, level, text = match.groups()
        if level == "note":
            if current is not None and text.startswith("called from"):
                current[1].append(place)
            continue
        if current is not None:
            found[current[0]].add((current[2], tuple(current[1])))
        current = None
        if level == "remark":
            kind = next((k for k in found if text.startswith(k)), None)
            if kind is not None:
                current = (kind, [], place)
    if current is not None:
        found[current[0]].add((current[2], tuple(current[1])))
    return found


# Kernels that compile only for sm_90a (f8e4m3 MMAs): remarked there.
ARCH_FLAGS = {"fa3_fp8.tile": ["--arch=sm_90a"], "fa3_fp8_descale.tile": ["--arch=sm_90a"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernels", required=True)
    args = ap.parse_args()
    failed = []
    kernels = sorted(glob.glob(os.path.join(args.kernels, "*.tile")))
    for path in kernels:
        name = os.path.basename(path)
        arch = ARCH_FLAGS.get(name, [])
        tile = subprocess.run([args.flashc, path, "--emit=tile", "--split-masked-loops=false"]
                              + arch, check=True, capture_output=True, text=True)
        plain = subprocess.run([args.flashc, path, "--emit=layout", "-o", os.devnull] + arch,
                               check=True, capture_output=True, text=True)
        remarks = subprocess.run([args.flashc, path, "-R", "--emit=layout", "-o",
                                  os.devnull] + arch,
                                 check=True, capture_output=True, text=True).stderr
        key, staged = loops(tile.stdout)
        got = remarked_loops(remarks)
        problems = []
        if len(got["key loop"]) != key:
            problems.append("%d key loop(s), %d with a key-loop remark"
                            % (key, len(got["key loop"])))
        # A loop inside a staged one may be pipelined too (fa1's loop over
        # the query blocks), with a remark of its own.
        if len(got["staged loop"]) < staged:
            problems.append("%d staged loop(s), %d with a staged-loop remark"
                            % (staged, len(got["staged loop"])))
        if "warning:" in remarks:
            problems.append("a warning")
        if plain.stderr:
            problems.append("output without -R: " + plain.stderr.splitlines()[0])
        if not key and not staged and "remark:" in remarks:
            problems.append("a remark where no loop is split or staged")
        if problems:
            print("FAIL %s: %s" % (name, "; ".join(problems)))
            failed.append(name)
        else:
            print("OK %s: %d key loop(s), %d staged loop(s)" % (name, key, staged))
    print("%d kernels, %d failed%s" % (len(kernels), len(failed),
                                        ": " + ", ".join(failed) if failed else ""))
    return 1 if failed or not kernels else 0


if __name__ == "__main__":
    sys.exit(main())
