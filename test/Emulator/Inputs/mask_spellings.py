#!/usr/bin/env python3
"""Two spellings of one mask run the same key blocks (mask_spellings.tile).

  mask_spellings.py --flashc F --workdir W --masks A B --Nq N --Nk N
                    [--lens L ...] [-D X=V]...

Runs MASK=A and MASK=B on the interpreter and the emulator. Each output
must match a float64 reference of the mask (computed here from its
definition, not from the kernel), the emulator's must match the
interpreter's, and the emulator's mma.sync (--stats) must be exactly the
number of (program, key block) pairs whose block the mask intersects, over
each program's BLOCK_M rows, times one block's mma.sync (BLOCK_M * BLOCK_N
* HEAD_DIM / 1024: S = QK^T and O += PV in m16n8k16 atoms): no block the
mask hides runs, whichever way it is written. --lens: the key length of
each batch (MASK 2 and 3; the batch count is their number).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Kernels"))
from kernel_specs import masked_attention_reference  # noqa: E402

DEFAULTS = {"HEAD_DIM": 16, "BLOCK_M": 64, "BLOCK_N": 16, "W": 24, "S": 20}
REL_TOL, ABS_TOL = 2e-3, 1e-2


def trunc_div(x, w):
    """The language's `/`: C semantics, truncation toward zero."""
    return np.sign(x) * (np.abs(x) // w)


def mask_of(mask, i, j, length, c):
    if mask in (0, 1):
        return (trunc_div(j, c["W"]) >= trunc_div(i, c["W"]) - 3) & (j <= i)
    if mask in (2, 3):
        return (j < length) & (j <= i)
    return ((j < c["S"]) | (j >= i - c["W"])) & (j <= i)


def blocks_seen(mask, nq, nk, lengths, c):
    bm, bn = c["BLOCK_M"], c["BLOCK_N"]
    count = 0
    for length in lengths:
        for start_m in range(0, nq, bm):
            i = np.arange(start_m, start_m + bm)[:, None] + (nk - nq)
            for start_n in range(0, nk, bn):
                j = np.arange(start_n, min(start_n + bn, nk))[None, :]
                count += bool(mask_of(mask, i, j, length, c).any())
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kernel", default=os.path.join(os.path.dirname(__file__),
                                                     "mask_spellings.tile"))
    ap.add_argument("--masks", type=int, nargs=2, required=True)
    ap.add_argument("--Nq", type=int, required=True)
    ap.add_argument("--Nk", type=int, required=True)
    ap.add_argument("--lens", type=int, nargs="+")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    args = ap.parse_args()
    c = dict(DEFAULTS)
    for d in args.defines:
        name, _, value = d.partition("=")
        c[name] = int(value)
    lengths = args.lens or [args.Nk]
    nb, nq, nk, d = len(lengths), args.Nq, args.Nk, c["HEAD_DIM"]
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(nq * 7 + nk)
    arrays = {"Q": rng.standard_normal((nb, nq, d)).astype(np.float16),
              "K": rng.standard_normal((nb, nk, d)).astype(np.float16),
              "V": rng.standard_normal((nb, nk, d)).astype(np.float16),
              "Lens": np.array(lengths, np.int32),
              "O": np.full((nb, nq, d), np.nan, np.float16)}
    files = []
    for name, a in arrays.items():
        path = os.path.join(args.workdir, name + ".npy")
        np.save(path, a)
        files += ["--arg", "%s=%s" % (name, path)]
    scale = 0.25
    i = np.arange(nq)[:, None] + (nk - nq)
    j = np.arange(nk)[None, :]
    per_block = c["BLOCK_M"] * c["BLOCK_N"] * d // 1024
    ok = True
    for mask in args.masks:
        want = np.stack([masked_attention_reference(arrays["Q"][b], arrays["K"][b],
                                                    arrays["V"][b], scale,
                                                    mask_of(mask, i, j, lengths[b], c))
                         for b in range(nb)])
        blocks = blocks_seen(mask, nq, nk, lengths, c)
        outs = {}
        for target in ("interp", "emulate"):
            out = os.path.join(args.workdir, "O-%d-%s.npy" % (mask, target))
            cmd = [args.flashc, "run", args.kernel, "--target=" + target, "-D", "MASK=%d" % mask]
            for define in args.defines:
                cmd += ["-D", define]
            cmd += files + ["--arg", "sm_scale=%r" % scale, "--out", "O=" + out]
            if target == "emulate":
                cmd.append("--stats")
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                print("FAIL mask %d %s: %s%s" % (mask, target, done.stdout, done.stderr))
                return 1
            outs[target] = got = np.load(out).astype(np.float64)
            err = got - want
            rel = np.linalg.norm(err) / max(np.linalg.norm(want), 1e-30)
            good = np.all(np.isfinite(got)) and rel < REL_TOL and np.abs(err).max() < ABS_TOL
            print("%s mask %d %s: rel %.2e, max abs %.2e vs float64"
                  % ("PASS" if good else "FAIL", mask, target, rel, np.abs(err).max()))
            ok &= bool(good)
            if target == "emulate":
                mma = int(re.search(r"mma\.sync \(warp instrs\)\s+(\d+)", done.stdout).group(1))
                good = mma == blocks * per_block
                print("%s mask %d: mma.sync %d, blocks that intersect the mask %d x %d = %d"
                      % ("PASS" if good else "FAIL", mask, mma, blocks, per_block,
                         blocks * per_block))
                ok &= good
        diff = np.abs(outs["emulate"] - outs["interp"]).max()
        good = diff < ABS_TOL
        print("%s mask %d: emulate vs interp max abs %.2e" % ("PASS" if good else "FAIL", mask, diff))
        ok &= bool(good)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
