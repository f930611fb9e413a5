#!/usr/bin/env python3
"""Runs kernels/flash_attn_dropout.tile through `flashc run` on the
interpreter and on the emulator and checks O and LSE against a float64
reference whose keep mask is NumPy's Philox4x32-10 on each element's
coordinates (kernels/lib/dropout.tile), and the emulator's against the
interpreter's.

  check_dropout.py --flashc F --workdir W [--bf16] [-D X=V]... [--flashc-flag F]...
                   [--B --H --H_KV --Nq --Nk --D --DV N] [--p P] [--alibi]
                   [--probs | --varlen Q_LENGTHS K_LENGTHS]

The reference reads CAUSAL, WINDOW_LEFT, WINDOW_RIGHT and SOFTCAP from the
-D options (FlashAttention-2's masks, bottom-right aligned) and, with
--alibi, adds -slope * |i + Nk - Nq - j| (Slopes [1, H]). A mask that
differs from the reference's in one element of a visible row moves that
row's O by a weight of 1 / (1 - p) times a V row: the tolerances below
(those of check_variant.py) do not pass it. Prints PASS/FAIL lines; exit
code 0 when every check passes.

--varlen runs kernels/flash_attn_varlen_dropout.tile instead over sequences
of Q_LENGTHS queries and K_LENGTHS keys (comma-separated) packed into Q,
K and V (--B, --Nq, --Nk and --DV unused): each sequence's reference is
the one above, its keep mask that of the packed rows and keys with batch 0.

--probs runs kernels/flash_attn_dropout_probs.tile instead (S, the weights
as return_attn_probs gives them, negated where dropped): the signs of S on
the visible elements must be the reference's keep mask exactly, the
emulator's S the interpreter's to 1e-3 relative, and |S| normalized by
the row's log-sum-exp and the maxima of the key blocks at and after each
(32 keys, as the kernel visits them last to first) the float64 softmax.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from check_variant import add_run_args
from scratch import remove_scratch

MASK32 = 0xFFFFFFFF


def philox_first_word(c0, c1, c2, c3, k0, k1):
    """The first word of Philox4x32-10 (Salmon et al., SC 2011) on uint64
    arrays holding 32-bit values."""
    x = [np.asarray(c, np.uint64) & np.uint64(MASK32) for c in (c0, c1, c2, c3)]
    k0, k1 = np.uint64(k0 & MASK32), np.uint64(k1 & MASK32)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * x[0]
        p1 = np.uint64(0xCD9E8D57) * x[2]
        x = [(p1 >> np.uint64(32)) ^ x[1] ^ k0, p1 & np.uint64(MASK32),
             (p0 >> np.uint64(32)) ^ x[3] ^ k1, p0 & np.uint64(MASK32)]
        k0 = (k0 + np.uint64(0x9E3779B9)) & np.uint64(MASK32)
        k1 = (k1 + np.uint64(0xBB67AE85)) & np.uint64(MASK32)
    return x[0]


def keep_mask(rng, b, h, nq, nk):
    """[B, H, Nq, Nk]: whether dropout keeps element (i, j) of head (b, h)."""
    seed_lo, seed_hi, offset, threshold = (int(v) for v in rng)
    bb, hh, ii, jj = np.meshgrid(np.arange(b), np.arange(h), np.arange(nq), np.arange(nk),
                                 indexing="ij")
    x = philox_first_word(jj, ii, bb * 65536 + hh, np.full(jj.shape, offset),
                          seed_lo, seed_hi)
    return (x >> np.uint64(1)) >= np.uint64(threshold)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_args(ap, "an option for every `flashc run` (e.g. --arch=sm_90a)")
    ap.add_argument("--DV", type=int, default=0)
    ap.add_argument("--p", type=float, default=0.17, help="dropout probability")
    ap.add_argument("--alibi", action="store_true")
    ap.add_argument("--probs", action="store_true", help="check flash_attn_dropout_probs")
    ap.add_argument("--varlen", nargs=2, metavar=("Q_LENGTHS", "K_LENGTHS"),
                    help="check flash_attn_varlen_dropout over sequences of these lengths")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def main():
    args = parse_args()
    opts = dict(d.split("=", 1) for d in args.defines)
    causal = opts.get("CAUSAL", "false") == "true"
    left = int(opts.get("WINDOW_LEFT", -1))
    right = 0 if causal else int(opts.get("WINDOW_RIGHT", -1))
    softcap = float(opts.get("SOFTCAP", 0.0))
    b, h, nq, nk, d = args.B, args.H, args.Nq, args.Nk, args.D
    hkv, dv = args.H_KV or h, args.DV or d
    rng = np.random.default_rng(args.seed)
    half = np.float16
    if args.bf16:
        import ml_dtypes
        half = ml_dtypes.bfloat16

    def normal(shape):
        a = rng.standard_normal(shape)
        return np.where(a == 0, 0.5, a).astype(half)
    if args.varlen:
        q_lens, k_lens = ([int(x) for x in text.split(",")] for text in args.varlen)
        nq, nk = sum(q_lens), sum(k_lens)
        q, k, v = normal((nq, h, d)), normal((nk, hkv, d)), normal((nk, hkv, d))
    else:
        q, k, v = normal((b, h, nq, d)), normal((b, hkv, nk, d)), normal((b, hkv, nk, dv))
    slopes = (rng.uniform(0.05, 0.5, (1, h))).astype(np.float32)
    state = np.array([0x1234567, -0x2345678, 3, int(args.p * 2 ** 31)], np.int32)
    sm_scale = float(np.float32(1 / np.sqrt(d)))
    masks = (left, right, softcap, slopes[0] if args.alibi else None)

    os.makedirs(args.workdir, exist_ok=True)
    tag = "dropout-%d" % os.getpid()
    path = lambda name: os.path.join(args.workdir, "%s-%s.npy" % (tag, name))
    if args.varlen:
        return check_varlen(args, q, k, v, slopes, state, sm_scale, masks, q_lens, k_lens,
                            half, path, tag)
    # float64 reference.
    heads = np.arange(h) // (h // hkv)
    keep = keep_mask(state, b, h, nq, nk)
    s, o_ref, lse_ref = reference(q.astype(np.float64), k.astype(np.float64)[:, heads],
                                  v.astype(np.float64)[:, heads], sm_scale, masks, keep,
                                  state[3] / 2 ** 31)
    if args.probs:
        return check_probs(args, q, k, slopes, state, sm_scale, s, keep, lse_ref, half, path,
                           tag, (b, h, nq, nk, d, hkv))
    base = run_command(args, "flash_attn_dropout.tile", d, path,
                       (("Q", q), ("K", k), ("V", v), ("Slopes", slopes), ("Rng", state)))
    if dv != d:
        base += ["-D", "HEAD_DIM_V=%d" % dv]
    np.save(path("poison-O"), np.full((b, h, nq, dv), np.nan, half))
    np.save(path("poison-LSE"), np.full((b, h, nq), np.nan, np.float32))
    base += ["--arg", "O=" + path("poison-O"), "--arg", "LSE=" + path("poison-LSE"),
             "--arg", "sm_scale=%r" % sm_scale]
    what = "flash_attn_dropout%s B=%d H=%d H_KV=%d Nq=%d Nk=%d D=%d DV=%d p=%g %s%s" % (
        " bf16" if args.bf16 else "", b, h, hkv, nq, nk, d, dv, args.p, " ".join(args.defines),
        " ALiBi" if args.alibi else "")
    return run_targets(args, base, what, o_ref, lse_ref, half, path, tag)


def reference(qf, kf, vf, sm_scale, masks, keep, p):
    """float64 scores s (-inf where masked), O and LSE of Q [.., Nq, D]
    against K and V [.., Nk, D] (one KV head per query head) under MASKS
    (left, right, softcap, ALiBi slopes per head or None) and the keep mask
    KEEP [.., Nq, Nk], bottom-right aligned."""
    left, right, softcap, slopes = masks
    nq, nk = qf.shape[-2], kf.shape[-2]
    s = np.einsum("...hid,...hjd->...hij", qf, kf) * sm_scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    i = np.arange(nq)[:, None] + (nk - nq)
    j = np.arange(nk)[None, :]
    if slopes is not None:
        s = s - slopes[:, None, None].astype(np.float64) * np.abs(i - j)
    ok = np.ones((nq, nk), bool)
    if left >= 0:
        ok &= j >= i - left
    if right >= 0:
        ok &= j <= i + right
    s = np.where(ok, s, -np.inf)
    m = s.max(-1, keepdims=True, initial=-np.inf)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = e.sum(-1, keepdims=True)
    probs = e / np.maximum(total, 1e-300)
    o_ref = np.einsum("...hij,...hjd->...hid", np.where(keep, probs / (1 - p), 0.0), vf)
    with np.errstate(divide="ignore"):
        lse_ref = np.where(total[..., 0] > 0, np.log(np.maximum(total[..., 0], 1e-300)) +
                           np.where(np.isfinite(m[..., 0]), m[..., 0], 0), np.inf)
    return s, o_ref, lse_ref


def check_varlen(args, q, k, v, slopes, state, sm_scale, masks, q_lens, k_lens, half, path,
                 tag):
    """flash_attn_varlen_dropout over sequences of q_lens queries and k_lens
    keys packed into Q [TotalQ, H, D], K and V [TotalK, H_KV, D]: the keep
    mask's counter is the packed row and key with batch 0, as the kernel's."""
    (total_q, h, d), hkv = q.shape, k.shape[1]
    heads = np.arange(h) // (h // hkv)
    cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32) for n in (q_lens, k_lens))
    keep = keep_mask(state, 1, h, total_q, k.shape[0])[0]
    o_ref = np.zeros((total_q, h, d))
    lse_ref = np.full((h, total_q), np.inf)
    for q0, q1, k0, k1 in zip(cu_q, cu_q[1:], cu_k, cu_k[1:]):
        qf = q[q0:q1].astype(np.float64).transpose(1, 0, 2)
        kf, vf = (x[k0:k1][:, heads].astype(np.float64).transpose(1, 0, 2) for x in (k, v))
        _, o, lse = reference(qf, kf, vf, sm_scale, masks, keep[:, q0:q1, k0:k1],
                              state[3] / 2 ** 31)
        o_ref[q0:q1] = o.transpose(1, 0, 2)
        lse_ref[:, q0:q1] = lse
    base = run_command(args, "flash_attn_varlen_dropout.tile", d, path,
                       (("Q", q), ("K", k), ("V", v), ("cu_seqlens_q", cu_q),
                        ("cu_seqlens_k", cu_k), ("Slopes", slopes), ("Rng", state)))
    np.save(path("poison-O"), np.full(q.shape, np.nan, half))
    np.save(path("poison-LSE"), np.full((h, total_q), np.nan, np.float32))
    base += ["--arg", "O=" + path("poison-O"), "--arg", "LSE=" + path("poison-LSE"),
             "--arg", "max_seqlen_q=%d" % max(q_lens), "--arg", "sm_scale=%r" % sm_scale]
    what = "flash_attn_varlen_dropout%s q lengths %s k lengths %s H=%d H_KV=%d D=%d p=%g %s%s" % (
        " bf16" if args.bf16 else "", args.varlen[0], args.varlen[1], h, hkv, d, args.p,
        " ".join(args.defines), " ALiBi" if args.alibi else "")
    return run_targets(args, base, what, o_ref, lse_ref, half, path, tag)


def run_targets(args, base, what, o_ref, lse_ref, half, path, tag):
    """Runs BASE (a `flashc run` command writing O and LSE) on the interpreter
    and on the emulator and checks both against the references, and the
    emulator's O against the interpreter's."""
    tol_o = (1.6e-2, 8e-2) if args.bf16 else (2e-3, 1e-2)
    tol_lse = (3e-4, 8e-4) if args.bf16 else (1e-5, 1e-4)

    def check_o(out, ref):
        err = out.astype(np.float64) - ref
        rel = np.linalg.norm(err) / max(np.linalg.norm(ref), 1e-30)
        worst = float(np.max(np.abs(err)))
        bad = int(np.count_nonzero(~np.isfinite(out)))
        return bad == 0 and rel < tol_o[0] and worst < tol_o[1], \
            "rel %.1e max abs %.1e non-finite %d" % (rel, worst, bad)

    def check_lse(out, ref):
        fin = np.isfinite(ref)
        same_inf = np.array_equal(np.isposinf(out), np.isposinf(ref))
        err = np.abs(out[fin] - ref[fin]) / np.maximum(1, np.abs(ref[fin]))
        worst = float(err.max()) if err.size else 0.0
        good = same_inf and not np.isnan(out).any() and worst < tol_lse[1]
        return good, "max scaled abs %.1e%s" % (worst, "" if same_inf else " (+inf MISMATCH)")

    good = True
    results = {}
    try:
        for target in ("interp", "emulate"):
            cmd = base + ["--target=" + target, "--out", "O=" + path(target + "-O"),
                          "--out", "LSE=" + path(target + "-LSE")]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                print("FAIL %s on %s: flashc run failed\n%s" % (what, target, done.stderr))
                good = False
                continue
            o, lse = np.load(path(target + "-O")), np.load(path(target + "-LSE"))
            if o.dtype != half:
                o = o.view(half)  # bf16 comes back as raw 2-byte records
            results[target] = o
            for name, (ok_, msg) in (("O", check_o(o, o_ref)), ("LSE", check_lse(lse, lse_ref))):
                print("%s %s on %s: %s %s" % ("PASS" if ok_ else "FAIL", what, target, name, msg))
                good &= ok_
        if len(results) == 2:
            ok_, msg = check_o(results["emulate"], results["interp"].astype(np.float64))
            print("%s %s emulate vs interp: O %s" % ("PASS" if ok_ else "FAIL", what, msg))
            good &= ok_
    finally:
        remove_scratch(args.workdir, tag)
    return 0 if good else 1


def run_command(args, kernel_file, d, path, inputs):
    """`flashc run` of KERNEL_FILE with the options, type and defines asked
    for and HEAD_DIM d, each (name, array) of INPUTS saved to path(name) and
    passed as that argument."""
    base = [args.flashc, "run", os.path.join(args.kernels_dir, kernel_file)]
    base += args.flashc_flags
    if args.bf16:
        base += ["-D", "T=bf16"]
    for dfn in args.defines + (["ALIBI=true"] if args.alibi else []):
        base += ["-D", dfn]
    if d != 64:
        base += ["-D", "HEAD_DIM=%d" % d]
    for name, value in inputs:
        np.save(path(name), value)
        base += ["--arg", "%s=%s" % (name, path(name))]
    return base


def check_probs(args, q, k, slopes, state, sm_scale, s, keep, lse_ref, half, path, tag, dims):
    """flash_attn_dropout_probs against the reference scores s and keep mask."""
    b, h, nq, nk, d, hkv = dims
    block = 32
    nqr, nkr = -(-nq // 128) * 128, -(-nk // block) * block
    base = run_command(args, "flash_attn_dropout_probs.tile", d, path,
                       (("Q", q), ("K", k), ("Slopes", slopes), ("Rng", state)))
    np.save(path("poison-S"), np.full((b, h, nqr, nkr), np.nan, half))
    base += ["--arg", "S=" + path("poison-S"), "--arg", "rng_row=0", "--arg", "rng_col=0",
             "--arg", "sm_scale=%r" % sm_scale]
    what = "flash_attn_dropout_probs%s B=%d H=%d H_KV=%d Nq=%d Nk=%d D=%d %s%s" % (
        " bf16" if args.bf16 else "", b, h, hkv, nq, nk, d, " ".join(args.defines),
        " ALiBi" if args.alibi else "")
    visible = np.isfinite(s)
    blocks = range(0, nk, block)
    block_max = np.stack([s[..., j:j + block].max(-1) for j in blocks], -1)
    after = np.maximum.accumulate(block_max[..., ::-1], -1)[..., ::-1]
    probs = np.exp(s - np.where(np.isfinite(lse_ref), lse_ref, 0)[..., None])
    rows = np.isfinite(lse_ref)
    good = True
    results = {}
    try:
        for target in ("interp", "emulate"):
            cmd = base + ["--target=" + target, "--out", "S=" + path(target + "-S")]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                print("FAIL %s on %s: flashc run failed\n%s" % (what, target, done.stderr))
                good = False
                continue
            full = np.load(path(target + "-S"))
            if full.dtype != half:
                full = full.view(half)
            full = full.astype(np.float64)
            results[target] = full
            got = full[:, :, :nq, :nk]
            strict = visible & (got != 0)
            signs = np.array_equal((got >= 0)[strict], keep[strict]) and \
                strict.sum() > 0.5 * visible.sum()
            norm = np.concatenate([np.abs(got[..., j:j + block]) *
                                   np.exp(after[..., n] - np.where(rows, lse_ref, 0))[..., None]
                                   for n, j in enumerate(blocks)], -1)
            worst = float(np.abs(np.where(rows[..., None] & visible, norm - probs, 0)).max())
            unwritten = int(np.count_nonzero(~np.isfinite(full[:, :, :nq])))
            ok_ = signs and worst < (1.6e-2 if args.bf16 else 2e-3) and unwritten == 0
            print("%s %s on %s: S signs %s the keep mask (%d elements), |S| normalized max abs "
                  "%.1e, non-finite %d" % ("PASS" if ok_ else "FAIL", what, target,
                                           "are" if signs else "are NOT", int(strict.sum()),
                                           worst, unwritten))
            good &= ok_
        if len(results) == 2:
            e, i = results["emulate"][:, :, :nq], results["interp"][:, :, :nq]
            same = np.array_equal(e >= 0, i >= 0)
            rel = float(np.abs(e - i).max() / max(np.abs(i).max(), 1e-30))
            ok_ = same and rel < (8e-3 if args.bf16 else 1e-3)
            print("%s %s emulate vs interp: S signs %s, max rel %.1e" % (
                "PASS" if ok_ else "FAIL", what, "identical" if same else "DIFFER", rel))
            good &= ok_
    finally:
        remove_scratch(args.workdir, tag)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
