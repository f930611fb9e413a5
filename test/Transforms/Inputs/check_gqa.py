#!/usr/bin/env python3
"""Runs gqa_head_in_loop.tile on the interpreter and the emulator and checks
both against a float64 reference of grouped-query attention (query head h
reads KV head h // (H // H_KV)). The emulator runs the pipeline's output,
where tile-hoist-invariant-scalars has moved the KV head out of the key loop
and the K/V copies are issued an iteration ahead; the interpreter runs the
tile level, where the division is still in the loop. Inputs are random,
never zero; the output is NaN-poisoned.

  check_gqa.py --flashc F --kernel K --workdir W [--Nq N] [--Nk N]
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def reference(q, k, v, scale):
    b, h, nq, _ = q.shape
    group = h // k.shape[1]
    out = np.zeros(q.shape, np.float64)
    for bi in range(b):
        for hi in range(h):
            kh = hi // group
            s = q[bi, hi].astype(np.float64) @ k[bi, kh].astype(np.float64).T * scale
            p = np.exp(s - s.max(axis=1, keepdims=True))
            out[bi, hi] = (p @ v[bi, kh].astype(np.float64)) / p.sum(axis=1, keepdims=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--Nq", type=int, default=70)
    ap.add_argument("--Nk", type=int, default=150)
    args = ap.parse_args()
    rng = np.random.default_rng(args.Nq * 31 + args.Nk)
    b, h, h_kv, dim = 1, 4, 2, 64
    q = rng.uniform(0.5, 2.0, (b, h, args.Nq, dim)).astype(np.float16)
    sign = lambda shape: rng.choice([-1, 1], shape)
    k = (rng.uniform(0.5, 2.0, (b, h_kv, args.Nk, dim)) * sign((b, h_kv, args.Nk, dim))).astype(np.float16)
    v = (rng.uniform(0.5, 2.0, (b, h_kv, args.Nk, dim)) * sign((b, h_kv, args.Nk, dim))).astype(np.float16)
    arrays = {"Q": q, "K": k, "V": v,
              "O": np.full(q.shape, np.nan, np.float16),
              "Heads": np.zeros((b, h, args.Nk), np.int32)}
    for name, a in arrays.items():
        np.save(os.path.join(args.workdir, name + ".npy"), a)
    want = reference(q, k, v, 0.125)
    for target in ("interp", "emulate"):
        out = os.path.join(args.workdir, "O_%s.npy" % target)
        cmd = [args.flashc, "run", args.kernel, "--target=" + target]
        for name in arrays:
            cmd += ["--arg", "%s=%s" % (name, os.path.join(args.workdir, name + ".npy"))]
        cmd += ["--arg", "sm_scale=0.125", "--out", "O=" + out]
        subprocess.run(cmd, check=True)
        got = np.load(out).astype(np.float64)
        err = np.abs(got - want)
        if not np.all(np.isfinite(got)) or err.max() > 1e-2 + 2e-3 * np.abs(want).max():
            print("FAIL %s: max error %g" % (target, np.nanmax(err)))
            return 1
        print("OK %s: max error %g" % (target, err.max()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
