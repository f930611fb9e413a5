#!/usr/bin/env python3
"""Runs masked_loop.tile with tile-split-masked-loops on and off and checks
that the split changes no result: on the interpreter both agree with each
other (within f16 rounding of the output) and with a float64 reference of
the mask (MASK as documented in masked_loop.tile); with --emulate the
emulator too. Inputs are random, never zero; the output is NaN-poisoned.

  check_split.py --flashc F --workdir W --mask M --Nq N --Nk N [--emulate] [-D X=V]...
                 [--flashc-flag OPT]...

--flashc-flag adds OPT to every run (--lean-masks: the split loops' masks
merged, checked against the unsplit loop's mask as written).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Kernels"))
from kernel_specs import masked_attention_reference  # noqa: E402

DEFAULTS = {"HEAD_DIM": 16, "LEFT": 40, "RIGHT": 8, "PREFIX": 24, "CHUNK": 48}
KEYLEN = 0.6  # KeyLen[0] as a fraction of Nk (mask 9)


def visible(mask, nq, nk, c):
    i = np.arange(nq)[:, None] + (0 if mask == 0 else nk - nq)
    j = np.arange(nk)[None, :]
    if mask in (0, 1, 7):
        return j <= i
    if mask == 8:   # the kernel's signed division truncates toward zero
        return (j // c["CHUNK"] >= np.trunc(i / c["CHUNK"]).astype(int) - 1) & (j <= i)
    if mask == 9:
        return (j < c["KEYLEN"]) & (j <= i)
    if mask == 11:
        w = nk // 8 + 1
        return (j // w >= np.trunc(i / w).astype(int) - 1) & (j <= i)
    if mask == 10:
        return ((j < c["PREFIX"]) | (j >= i - c["LEFT"])) & (j <= i)
    if mask == 2:
        return (j >= i - c["LEFT"]) & (j <= i + c["RIGHT"])
    if mask == 3:
        return (j <= i) | (j < c["PREFIX"])
    if mask == 4:
        chunk = np.floor_divide(i, c["CHUNK"]) * c["CHUNK"]
        if (i < 0).any():   # the kernel's signed division truncates
            chunk = np.where(i < 0, -((-i) // c["CHUNK"]) * c["CHUNK"], chunk)
        return (j >= chunk) & (j <= i)
    return np.ones((nq, nk), dtype=bool)


def reference(q, k, v, key_mask, mask, scale, c):
    nq, nk = q.shape[0], k.shape[0]
    seen = visible(mask, nq, nk, c)
    if mask in (6, 7):
        seen = seen & key_mask[None, :]
    return masked_attention_reference(q, k, v, scale, seen)


def run(args, workdir, target, split, out):
    cmd = [args.flashc, "run", args.kernel, "--target=" + target,
           "--split-masked-loops=" + ("true" if split else "false"),
           "-D", "MASK=%d" % args.mask] + args.flashc_flags
    for d in args.defines:
        cmd += ["-D", d]
    for name in ("Q", "K", "V", "KeyMask", "KeyLen", "O"):
        cmd += ["--arg", "%s=%s" % (name, os.path.join(workdir, name + ".npy"))]
    cmd += ["--arg", "sm_scale=0.25", "--out", "O=" + out]
    subprocess.run(cmd, check=True)
    return np.load(out).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernel", default=os.path.join(os.path.dirname(__file__),
                                                     "masked_loop.tile"))
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mask", type=int, required=True)
    ap.add_argument("--Nq", type=int, required=True)
    ap.add_argument("--Nk", type=int, required=True)
    ap.add_argument("--emulate", action="store_true")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--flashc-flag", dest="flashc_flags", action="append", default=[])
    args = ap.parse_args()
    consts = dict(DEFAULTS)
    for d in args.defines:
        name, _, value = d.partition("=")
        consts[name] = int(value)
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(args.mask * 1000 + args.Nq + 7 * args.Nk)
    dim = consts["HEAD_DIM"]
    q = rng.uniform(0.5, 2.0, (args.Nq, dim)).astype(np.float16)
    k = (rng.uniform(0.5, 2.0, (args.Nk, dim)) * rng.choice([-1, 1], (args.Nk, dim))).astype(np.float16)
    v = (rng.uniform(0.5, 2.0, (args.Nk, dim)) * rng.choice([-1, 1], (args.Nk, dim))).astype(np.float16)
    key_mask = rng.random(args.Nk) < 0.7
    consts["KEYLEN"] = int(KEYLEN * args.Nk)
    key_len = np.array([consts["KEYLEN"]], np.int32)
    for name, a in (("Q", q), ("K", k), ("V", v), ("KeyMask", key_mask), ("KeyLen", key_len),
                    ("O", np.full((args.Nq, dim), np.nan, np.float16))):
        np.save(os.path.join(args.workdir, name + ".npy"), a)
    want = reference(q, k, v, key_mask, args.mask, 0.25, consts)
    outs = {}
    targets = [("interp", True), ("interp", False)] + ([("emulate", True)] if args.emulate else [])
    for target, split in targets:
        out = os.path.join(args.workdir, "O_%s_%d.npy" % (target, split))
        outs[(target, split)] = got = run(args, args.workdir, target, split, out)
        err = np.abs(got - want)
        if not np.all(np.isfinite(got)) or err.max() > 1e-2 + 2e-3 * np.abs(want).max():
            print("FAIL mask %d %s split=%s: max error %g" % (args.mask, target, split, np.nanmax(err)))
            return 1
    # The split changes nothing but which blocks run: the same sums in the
    # same order, so the same f16 output (up to one rounding step).
    same = np.abs(outs[("interp", True)] - outs[("interp", False)])
    if same.max() > 1e-3 * max(1.0, np.abs(want).max()):
        print("FAIL mask %d: split and unsplit differ by %g" % (args.mask, same.max()))
        return 1
    print("OK mask %d Nq %d Nk %d: %d targets" % (args.mask, args.Nq, args.Nk, len(targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
