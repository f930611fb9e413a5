#!/usr/bin/env python3
"""unary_math.py --flashc FLASHC --workdir DIR [--ptxas PTXAS]

Every unary math builtin of the language, each in a kernel of its own
(Y = FN(X) over a 2-D f32 tensor whose shape is not a multiple of the block),
run on the interpreter and on the emulator against numpy in float64, and,
with --ptxas, compiled to PTX for sm_80 and sm_90 and assembled.

A new unary builtin is one entry of BUILTINS: its name, the float64
reference and the inputs it is defined on.
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def with_extremes(x, values):
    """x with its first elements replaced by `values` (e.g. +-inf)."""
    x = x.copy()
    x.flat[:len(values)] = values
    return x


def sigmoid(x):
    with np.errstate(over="ignore"):   # exp(-x) = inf for x << 0: 1 / inf = 0
        return 1 / (1 + np.exp(-x))


# Inputs where a naive sigmoid could overflow: exp(-x) is inf in f32 below
# x = -88.7 (and 1 / (1 + inf) must be 0, not NaN).
SIGMOID_EXTREMES = [-np.inf, -1e4, -200, -89, -88, -30, 30, 88, 89, 200, 1e4,
                    np.inf]

# name -> (float64 reference, input transform from standard normal values)
BUILTINS = {
    "abs": (np.abs, lambda x: x),
    "exp": (np.exp, lambda x: x),
    "exp2": (np.exp2, lambda x: x),
    "log": (np.log, lambda x: np.abs(x) + 1e-3),
    "log2": (np.log2, lambda x: np.abs(x) + 1e-3),
    "sqrt": (np.sqrt, lambda x: np.abs(x)),
    "tanh": (np.tanh, lambda x: 4 * x),   # reaches the saturated tails
    "sigmoid": (sigmoid, lambda x: with_extremes(8 * x, SIGMOID_EXTREMES)),
}

KERNEL = """kernel unary<BLOCK_R: int = 16, BLOCK_C: int = 64>(X: f32[R, C], Y: f32[R, C])
{{
  grid(cdiv(R, BLOCK_R), cdiv(C, BLOCK_C));
  let r0 = program_id(0) * BLOCK_R;
  let c0 = program_id(1) * BLOCK_C;
  let x = load(X[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C]);
  store(Y[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], {name}(x));
}}
"""

# f32 results of libm-quality functions: a few ulps of f32.
REL_TOL = 1e-6


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("FAIL: %s\n%s%s" % (" ".join(cmd), done.stdout, done.stderr))
    return done.stdout


def check(args, name, reference, transform):
    src = os.path.join(args.workdir, name + ".tile")
    with open(src, "w") as f:
        f.write(KERNEL.format(name=name))
    rng = np.random.default_rng(len(name))
    x = transform(rng.standard_normal((37, 150))).astype(np.float32)
    xfile = os.path.join(args.workdir, name + "-x.npy")
    yfile = os.path.join(args.workdir, name + "-y.npy")
    np.save(xfile, x)
    np.save(yfile, np.full(x.shape, np.nan, np.float32))
    want = reference(x.astype(np.float64))
    results = {}
    for target in ("interp", "emulate"):
        out = os.path.join(args.workdir, "%s-%s.npy" % (name, target))
        run([args.flashc, "run", src, "--target=" + target, "--arg",
             "X=" + xfile, "--arg", "Y=" + yfile, "--out", "Y=" + out])
        got = np.load(out).astype(np.float64)
        err = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30))
        if not np.all(np.isfinite(got)) or err > REL_TOL:
            sys.exit("FAIL %s %s: max relative error %.3g (> %g)"
                     % (name, target, err, REL_TOL))
        results[target] = got
        print("PASS %s %s: max relative error %.3g" % (name, target, err))
    if args.ptxas:
        for arch in ("sm_80", "sm_90"):
            ptx = os.path.join(args.workdir, "%s-%s.ptx" % (name, arch))
            run([args.flashc, src, "--arch=" + arch, "-o", ptx])
            run([args.ptxas, "-arch=" + arch, ptx, "-o", ptx + ".cubin"])
        print("PASS %s ptx: ptxas accepts sm_80 and sm_90" % name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--ptxas")
    ap.add_argument("--only", help="one builtin")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    for name, (reference, transform) in BUILTINS.items():
        if args.only in (None, name):
            check(args, name, reference, transform)


if __name__ == "__main__":
    main()
