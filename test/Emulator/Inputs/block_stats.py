#!/usr/bin/env python3
"""Emulator --stats of block skipping (tile-split-masked-loops).

  block_stats.py count --flashc F --workdir W --kernel fa2|masked_loop
                 --Nq N --Nk N --D D --BM M --BN N [--left L] [--right R] [-D X=V]...
      mma.sync must equal (key blocks that intersect the mask, counted here
      from the mask in numpy over every program's rows) x BM * BN * D / 1024
      (the mma.sync of one block: S = QK^T and O += PV, m16n8k16 atoms); with
      --split-masked-loops=false, every key block of every program runs.
  block_stats.py same --flashc F --workdir W --a K1.tile --b K2.tile --Nq --Nk --D [-D]...
                 [--a-define X=V]...
      kernel a (the pass on) and kernel b (the pass off) have the same
      mma.sync, cp.async, global bytes read and written and ldmatrix counts
      (--a-define: a -D for kernel a alone).
Both kernels read [B, H, N, D] tensors with B = H = 1 (fa2) or [N, D]
(masked_loop, with a KeyMask of ones and KeyLen Nk).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

COUNTERS = ("mma.sync (warp instrs)", "ldmatrix (warp instrs)", "cp.async (warp instrs)",
            "global bytes read", "global bytes written")


def inputs(workdir, nq, nk, d, flat):
    rng = np.random.default_rng(0)
    shape = (lambda n: (n, d)) if flat else (lambda n: (1, 1, n, d))
    files = {"Q": rng.standard_normal(shape(nq)), "K": rng.standard_normal(shape(nk)),
             "V": rng.standard_normal(shape(nk)), "O": np.full(shape(nq), np.nan)}
    args = []
    for name, a in files.items():
        np.save(os.path.join(workdir, name + ".npy"), a.astype(np.float16))
        args += ["--arg", "%s=%s" % (name, os.path.join(workdir, name + ".npy"))]
    if flat:
        np.save(os.path.join(workdir, "KeyMask.npy"), np.ones(nk, dtype=bool))
        args += ["--arg", "KeyMask=" + os.path.join(workdir, "KeyMask.npy")]
        np.save(os.path.join(workdir, "KeyLen.npy"), np.array([nk], np.int32))
        args += ["--arg", "KeyLen=" + os.path.join(workdir, "KeyLen.npy")]
    return args + ["--arg", "sm_scale=0.125", "--out", "O=" + os.path.join(workdir, "out.npy")]


def stats(flashc, kernel, defines, run_args, split=True):
    cmd = [flashc, "run", kernel, "--target=emulate", "--stats",
           "--split-masked-loops=" + ("true" if split else "false")]
    for d in defines:
        cmd += ["-D", d]
    text = subprocess.run(cmd + run_args, check=True, capture_output=True, text=True).stdout
    return {c: int(re.search(re.escape(c) + r"\s+(\d+)", text).group(1)) for c in COUNTERS}


def blocks_seen(nq, nk, bm, bn, left, right):
    """(program, key block) pairs where some row sees some key (bottom-right
    aligned; left/right < 0: unbounded), over each program's BM rows."""
    count = 0
    for start_m in range(0, nq, bm):
        i = np.arange(start_m, start_m + bm)[:, None] + (nk - nq)
        for start_n in range(0, nk, bn):
            j = np.arange(start_n, min(start_n + bn, nk))[None, :]
            seen = np.ones((bm, j.shape[1]), dtype=bool)
            if left >= 0:
                seen &= j >= i - left
            if right >= 0:
                seen &= j <= i + right
            count += bool(seen.any())
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("count", "same"))
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kernel")
    ap.add_argument("--a")
    ap.add_argument("--b")
    for n in ("Nq", "Nk", "D", "BM", "BN"):
        ap.add_argument("--" + n, type=int)
    ap.add_argument("--left", type=int, default=-1)
    ap.add_argument("--right", type=int, default=-1)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--a-define", dest="a_defines", action="append", default=[])
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if args.mode == "same":
        run_args = inputs(args.workdir, args.Nq, args.Nk, args.D, False)
        a = stats(args.flashc, args.a, args.defines + args.a_defines, run_args)
        b = stats(args.flashc, args.b, args.defines, run_args, split=False)
        print("\n".join("%-24s %10d %10d" % (c, a[c], b[c]) for c in COUNTERS))
        return 0 if a == b else 1
    flat = args.kernel.endswith("masked_loop.tile")
    run_args = inputs(args.workdir, args.Nq, args.Nk, args.D, flat)
    per_block = args.BM * args.BN * args.D // 1024
    want = blocks_seen(args.Nq, args.Nk, args.BM, args.BN, args.left, args.right) * per_block
    every = -(-args.Nq // args.BM) * -(-args.Nk // args.BN) * per_block
    got = stats(args.flashc, args.kernel, args.defines, run_args)["mma.sync (warp instrs)"]
    unsplit = stats(args.flashc, args.kernel, args.defines, run_args, split=False)
    print("mma.sync %d, blocks that intersect the mask x %d = %d; unsplit %d (every block: %d)"
          % (got, per_block, want, unsplit["mma.sync (warp instrs)"], every))
    return 0 if got == want and unsplit["mma.sync (warp instrs)"] == every else 1


if __name__ == "__main__":
    sys.exit(main())
