#!/usr/bin/env python3
"""Runs FlashAttention-2's backward kernels of kernels/ (docs/kernels.md)
through `flashc run` on the interpreter and on the emulator and checks dQ, dK
and dV against the analytic gradient in float64, and the emulator's against
the interpreter's.

  check_backward.py --flashc F --workdir W [--bf16] [-D X=V]...
                    [--B --H --H_KV --Nq --Nk --D --DV N] [--q-scale X]
                    [--flashc-flag=OPTION]... [--alibi] [--varlen Q_LENGTHS K_LENGTHS]
                    [--dropout P]

The -D options go to flash_attn_bwd and flash_attn_bwd_dq (CAUSAL,
WINDOW_LEFT, WINDOW_RIGHT, SOFTCAP, blocks); the reference follows
flash_attn_func's mask (check_variant.py's `visible`) and soft-cap (the
scaled scores s become SOFTCAP * tanh(s / SOFTCAP)). --DV gives V, O and dO
a head dim of their own (HEAD_DIM_V, also to the preprocess).

--varlen "7,40,1" "20,3,50" runs the packed kernels (flash_attn_varlen_bwd,
flash_attn_varlen_bwd_dq; the preprocess and the convert on the packed
tensors as one batch): one sequence per length pair, its rows one after
another in [1, H, TotalQ, D] (and TotalK), each sequence's reference taken
on its own. Inputs: random Q, K, V, dO (never
zero); O and the log-sum-exp come from the float64 forward (O rounded to
the operands' type, LSE to f32, +inf for rows that see no key), as
flash_attn_lse would give them. Outputs are poisoned with NaN (DQaccum too:
flash_attn_bwd_preprocess must zero it).

--alibi runs the ALiBi kernels (flash_attn_bwd_alibi, flash_attn_bwd_dq_alibi;
with --varlen the packed ones with ALIBI=true)
with random Slopes [B, H]; the reference biases the scaled scores by
-Slopes[b, h] * |i + Nk - Nq - j| (flash_attn_func's alibi_slopes).

--dropout P runs the dropout kernels (flash_attn_bwd_dropout,
flash_attn_bwd_dq_dropout; ALiBi by ALIBI=true, Slopes always) with the
forward's Rng for probability P: the reference keeps check_dropout.py's
mask (NumPy's Philox) and scales the kept p and dp by 1 / (1 - P), as the
forward's O does (dV takes the dropped p, dS = p * (dropped dp - Delta)).

Two dQ paths run on each target: the atomic one (preprocess, flash_attn_bwd,
flash_attn_bwd_dq_convert) and the deterministic one (flash_attn_bwd with
DETERMINISTIC=true, flash_attn_bwd_dq). Both are checked against float64 and
against each other: they sum the same f32 products in another order, so
they must agree to 2 units in the last place of the operands' type.

Tolerances (relative L2 over the tensor; max abs per unit of the tensor's
largest magnitude; where the terms of a gradient cancel, as with a single
visible key, both per one unit in the last place of the same sum taken
over the terms' magnitudes): f16 2e-3 and 4e-3, bf16 8 times coarser (3 fewer
mantissa bits). p and ds are rounded to the operands' type before the
second MMAs (relative error 2^-11 in f16), sums are f32; the kernels land
near 3e-4 (f16) and 3e-3 (bf16). Gradients that must be zero (dq of rows
that see no key, dk and dv of keys no row sees) must be exactly 0.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from scratch import remove_scratch

from check_dropout import keep_mask
from check_variant import add_run_args, nonzero_normal, shapes, visible


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_args(ap, "an option for every `flashc run` (e.g. --arch=sm_90a)")
    ap.add_argument("--q-scale", type=float, default=1.0)
    ap.add_argument("--DV", type=int, default=0, help="v's head dim (default D)")
    ap.add_argument("--alibi", action="store_true", help="the ALiBi kernels, Slopes [B, H]")
    ap.add_argument("--varlen", nargs=2, metavar=("Q_LENGTHS", "K_LENGTHS"),
                    help="packed sequences of these query and key lengths")
    ap.add_argument("--dropout", type=float, default=0.0, metavar="P",
                    help="the dropout kernels, dropout probability P")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def reference(x, mask, s, softcap=0.0, keep=None):
    """float64 (O, LSE, dQ, dK, dV) of attention with mask [Nq, Nk], the
    scaled scores soft-capped to softcap * tanh(s / softcap) when softcap > 0,
    and with keep ([B, H, Nq, Nk]) the weights dropped where it is false and
    scaled by 1 / (1 - P) (Rng's threshold) where it is true."""
    group = s["H"] // s["H_KV"]
    q, k, v, d_o = (x[n].astype(np.float64) for n in ("Q", "K", "V", "DO"))
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = x["sm_scale"]
    scores = np.einsum("bhid,bhjd->bhij", q, k) * scale
    dtanh = 1.0
    if softcap > 0:
        t = np.tanh(scores / softcap)
        scores, dtanh = softcap * t, 1 - t * t
    if "Slopes" in x:
        nq, nk = scores.shape[2:]
        dist = np.abs(np.arange(nq)[:, None] + (nk - nq) - np.arange(nk)[None, :])
        scores = scores - x["Slopes"].astype(np.float64)[:, :, None, None] * dist
    scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)
    seen = np.isfinite(row_max)
    p = np.where(mask, np.exp(scores - np.where(seen, row_max, 0)), 0.0)
    total = np.where(seen, p.sum(axis=-1, keepdims=True), 1)
    p = p / total
    dropped = lambda a: a
    if keep is not None:
        keep_scale = 1 / (1 - int(x["Rng"][3]) / 2 ** 31)
        dropped = lambda a: np.where(keep, a * keep_scale, 0.0)
    out = np.einsum("bhij,bhjd->bhid", dropped(p), v)
    lse = np.where(seen, row_max + np.log(total), np.inf)[..., 0]
    dp = dropped(np.einsum("bhid,bhjd->bhij", d_o, v))
    ds = p * (dp - (d_o * out).sum(axis=-1, keepdims=True)) * dtanh
    dq = np.einsum("bhij,bhjd->bhid", ds, k) * scale
    dk = np.einsum("bhij,bhid->bhjd", ds, q) * scale
    dv = np.einsum("bhij,bhid->bhjd", dropped(p), d_o)
    # The same sums over the terms' magnitudes: where the terms cancel (one
    # visible key makes ds exactly 0), the rounding a kernel may leave is
    # relative to these, not to the gradient.
    ds_terms = p * (np.abs(dp) + np.abs((d_o * out).sum(axis=-1, keepdims=True))) * dtanh
    dq_terms = np.einsum("bhij,bhjd->bhid", ds_terms, np.abs(k)) * scale
    dk_terms = np.einsum("bhij,bhid->bhjd", ds_terms, np.abs(q)) * scale
    shape = dk.shape[:1] + (s["H_KV"], group) + dk.shape[2:]
    shape_v = dv.shape[:1] + (s["H_KV"], group) + dv.shape[2:]
    grads = (dq, dk.reshape(shape).sum(2), dv.reshape(shape_v).sum(2))
    terms = (dq_terms, dk_terms.reshape(shape).sum(2), grads[2])
    return out, lse, grads, terms


class Runner:
    """flashc run of the backward kernels on one target."""

    def __init__(self, args, half, target):
        self.args, self.half, self.target = args, half, target
        self.tag = "bwd-%d-%s" % (os.getpid(), target)
        self.files = {}

    def path(self, name):
        return os.path.join(self.args.workdir, "%s-%s.npy" % (self.tag, name))

    def put(self, name, value):
        np.save(self.path(name), value)
        self.files[name] = self.path(name)

    def get(self, name):
        out = np.load(self.files[name])
        return out.view(self.half) if out.dtype.kind == "V" else out

    def run(self, kernel, params, outs, defines):
        source = os.path.join(self.args.kernels_dir, kernel + ".tile")
        cmd = [self.args.flashc, "run", source, "--target=" + self.target]
        if self.args.bf16:
            cmd += ["-D", "T=bf16"]
        cmd += self.args.flashc_flags
        for dfn in defines:
            cmd += ["-D", dfn]
        for name in params:
            value = self.files.get(name, None)
            cmd += ["--arg", "%s=%s" % (name, value if value else repr(self.scalars[name]))]
        for name in outs:
            out = self.path("%s-out-%s" % (name, kernel))
            cmd += ["--out", "%s=%s" % (name, out)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("FAIL %s on %s: flashc exited %d\n$ %s\n%s%s" % (
                kernel, self.target, done.returncode, " ".join(cmd), done.stdout,
                done.stderr))
        for name in outs:
            self.files[name] = self.path("%s-out-%s" % (name, kernel))


def problem(args, defines, s, rng, softcap):
    """The inputs x (kernel layout), the float64 gradients and their terms'
    sums, the masks of gradients that must be 0, and the cu_seqlens of a
    packed batch (None otherwise)."""
    causal = defines.get("CAUSAL", "false") == "true"
    left, right = int(defines.get("WINDOW_LEFT", -1)), int(defines.get("WINDOW_RIGHT", -1))
    normal = nonzero_normal(rng, args.bf16)
    h, hkv, d, dv = s["H"], s["H_KV"], s["D"], args.DV or s["D"]
    sm_scale = float(np.float32(1 / np.sqrt(d)))

    def inputs(b, nq, nk):
        x = {"Q": normal((b, h, nq, d), args.q_scale), "K": normal((b, hkv, nk, d)),
             "V": normal((b, hkv, nk, dv)), "DO": normal((b, h, nq, dv)), "sm_scale": sm_scale}
        if args.alibi:
            x["Slopes"] = (rng.random((b, h)) * 0.5 + 0.05).astype(np.float32)
        keep = None
        if args.dropout:
            x["Rng"] = np.array([0x1234567, -0x2345678, 3, int(args.dropout * 2 ** 31)],
                                np.int32)
            keep = keep_mask(x["Rng"], b, h, nq, nk)
        mask = visible(nq, nk, causal, left, right)
        out, lse, grads, terms = reference(x, mask, dict(s, B=b), softcap, keep)
        x["O"], x["LSE"] = out.astype(x["Q"].dtype), lse.astype(np.float32)
        zero = {"DQ": ~mask.any(axis=1)[None, None, :, None],
                "DK": ~mask.any(axis=0)[None, None, :, None]}
        zero["DV"] = zero["DK"]
        names = ("DQ", "DK", "DV")
        return x, dict(zip(names, grads)), dict(zip(names, terms)), zero

    if not args.varlen:
        x, grads, terms, zero = inputs(s["B"], s["Nq"], s["Nk"])
        if args.dropout and not args.alibi:
            x["Slopes"] = np.full((1, h), np.nan, np.float32)  # one row, not read
        return x, grads, terms, zero, None
    if args.dropout:
        sys.exit("--dropout takes no --varlen")
    q_lengths, k_lengths = ([int(n) for n in a.split(",")] for a in args.varlen)
    if len(q_lengths) != len(k_lengths):
        sys.exit("--varlen: as many query lengths as key lengths")
    # Each sequence on its own, then packed along the rows (dim 2).
    parts = [inputs(1, nq, nk) for nq, nk in zip(q_lengths, k_lengths)]
    x = {n: np.concatenate([p[0][n] for p in parts], axis=2)
         for n in parts[0][0] if n not in ("sm_scale", "Slopes")}
    # Sequence b's slopes are row b of Slopes [B, H]; without ALiBi one NaN
    # row, not read.
    x["Slopes"] = (np.concatenate([p[0]["Slopes"] for p in parts]) if args.alibi
                   else np.full((1, h), np.nan, np.float32))
    x["sm_scale"] = sm_scale
    packed = tuple({n: np.concatenate([p[i][n] for p in parts], axis=2)
                    for n in ("DQ", "DK", "DV")} for i in (1, 2, 3))
    cu = tuple(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
               for lengths in (q_lengths, k_lengths))
    return (x,) + packed + (cu,)


def main():
    args = parse_args()
    defines = dict(d.split("=", 1) for d in args.defines)
    s = shapes(args)
    rng = np.random.default_rng(args.seed)
    softcap = float(defines.get("SOFTCAP", 0))
    x, refs, floors, zero, cu = problem(args, defines, s, rng, softcap)
    h, hkv, d = s["H"], s["H_KV"], s["D"]
    dv = args.DV or d
    b, nq, nk = x["Q"].shape[0], x["Q"].shape[2], x["K"].shape[2]
    half = x["Q"].dtype.type
    os.makedirs(args.workdir, exist_ok=True)
    dims = ([] if d == 64 else ["HEAD_DIM=%d" % d]) + ([] if dv == d else ["HEAD_DIM_V=%d" % dv])
    kernel_defines = args.defines + dims
    # The packed and the dropout kernels take ALiBi as a constant (and
    # Slopes always).
    suffix = "_dropout" if args.dropout else "_alibi" if args.alibi and not args.varlen else ""
    if args.alibi and (args.varlen or args.dropout):
        kernel_defines = kernel_defines + ["ALIBI=true"]
    prefix = "flash_attn_varlen" if args.varlen else "flash_attn"
    shape = " ".join("%s=%d" % kv for kv in s.items())
    if args.varlen:
        shape = "H=%d H_KV=%d D=%d q_lengths=%s k_lengths=%s" % (h, hkv, d, *args.varlen)
    what = "%sbwd%s%s%s %s%s %s" % ("varlen_" if args.varlen else "",
                                   "_alibi" if args.alibi else "",
                                   "_dropout p=%g" % args.dropout if args.dropout else "",
                                   " bf16" if args.bf16 else "", shape,
                                   " DV=%d" % dv if dv != d else "", " ".join(args.defines))
    tol = (1.6e-2, 3.2e-2) if args.bf16 else (2e-3, 4e-3)
    ulp = 2.0 ** (-7 if args.bf16 else -10)

    def check(name, got, want):
        unwritten = int(np.count_nonzero(~np.isfinite(got)))
        floor = floors[name] * ulp
        scale = max(float(np.abs(want).max()), float(floor.max()), 1e-30)
        rel = np.linalg.norm(got - want) / max(np.linalg.norm(want), np.linalg.norm(floor),
                                               1e-30)
        worst = float(np.abs(got - want).max()) / scale
        nonzero = int(np.count_nonzero(np.broadcast_to(zero[name], got.shape) & (got != 0)))
        ok = unwritten == 0 and nonzero == 0 and rel < tol[0] and worst < tol[1]
        return ok, "%s rel %.1e max abs %.1e non-finite %d nonzero where 0: %d" % (
            name, rel, worst, unwritten, nonzero)

    ok = True
    results = {}
    for target in ("interp", "emulate"):
        run = Runner(args, half, target)
        run.scalars = {"sm_scale": x["sm_scale"]}
        with_slopes = args.alibi or args.varlen or args.dropout
        for name in (("Q", "K", "V", "DO", "O", "LSE") + (("Slopes",) if with_slopes else ())
                     + (("Rng",) if args.dropout else ())):
            run.put(name, x[name])
        packed = []
        if cu is not None:
            run.put("cu_seqlens_q", cu[0])
            run.put("cu_seqlens_k", cu[1])
            run.scalars["max_seqlen_q"] = int(np.diff(cu[0]).max())
            run.scalars["max_seqlen_k"] = int(np.diff(cu[1]).max())
            packed = ["cu_seqlens_q", "cu_seqlens_k"]
        for name, shape, dtype in (("Delta", (b, h, nq), np.float32),
                                   ("DQaccum", (b, h, nq, d), np.float32),
                                   ("DQ", (b, h, nq, d), half), ("DK", (b, hkv, nk, d), half),
                                   ("DV", (b, hkv, nk, dv), half)):
            run.put(name, np.full(shape, np.nan, dtype))
        poisoned = dict(run.files)
        run.run("flash_attn_bwd_preprocess", ["O", "DO", "Delta", "DQaccum"],
                ["Delta", "DQaccum"], dims)
        tables = (["Slopes"] if with_slopes else []) + (["Rng"] if args.dropout else [])
        bwd = (["Q", "K", "V", "DO", "LSE", "Delta", "DQaccum"] + packed + ["DK", "DV"]
               + (["max_seqlen_k"] if packed else []) + ["sm_scale"] + tables)
        run.run(prefix + "_bwd" + suffix, bwd, ["DQaccum", "DK", "DV"], kernel_defines)
        run.run("flash_attn_bwd_dq_convert", ["DQaccum", "DQ", "sm_scale"], ["DQ"],
                [dfn for dfn in dims if dfn.startswith("HEAD_DIM=")])
        got = {n: run.get(n).astype(np.float64) for n in ("DQ", "DK", "DV")}
        for name in ("DK", "DV", "DQ"):
            run.files[name] = poisoned[name]
        run.files["DQaccum"] = poisoned["DQaccum"]
        run.run(prefix + "_bwd" + suffix, bwd, ["DK", "DV"],
                kernel_defines + ["DETERMINISTIC=true"])
        run.run(prefix + "_bwd_dq" + suffix,
                ["Q", "K", "V", "DO", "LSE", "Delta"] + packed + ["DQ"]
                + (["max_seqlen_q"] if packed else []) + ["sm_scale"] + tables,
                ["DQ"], kernel_defines)
        det = {n: run.get(n).astype(np.float64) for n in ("DQ", "DK", "DV")}
        accum = run.get("DQaccum")
        for name in ("DQ", "DK", "DV"):
            good, line = check(name, got[name], refs[name])
            if target == "emulate":
                same, vs = check(name, got[name], results[name])
                good, line = good and same, line + "; vs interp: " + vs.split(" ", 1)[1]
            results[name] = got[name]
            diff = np.abs(det[name] - got[name])
            bound = 2 * ulp * np.maximum(np.abs(got[name]), 2.0 ** -14)
            agree = bool((diff <= bound).all())
            good = good and agree
            line += "; deterministic vs atomic: max %.1e%s" % (
                float(diff.max()), "" if agree else " (beyond 2 ulp)")
            ok = ok and good
            print("%s %s on %s: %s" % ("PASS" if good else "FAIL", what, target, line))
        if not np.isnan(accum).all():
            print("FAIL %s on %s: DETERMINISTIC wrote DQaccum" % (what, target))
            ok = False
    remove_scratch(args.workdir, "bwd-%d-" % os.getpid())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
