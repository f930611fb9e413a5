#!/usr/bin/env python3
"""Runs an attention variant of kernels/ (docs/kernels.md) through `flashc run`
on the interpreter and on the emulator and checks every output against a
float64 reference, and the emulator's against the interpreter's.

  check_variant.py --flashc F --kernel NAME --workdir W [--bf16] [-D X=V]...
                   [--B --H --H_KV --Nq --Nk --D --DV N] [--q-scale X] [--mask-rows]
                   [--expect-error] [--dv-undeclared] [--shared-slopes]

NAME is a kernel of kernels/ (NAME.tile; with --bf16 -D T=bf16). The
reference reads the -D options the kernel is compiled with (CAUSAL,
WINDOW_LEFT, WINDOW_RIGHT, SOFTCAP) and follows FlashAttention-2's
flash_attn_func: row i sees key j iff j <= i + Nk - Nq + right and j >= i +
Nk - Nq - left (each bound when >= 0; causal is right = 0), and so on. Inputs
are random and never zero (--q-scale multiplies Q: large scores); outputs are
poisoned with NaN, so an element the kernel never writes fails. Rows that
see no key must give O = 0 and LSE = +inf. --mask-rows masks every key of
batch 0 in the key-padding kernel. --DV gives V and O a head dim of their
own (HEAD_DIM_V; so does -D HEAD_DIM_V=N without --DV); --dv-undeclared
does not tell the kernel (a shape mismatch, for --expect-error). --expect-error: each target must fail
with exit code 1 (a user error); its message is printed for FileCheck.

Tolerances: O as check_kernel.py's fa2 (f16: 2e-3 relative L2, 1e-2 max abs;
bf16 8 times coarser: 1.6e-2, 8e-2). LSE (f32, from exact f32 products of
half inputs, exp2.approx weights): 1e-5 relative L2 and 1e-4 absolute per
unit of max(1, |lse|); bf16 3e-4 and 8e-4. Where the row sum is added up on
the tensor cores (SUM_BY_MMA, sm_90 and sm_90a at HEAD_DIM 128) it sums P
rounded to the operands' type, which moves the sum by up to one rounding
(2^-12 f16, 2^-9 bf16 relative; measured 2.1e-5 f16, 2.1e-4 bf16 at
flash_attn_lse 77 x 50, 7e-5 relative L2) instead of ~1e-7: hence bf16's
looser bounds.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from scratch import remove_scratch

# Per kernel: its extra inputs and outputs beyond Q, K, V, O, sm_scale.
KERNELS = {
    "flash_attn": {},
    "flash_attn_lse": {"lse": True},
    "flash_attn_alibi": {"alibi": True},
    "flash_attn_alibi_lse": {"alibi": True, "lse": True, "batch_slopes": True},
    "flash_attn_bias": {"bias": True},
    "flash_attn_key_mask": {"key_mask": True},
}


def add_run_args(ap, flag_help):
    """The options of a check that runs kernels with `flashc run`: the
    compiler, the kernels and scratch directories, the type, defines, flashc
    flags (FLAG_HELP), and the sizes B, H, H_KV, Nq, Nk and D."""
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernels-dir",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", "kernels"))
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--flashc-flag", dest="flashc_flags", action="append", default=[],
                    help=flag_help)
    for size, default in (("B", 1), ("H", 2), ("H_KV", 0), ("Nq", 16), ("Nk", 16),
                          ("D", 64)):
        ap.add_argument("--" + size, type=int, default=default)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_args(ap, "an option for `flashc run` (e.g. --defer-loop-sums)")
    ap.add_argument("--kernel", required=True, choices=sorted(KERNELS))
    ap.add_argument("--DV", type=int, default=0, help="V's head dim (default: D)")
    ap.add_argument("--q-scale", type=float, default=1.0)
    ap.add_argument("--mask-rows", action="store_true",
                    help="key-mask kernel: batch 0 sees no key at all")
    ap.add_argument("--dv-undeclared", action="store_true",
                    help="leave HEAD_DIM_V at its default whatever --DV is")
    ap.add_argument("--shared-slopes", action="store_true",
                    help="flash_attn_alibi_lse: Slopes [1, H] (else [B, H])")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--expect-error", action="store_true",
                    help="every target must fail with exit code 1; prints its errors")
    return ap.parse_args()


def defined_dv(defines):
    """V's head dim from a -D HEAD_DIM_V=N option (0 without one)."""
    for dfn in defines:
        name, _, value = dfn.partition("=")
        if name == "HEAD_DIM_V":
            return int(value)
    return 0


def shapes(args):
    """The shape symbols from the command line; H_KV defaults to H."""
    s = {n: getattr(args, n) for n in ("B", "H", "H_KV", "Nq", "Nk", "D")}
    s["H_KV"] = s["H_KV"] or s["H"]
    return s


def nonzero_normal(rng, bf16):
    """normal(shape, scale): random f16 (bf16) inputs with no exact zeros."""
    half = np.float16
    if bf16:
        import ml_dtypes
        half = ml_dtypes.bfloat16

    def normal(shape, scale=1.0):
        a = rng.standard_normal(shape) * scale
        return np.where(a == 0, 0.5, a).astype(half)
    return normal


def visible(nq, nk, causal, left, right):
    """FlashAttention-2's local/causal mask, bottom-right aligned: [nq, nk]."""
    i = np.arange(nq)[:, None] + (nk - nq)
    j = np.arange(nk)[None, :]
    right = 0 if causal else right
    ok = np.ones((nq, nk), bool)
    if left >= 0:
        ok &= j >= i - left
    if right >= 0:
        ok &= j <= i + right
    return ok


def reference(x, opts, s):
    """float64 (O, LSE) of flash_attn_func over the inputs x."""
    b, h, hkv, nq, nk = s["B"], s["H"], s["H_KV"], s["Nq"], s["Nk"]
    q, k, v = (x[n].astype(np.float64) for n in ("Q", "K", "V"))
    heads = np.arange(h) // (h // hkv)
    k, v = k[:, heads], v[:, heads]
    scores = np.einsum("bhid,bhjd->bhij", q, k) * x["sm_scale"]
    if opts["softcap"] > 0:
        scores = opts["softcap"] * np.tanh(scores / opts["softcap"])
    if "Slopes" in x:
        dist = np.abs(np.arange(nq)[:, None] + (nk - nq) - np.arange(nk)[None, :])
        slopes = x["Slopes"].astype(np.float64)  # [H], or [1 or B, H]
        scores = scores - slopes.reshape(-1, h)[:, :, None, None] * dist
    if "Bias" in x:
        scores = scores + x["Bias"].astype(np.float64)
    mask = np.broadcast_to(visible(nq, nk, opts["causal"], opts["left"], opts["right"]),
                           scores.shape)
    if "KeyMask" in x:
        mask = mask & x["KeyMask"][:, None, None, :]
    scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    seen = np.isfinite(row_max)
    p = np.where(mask, np.exp(scores - np.where(seen, row_max, 0)), 0.0)
    total = p.sum(axis=-1, keepdims=True)
    out = np.einsum("bhij,bhjd->bhid", p / np.where(seen, total, 1), v)
    lse = np.where(seen, row_max + np.log(np.where(seen, total, 1)), np.inf)[..., 0]
    return out, lse


def main():
    args = parse_args()
    kind = KERNELS[args.kernel]
    defines = dict(d.split("=", 1) for d in args.defines)
    opts = {"causal": defines.get("CAUSAL", "false") == "true",
            "left": int(defines.get("WINDOW_LEFT", -1)),
            "right": int(defines.get("WINDOW_RIGHT", -1)),
            "softcap": float(defines.get("SOFTCAP", 0))}
    s = shapes(args)
    s["DV"] = args.DV or defined_dv(args.defines) or s["D"]
    b, h, hkv, nq, nk, d, dv = (s[n] for n in ("B", "H", "H_KV", "Nq", "Nk", "D", "DV"))
    rng = np.random.default_rng(args.seed)
    normal = nonzero_normal(rng, args.bf16)
    x = {"Q": normal((b, h, nq, d), args.q_scale), "K": normal((b, hkv, nk, d)),
         "V": normal((b, hkv, nk, dv)), "sm_scale": float(np.float32(1 / np.sqrt(d)))}
    half = x["Q"].dtype.type
    if kind.get("alibi"):
        rows = (1 if args.shared_slopes else b,) if kind.get("batch_slopes") else ()
        x["Slopes"] = (rng.random(rows + (h,)) * 0.5 + 0.05).astype(np.float32)
    if kind.get("bias"):
        x["Bias"] = rng.standard_normal((b, h, nq, nk)).astype(np.float32)
    if kind.get("key_mask"):
        key_mask = rng.random((b, nk)) < 0.7
        key_mask[:, 0] = True
        x["KeyMask"] = key_mask
    outputs = {"O": ((b, h, nq, dv), half)}
    if kind.get("lse"):
        outputs["LSE"] = ((b, h, nq), np.float32)
    if args.mask_rows:
        x["KeyMask"][0, :] = False  # every row of batch 0 sees no key
    refs = {}
    if not args.expect_error:
        refs["O"], refs["LSE"] = reference(x, opts, s)

    os.makedirs(args.workdir, exist_ok=True)
    tag = "%s-%d" % (args.kernel, os.getpid())
    path = lambda name: os.path.join(args.workdir, "%s-%s.npy" % (tag, name))
    source = os.path.join(args.kernels_dir, args.kernel + ".tile")
    what = "%s%s %s %s" % (args.kernel, " bf16" if args.bf16 else "",
                           " ".join("%s=%d" % kv for kv in s.items()),
                           " ".join(args.defines))
    base = [args.flashc, "run", source] + args.flashc_flags
    if args.bf16:
        base += ["-D", "T=bf16"]
    for dfn in args.defines:
        base += ["-D", dfn]
    if d != 64:
        base += ["-D", "HEAD_DIM=%d" % d]
    if dv != d and not args.dv_undeclared:
        base += ["-D", "HEAD_DIM_V=%d" % dv]
    for name, value in x.items():
        if isinstance(value, float):
            base += ["--arg", "%s=%r" % (name, value)]
        else:
            np.save(path(name), value)
            base += ["--arg", "%s=%s" % (name, path(name))]
    for name, (shape, dtype) in outputs.items():
        np.save(path("poison-" + name), np.full(shape, np.nan, dtype))
        base += ["--arg", "%s=%s" % (name, path("poison-" + name))]
    tol_o = (1.6e-2, 8e-2) if args.bf16 else (2e-3, 1e-2)
    tol_lse = (3e-4, 8e-4) if args.bf16 else (1e-5, 1e-4)

    def check(name, out, ref):
        if name == "LSE":
            same_inf = np.array_equal(np.isposinf(out), np.isposinf(ref))
            fin = np.isfinite(ref)
            err = np.abs(out[fin] - ref[fin]) / np.maximum(1, np.abs(ref[fin]))
            rel = (np.linalg.norm(out[fin] - ref[fin]) / max(np.linalg.norm(ref[fin]), 1e-30)
                   if fin.any() else 0.0)
            worst = float(err.max()) if err.size else 0.0
            ok = (same_inf and not np.isnan(out).any() and rel < tol_lse[0] and
                  worst < tol_lse[1])
            return ok, "rel %.1e max scaled abs %.1e, +inf rows %d%s" % (
                rel, worst, int(np.isposinf(ref).sum()), "" if same_inf else " (MISMATCH)")
        unwritten = int(np.count_nonzero(~np.isfinite(out)))
        err = out - ref
        norm = np.linalg.norm(ref)
        rel = np.linalg.norm(err) / norm if norm > 0 else np.linalg.norm(err)
        worst = float(np.max(np.abs(err))) if err.size else 0.0
        ok = unwritten == 0 and rel < tol_o[0] and worst < tol_o[1]
        return ok, "rel %.1e max abs %.1e non-finite %d" % (rel, worst, unwritten)

    ok = True
    results = {}
    for target in ("interp", "emulate"):
        cmd = base + ["--target=" + target]
        for name in outputs:
            cmd += ["--out", "%s=%s" % (name, path(target + "-" + name))]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if args.expect_error:
            print("%s %s on %s: exit %d\n%s" % ("PASS" if done.returncode == 1 else "FAIL",
                                               what, target, done.returncode, done.stderr))
            ok = ok and done.returncode == 1
            continue
        if done.returncode != 0:
            print("FAIL %s on %s: flashc exited %d\n$ %s\n%s%s" % (
                what, target, done.returncode, " ".join(cmd), done.stdout, done.stderr))
            return 1
        for name in outputs:
            out = np.load(path(target + "-" + name))
            if args.bf16 and name == "O":
                out = out.view(half)
            out = out.astype(np.float64)
            results[(target, name)] = out
            good, line = check(name, out, refs[name])
            if target == "emulate":
                same, vs = check(name, out, results[("interp", name)])
                good, line = good and same, line + "; vs interp: " + vs
            ok = ok and good
            print("%s %s on %s: %s %s" % ("PASS" if good else "FAIL", what, target, name, line))
    remove_scratch(args.workdir, tag)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
