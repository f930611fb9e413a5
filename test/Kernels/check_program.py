#!/usr/bin/env python3
"""Runs a small test program of test/Kernels/Inputs through `flashc run` and
checks every output against float64, on the interpreter and on the emulator.

  check_program.py --flashc F --program NAME --workdir W [-D X=V]... [--size S=N]...

NAME is a program of Inputs/ (NAME.tile); its inputs, outputs and float64
reference are defined below. --size sets the tensors' symbolic dims (M, N,
K, NB; B, H, Nq, Nk for attention). Each target (interp, then emulate) runs
with random inputs (never zeros) and outputs poisoned with NaN (floats) or a
sentinel (i32), so an element the kernel never writes fails. The emulator
also checks every access (out of bounds, races); its outputs must agree with
the interpreter's.

Tolerances: f16 inputs, f32 accumulation. Products of two f16 are exact in
f32 and a K-term sum loses at most K * 2^-24 relative, so f32 results
compare within 1e-5 relative (L2) and 1e-4 absolute for |values| < 64. f16
results (reductions rounded once, attention) compare within 2e-3 relative
and 1e-2 absolute, as fa2 in check_kernel.py. i32 results are exact.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from scratch import remove_scratch

I32_POISON = -123456789


def f16(rng, shape):
    return rng.standard_normal(shape).astype(np.float16)


def f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def prog_dot(rng, s, d):
    a, b = f16(rng, (s["M"], s["K"])), f16(rng, (s["K"], s["N"]))
    return {"A": a, "B": b}, {"C": ("f32", (s["M"], s["N"]))}, \
        {"C": a.astype(np.float64) @ b.astype(np.float64)}


def prog_dot_nt(rng, s, d):
    bk = d.get("BK", 16)
    a, b = f16(rng, (s["M"], bk)), f16(rng, (s["N"], bk))
    return {"A": a, "B": b}, {"C": ("f32", (s["M"], s["N"]))}, \
        {"C": a.astype(np.float64) @ b.astype(np.float64).T}


def prog_broadcast(rng, s, d):
    m, n, bk = s["M"], s["N"], d.get("BK", 16)
    a, b = f16(rng, (m, bk)), f16(rng, (bk, n))
    row, col, scale = f32(rng, (1, n)), f32(rng, (m, 1)), f32(rng, (1, 1))
    diff = np.arange(n)[None, :] - np.arange(m)[:, None]
    y = (a.astype(np.float64) @ b.astype(np.float64)) * scale[0, 0] + row + col * diff
    return {"A": a, "B": b, "Row": row, "Col": col, "Scale": scale}, \
        {"C": ("f32", (m, n))}, {"C": np.where(diff >= 0, y, -y)}


def prog_reduce(rng, s, d):
    m, n, bk = s["M"], s["N"], d.get("BK", 16)
    a, b = f16(rng, (m, bk)), f16(rng, (bk, n))
    prod = a.astype(np.float64) @ b.astype(np.float64)
    index = np.arange(m)[:, None] + 2 * np.arange(n)[None, :]
    return {"A": a, "B": b}, \
        {"RowSum": ("f32", (m,)), "ColMax": ("f32", (n,)),
         "RowMaxA": ("f16", (m,)), "ColSumI": ("i32", (n,))}, \
        {"RowSum": prod.sum(axis=1), "ColMax": prod.max(axis=0),
         "RowMaxA": a.astype(np.float64).max(axis=1),
         "ColSumI": np.where(prod > 0, index, 0).sum(axis=0)}


def prog_cube(rng, s, d):
    nb, m, n, bk = s["NB"], s["M"], s["N"], d.get("BK", 16)
    x, a, b, v = f32(rng, (nb, m, n)), f16(rng, (m, bk)), f16(rng, (bk, n)), \
        f32(rng, (n,))
    x64 = x.astype(np.float64)
    y = a.astype(np.float64) @ b.astype(np.float64) + x64.sum(axis=0) + v
    return {"X": x, "A": a, "B": b, "V": v}, \
        {"Y": ("f32", (m, n)), "Z": ("f32", (nb, m, n)), "W": ("f32", (nb, m))}, \
        {"Y": y, "Z": 2 * x64 + v, "W": x64.max(axis=2)}


def prog_alibi(rng, s, d):
    b, h, nq, nk, dim = s["B"], s["H"], s["Nq"], s["Nk"], d.get("HEAD_DIM", 64)
    q, k, v = f16(rng, (b, h, nq, dim)), f16(rng, (b, h, nk, dim)), \
        f16(rng, (b, h, nk, dim))
    slopes = (rng.random((h, 1)) * 0.5).astype(np.float32)
    sm_scale = np.float32(1.0 / np.sqrt(dim))
    scores = np.einsum("bhid,bhjd->bhij", q.astype(np.float64),
                       k.astype(np.float64)) * float(sm_scale)
    distance = np.arange(nk)[None, :] - np.arange(nq)[:, None]
    scores = scores + slopes.astype(np.float64)[None, :, :, None] * distance
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = np.einsum("bhij,bhjd->bhid", p / p.sum(axis=-1, keepdims=True),
                    v.astype(np.float64))
    return {"Q": q, "K": k, "V": v, "Slopes": slopes,
            "sm_scale": float(sm_scale)}, \
        {"O": ("f16", (b, h, nq, dim))}, {"O": out}


def prog_attention_lse(rng, s, d):
    b, h, nq, nk, dim = s["B"], s["H"], s["Nq"], s["Nk"], d.get("HEAD_DIM", 64)
    q, k, v = f16(rng, (b, h, nq, dim)), f16(rng, (b, h, nk, dim)), \
        f16(rng, (b, h, nk, dim))
    sm_scale = np.float32(1.0 / np.sqrt(dim))
    scores = np.einsum("bhid,bhjd->bhij", q.astype(np.float64),
                       k.astype(np.float64)) * float(sm_scale)
    row_max = scores.max(axis=-1, keepdims=True)
    p = np.exp(scores - row_max)
    out = np.einsum("bhij,bhjd->bhid", p / p.sum(axis=-1, keepdims=True),
                    v.astype(np.float64))
    lse = row_max[..., 0] + np.log(p.sum(axis=-1))
    return {"Q": q, "K": k, "V": v, "sm_scale": float(sm_scale)}, \
        {"O": ("f16", (b, h, nq, dim)), "LSE": ("f32", (b, h, nq))}, \
        {"O": out, "LSE": lse}


def prog_flex_attention(rng, s, d, doc_tensor=False):
    """flex_attention.tile and flex_attention_lib.tile: VARIANT 1 subtracts SLOPE * (h + 1) * |i - j| from
    the scaled scores and keeps keys with 0 <= i - j <= WINDOW; VARIANT 2
    keeps the window only; VARIANT 0 is plain attention; VARIANT 3
    (flex_attention_lib.tile) keeps keys j <= i of the query's document,
    Doc[i] == Doc[j], where Doc numbers runs of 1 to 40 tokens. SLOPE is
    the kernel's default (0.125): -D passes integers here."""
    b, h, nq, nk, dim = s["B"], s["H"], s["Nq"], s["Nk"], d.get("HEAD_DIM", 64)
    variant, window, slope = d.get("VARIANT", 1), d.get("WINDOW", 24), 0.125
    q, k, v = f16(rng, (b, h, nq, dim)), f16(rng, (b, h, nk, dim)), \
        f16(rng, (b, h, nk, dim))
    sm_scale = np.float32(1.0 / np.sqrt(dim))
    scores = np.einsum("bhid,bhjd->bhij", q.astype(np.float64),
                       k.astype(np.float64)) * float(sm_scale)
    behind = np.arange(nq)[:, None] - np.arange(nk)[None, :]
    if variant == 1:
        slopes = slope * (np.arange(h) + 1.0)
        scores = scores - slopes[None, :, None, None] * np.abs(behind)
    if variant in (1, 2):
        scores = np.where((behind >= 0) & (behind <= window), scores, -np.inf)
    doc = np.repeat(np.arange(nk), rng.integers(1, 41, nk))[:nk].astype(np.int32)
    if variant == 3:
        same = doc[:nq, None] == doc[None, :]
        scores = np.where(same & (behind >= 0), scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    p = np.exp(scores - row_max)
    out = np.einsum("bhij,bhjd->bhid", p / p.sum(axis=-1, keepdims=True),
                    v.astype(np.float64))
    inputs = {"Q": q, "K": k, "V": v, "sm_scale": float(sm_scale)}
    if doc_tensor:
        inputs["Doc"] = doc
    return inputs, {"O": ("f16", (b, h, nq, dim))}, {"O": out}


PROGRAMS = {
    "dot": prog_dot, "dot_tiled": prog_dot, "dot_nt": prog_dot_nt, "broadcast": prog_broadcast,
    "reduce": prog_reduce, "reduce_tiled": prog_reduce, "cube": prog_cube, "alibi": prog_alibi,
    "alibi_tiled": prog_alibi, "attention_lse": prog_attention_lse,
    "flex_attention": prog_flex_attention,
    "flex_attention_lib": lambda rng, s, d: prog_flex_attention(rng, s, d, doc_tensor=True),
}
DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32}


def poisoned(kind, shape):
    if kind == "i32":
        return np.full(shape, I32_POISON, np.int32)
    return np.full(shape, np.nan, DTYPES[kind])


def compare(kind, out, ref):
    """(ok, description) of one output against its reference."""
    if kind == "i32":
        bad = int(np.count_nonzero(out.astype(np.int64) != ref.astype(np.int64)))
        return bad == 0, "%d of %d differ" % (bad, out.size)
    out = out.astype(np.float64)
    unwritten = int(np.count_nonzero(~np.isfinite(out)))
    err = out - ref
    norm = np.linalg.norm(ref)
    rel = np.linalg.norm(err) / norm if norm > 0 else np.linalg.norm(err)
    max_abs = float(np.max(np.abs(err))) if err.size else 0.0
    rel_tol, abs_tol = (2e-3, 1e-2) if kind == "f16" else (1e-5, 1e-4)
    ok = unwritten == 0 and rel < rel_tol and max_abs < abs_tol
    return ok, "rel %.1e max abs %.1e non-finite %d" % (rel, max_abs, unwritten)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--program", required=True, choices=sorted(PROGRAMS))
    ap.add_argument("--workdir", required=True)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--size", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    sizes = {"M": 16, "N": 16, "K": 16, "NB": 2, "B": 1, "H": 2, "Nq": 16,
             "Nk": 16}
    sizes.update({k: int(v) for k, v in (x.split("=") for x in args.size)})
    defines = {k: int(v) for k, v in (x.split("=") for x in args.defines)}
    rng = np.random.default_rng(args.seed)
    inputs, outputs, refs = PROGRAMS[args.program](rng, sizes, defines)
    os.makedirs(args.workdir, exist_ok=True)
    tag = "%s-%d" % (args.program, os.getpid())
    path = lambda name: os.path.join(args.workdir, "%s-%s.npy" % (tag, name))
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs",
                           args.program + ".tile")
    what = "%s %s %s" % (args.program, " ".join(args.defines),
                         " ".join("%s=%d" % kv for kv in sorted(sizes.items())))

    results = {}
    ok = True
    for target in ("interp", "emulate"):
        cmd = [args.flashc, "run", program, "--target=" + target]
        for d in args.defines:
            cmd += ["-D", d]
        for name, value in inputs.items():
            if isinstance(value, float):  # a scalar parameter
                cmd += ["--arg", "%s=%r" % (name, value)]
                continue
            np.save(path(name), value)
            cmd += ["--arg", "%s=%s" % (name, path(name))]
        for name, (kind, shape) in outputs.items():
            np.save(path(name), poisoned(kind, shape))
            cmd += ["--arg", "%s=%s" % (name, path(name)),
                    "--out", "%s=%s" % (name, path("out-" + name))]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print("FAIL %s on %s: flashc exited %d\n$ %s\n%s%s" % (
                what, target, done.returncode, " ".join(cmd), done.stdout,
                done.stderr))
            return 1
        results[target] = {}
        for name, (kind, shape) in outputs.items():
            out = np.load(path("out-" + name))
            results[target][name] = out
            good, line = compare(kind, out, refs[name])
            if target == "emulate":
                same, vs = compare(kind, out, results["interp"][name].astype(
                    np.float64) if kind != "i32" else results["interp"][name])
                good, line = good and same, line + "; vs interp: " + vs
            ok = ok and good
            print("%s %s on %s: %s %s" % ("PASS" if good else "FAIL", what,
                                          target, name, line))
    remove_scratch(args.workdir, tag)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
