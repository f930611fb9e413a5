#!/usr/bin/env python3
"""Runs a kernel of kernels/ through `flashc run` and checks it against float64.

With --target other than interp, the output must also agree with the
tile-level interpreter's (--target=interp) within the same tolerance.

Inputs are random (never zeros) and outputs are poisoned with NaN before the
run, so an element the kernel never writes fails the check. The reference is
computed in float64 from the very f16/f32 values the kernel reads.

Tolerances (f16 inputs, f32 accumulation):
  fa2: ||out - ref|| / ||ref|| < 2e-3 and max |out - ref| < 1e-2. The output is
       rounded to f16 once (relative error <= 2^-11 ~ 4.9e-4 per element) and
       P is rounded to f16 before P*V (another 2^-11 per term, averaging out
       over the keys); f32 accumulation adds ~1e-7. Unit-variance inputs give
       |out| < 4, so 1e-2 is ~5 f16 ulps of the largest outputs.
  fa1: as fa2 but 4e-3 relative: FlashAttention-1 writes O back to global
       memory in f16 after every K/V block, one more f16 rounding per block.
  softmax, online_softmax: f32 in and out, f32 arithmetic: 1e-5 relative.
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np

TOLERANCES = {  # kernel: (relative L2 error, max abs error)
    "fa2": (2e-3, 1e-2),
    "fa1": (4e-3, 1e-2),
    "softmax": (1e-5, 1e-6),
    "online_softmax": (1e-5, 1e-6),
}


def attention_reference(q, k, v, sm_scale, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    nq, nk = q.shape[2], k.shape[2]
    s = np.einsum("bhid,bhjd->bhij", q, k) * sm_scale
    if causal:  # bottom-right: row i sees key j iff j <= i + nk - nq
        i = np.arange(nq)[:, None]
        j = np.arange(nk)[None, :]
        s = np.where(j <= i + nk - nq, s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    sees_a_key = np.isfinite(row_max)
    p = np.exp(s - np.where(sees_a_key, row_max, 0.0))
    denom = p.sum(axis=-1, keepdims=True)
    out = np.einsum("bhij,bhjd->bhid", p, v) / np.where(sees_a_key, denom, 1.0)
    return np.where(sees_a_key, out, 0.0)


def softmax_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def parse_defines(defines):
    values = {}
    for d in defines:
        name, _, value = d.partition("=")
        values[name] = value
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernel", required=True, choices=sorted(TOLERANCES))
    ap.add_argument("--kernels-dir",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", "kernels"))
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--target", default="interp")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--B", type=int, default=1)
    ap.add_argument("--H", type=int, default=1)
    ap.add_argument("--Nq", type=int, default=64)
    ap.add_argument("--Nk", type=int, default=64)
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--rows", type=int, default=33)
    ap.add_argument("--cols", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    os.makedirs(args.workdir, exist_ok=True)
    tag = "%s-%d" % (args.kernel, os.getpid())
    path = lambda name: os.path.join(args.workdir, "%s-%s.npy" % (tag, name))
    defines = parse_defines(args.defines)
    cmd = [args.flashc, "run", os.path.join(args.kernels_dir, args.kernel + ".tile"),
           "--target=" + args.target]
    for d in args.defines:
        cmd += ["-D", d]

    if args.kernel in ("fa1", "fa2"):
        causal = defines.get("CAUSAL", "false") == "true"
        head_dim = int(defines.get("HEAD_DIM", "64"))
        if head_dim != args.D:
            cmd += ["-D", "HEAD_DIM=%d" % args.D]
        qshape = (args.B, args.H, args.Nq, args.D)
        kshape = (args.B, args.H, args.Nk, args.D)
        q = rng.standard_normal(qshape).astype(np.float16)
        k = rng.standard_normal(kshape).astype(np.float16)
        v = rng.standard_normal(kshape).astype(np.float16)
        sm_scale = 1.0 / math.sqrt(args.D)
        inputs = {"Q": q, "K": k, "V": v, "O": np.full(qshape, np.nan, np.float16)}
        if args.kernel == "fa1":  # workspaces: contents on entry do not matter
            inputs["L"] = np.full(qshape[:3], np.nan, np.float32)
            inputs["M"] = np.full(qshape[:3], np.nan, np.float32)
        ref = attention_reference(q, k, v, np.float32(sm_scale), causal)
        scalars = {"sm_scale": repr(float(np.float32(sm_scale)))}
        out_name = "O"
        what = "B=%d H=%d Nq=%d Nk=%d D=%d causal=%s" % (
            args.B, args.H, args.Nq, args.Nk, args.D, causal)
    else:
        x = (rng.standard_normal((args.rows, args.cols)) * 3).astype(np.float32)
        inputs = {"X": x, "Y": np.full(x.shape, np.nan, np.float32)}
        ref = softmax_reference(x)
        scalars = {}
        out_name = "Y"
        what = "R=%d C=%d" % (args.rows, args.cols)

    for name, array in inputs.items():
        np.save(path(name), array)
        cmd += ["--arg", "%s=%s" % (name, path(name))]
    for name, value in scalars.items():
        cmd += ["--arg", "%s=%s" % (name, value)]

    def run(target):
        """The output of one flashc run target (poisoned inputs reused)."""
        target_cmd = [c if c != "--target=" + args.target else "--target=" + target
                      for c in cmd]
        target_cmd += ["--out", "%s=%s" % (out_name, path("out-" + target))]
        done = subprocess.run(target_cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print("FAIL %s %s: flashc exited %d\n$ %s\n%s%s" % (
                args.kernel, what, done.returncode, " ".join(target_cmd),
                done.stdout, done.stderr))
            return None
        result = np.load(path("out-" + target)).astype(np.float64)
        os.remove(path("out-" + target))
        return result

    def compare(out, expected):
        err = out - expected
        norm = np.linalg.norm(expected)
        rel = np.linalg.norm(err) / norm if norm > 0 else np.linalg.norm(err)
        return rel, (float(np.max(np.abs(err))) if err.size else 0.0)

    # Other targets run the lowered kernel: they must also agree with the
    # interpreter (the tile program's semantics), within the same tolerance
    # (they differ only in rounding order).
    targets = [args.target] + (["interp"] if args.target != "interp" else [])
    outs = {t: run(t) for t in targets}
    for name in inputs:
        os.remove(path(name))
    if any(o is None for o in outs.values()):
        return 1

    rel_tol, abs_tol = TOLERANCES[args.kernel]
    out = outs[args.target]
    unwritten = int(np.count_nonzero(~np.isfinite(out)))
    rel, max_abs = compare(out, ref)
    ok = unwritten == 0 and rel < rel_tol and max_abs < abs_tol
    line = "%s %s: rel %.2e (< %.0e), max abs %.2e (< %.0e), non-finite %d" % (
        args.target, what, rel, rel_tol, max_abs, abs_tol, unwritten)
    if "interp" in outs and args.target != "interp":
        rel_i, max_i = compare(out, outs["interp"])
        ok = ok and rel_i < rel_tol and max_i < abs_tol
        line += "; vs interp: rel %.2e, max abs %.2e" % (rel_i, max_i)
    print("%s %s %s" % ("PASS" if ok else "FAIL", args.kernel, line))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
