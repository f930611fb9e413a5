#!/usr/bin/env python3
"""Runs FlexAttention's BlockMask kernels through `flashc run`, on the
interpreter and the emulator: kernels/block_mask.tile (the class of each
(query block, key block) of a document mask) against a NumPy enumeration of
the mask, kernels/block_mask_tables.tile (the tables) against a NumPy
compaction of the classes, and kernels/flex_block_sparse.tile (attention
over the tables) against float64, with its emulated mma.sync count against
the count the tables give.

  check_block_mask.py --flashc F --workdir W --n N --docs L1,L2,... [--causal]
      [--q-block QB] [--kv-block KB] [--block-m BM] [--block-n BN]
      [--batches B] [--heads H] [--head-dim D] [--arch sm_90a] [--default-tiles]

The documents of lengths L1, L2, ... are packed in that order into one
sequence of N tokens (the last one padded to N); the table (B = H = 1)
serves every batch and head. The mma.sync count per key step assumes
4 warps of 16 rows each (BLOCK_M a multiple of 64). Outputs are poisoned (NaN, or a sentinel for
i32) so an element the kernel never writes fails. --arch compiles for that
target (sm_90a: the emulated program must issue no mma.sync at all, its
MMAs warpgroup MMAs); --default-tiles leaves BLOCK_M and BLOCK_N at the
kernel's defaults for the target.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

from scratch import remove_scratch

POISON = -123456789


def classes_of(visible, q_block, kv_block):
    nq, nk = visible.shape
    qb, kb = -(-nq // q_block), -(-nk // kv_block)
    out = np.zeros((1, 1, qb, kb), np.int32)
    for i in range(qb):
        for j in range(kb):
            block = visible[i * q_block:(i + 1) * q_block, j * kv_block:(j + 1) * kv_block]
            out[0, 0, i, j] = 0 if not block.any() else 2 if block.all() else 1
    return out


def tables_of(classes):
    out = []
    for value in (1, 2):
        chosen = classes == value
        num = chosen.sum(-1).astype(np.int32)
        idx = np.full(classes.shape, POISON, np.int32)
        for where in np.ndindex(*num.shape):
            listed = np.flatnonzero(chosen[where])
            idx[where][:len(listed)] = listed
        out += [num, idx]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--q-block", type=int, default=128)
    ap.add_argument("--kv-block", type=int, default=128)
    ap.add_argument("--block-m", type=int, default=64)
    ap.add_argument("--block-n", type=int, default=64)
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--arch", default="")
    ap.add_argument("--default-tiles", action="store_true")
    args = ap.parse_args()
    if args.block_m % 64:
        ap.error("--block-m must be a multiple of 64 (the MMA count per step assumes it)")
    kernels = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "kernels")
    os.makedirs(args.workdir, exist_ok=True)
    tag = "bm-%d" % os.getpid()
    path = lambda name: os.path.join(args.workdir, "%s-%s.npy" % (tag, name))

    n = args.n
    lengths = [int(x) for x in args.docs.split(",")]
    doc = np.repeat(np.arange(len(lengths)), lengths)[:n]
    doc = np.concatenate([doc, np.full(n - len(doc), len(lengths))]).astype(np.int32)
    i = np.arange(n)
    visible = doc[:, None] == doc[None, :]
    if args.causal:
        visible &= i[:, None] >= i[None, :]
    classes = classes_of(visible, args.q_block, args.kv_block)
    tables = dict(zip(("KvNum", "KvIdx", "FullKvNum", "FullKvIdx"), tables_of(classes)))
    blocks = ["-D", "Q_BLOCK=%d" % args.q_block, "-D", "KV_BLOCK=%d" % args.kv_block]
    causal = ["-D", "CAUSAL=%s" % ("true" if args.causal else "false")]
    what = "n=%d docs=%s causal=%s blocks=%dx%d" % (n, args.docs, args.causal, args.q_block,
                                                      args.kv_block)

    def run(kernel, target, defines, inputs, outputs, stats=False):
        cmd = [args.flashc, "run", os.path.join(kernels, kernel + ".tile"),
               "--target=" + target] + defines
        if args.arch:
            cmd.append("--arch=" + args.arch)
        for name, value in inputs.items():
            if isinstance(value, (int, float)):
                cmd += ["--arg", "%s=%r" % (name, value)]
                continue
            np.save(path(name), value)
            cmd += ["--arg", "%s=%s" % (name, path(name))]
        for name, value in outputs.items():
            np.save(path(name), value)
            cmd += ["--arg", "%s=%s" % (name, path(name)),
                    "--out", "%s=%s" % (name, path("out-" + name))]
        if stats:
            cmd.append("--stats")
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print("FAIL %s on %s: %s exited %d\n$ %s\n%s%s" % (
                what, target, kernel, done.returncode, " ".join(cmd), done.stdout, done.stderr))
            sys.exit(1)
        return {name: np.load(path("out-" + name)) for name in outputs}, done.stdout

    rng = np.random.default_rng(5)
    B, H, D = args.batches, args.heads, args.head_dim
    q, k, v = (rng.standard_normal((B, H, n, D)).astype(np.float16) for _ in range(3))
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64)) * 0.125
    s = np.where(visible, s, -np.inf)
    top = s.max(-1, keepdims=True)
    p = np.exp(s - top)
    ref = np.einsum("bhqk,bhkd->bhqd", p, v.astype(np.float64)) / p.sum(-1, keepdims=True)
    ref_lse = (top + np.log(p.sum(-1, keepdims=True)))[..., 0]

    ok = True
    for target in ("interp", "emulate"):
        out, _ = run("block_mask", target, blocks + causal,
                     {"Doc": doc, "Nq": n, "Nk": n},
                     {"Class": np.full(classes.shape, POISON, np.int32)})
        good = np.array_equal(out["Class"], classes)
        print("%s %s on %s: classes %s" % ("PASS" if good else "FAIL", what, target,
                                           np.bincount(classes.ravel(), minlength=3).tolist()))
        ok = ok and good
        built, _ = run("block_mask_tables", target, [], {"Class": out["Class"]},
                       {name: np.full(t.shape, POISON, np.int32) for name, t in tables.items()})
        good = all(np.array_equal(built[name], t) for name, t in tables.items())
        print("%s %s on %s: tables" % ("PASS" if good else "FAIL", what, target))
        ok = ok and good
        defines = blocks + causal + ["-D", "HEAD_DIM=%d" % D]
        if not args.default_tiles:
            defines += ["-D", "BLOCK_M=%d" % args.block_m, "-D", "BLOCK_N=%d" % args.block_n]
        result, printed = run("flex_block_sparse", target, defines,
                              dict(Q=q, K=k, V=v, Doc=doc, sm_scale=0.125, **built),
                              {"O": np.full(q.shape, np.nan, np.float16),
                               "LSE": np.full((B, H, n), np.nan, np.float32)},
                              stats=target == "emulate")
        err = np.linalg.norm(result["O"] - ref) / np.linalg.norm(ref)
        lse_err = np.abs(result["LSE"] - ref_lse).max()
        good = err < 3e-3 and lse_err < 1e-3
        print("%s %s on %s: O rel %.2e, LSE abs %.2e" % ("PASS" if good else "FAIL", what,
                                                          target, err, lse_err))
        ok = ok and good
        if target == "emulate" and args.arch == "sm_90a":
            found = int(re.search(r"mma\.sync \(warp instrs\)\s+(\d+)", printed).group(1))
            good = found == 0
            print("%s %s: mma.sync %d on sm_90a (warpgroup MMAs only)" % (
                "PASS" if good else "FAIL", what, found))
            ok = ok and good
        elif target == "emulate":
            # Per key step: S = Q K^T and O += P V in m16n8k16 atoms.
            bm, bn = args.block_m, args.block_n
            per_step = (bm // 16) * (bn // 8) * (D // 16) + (bm // 16) * (D // 8) * (bn // 16)
            programs = -(-n // bm)
            rows = np.arange(programs) * bm // args.q_block
            visited = (built["KvNum"] + built["FullKvNum"])[0, 0, rows].sum()
            expected = int(visited) * (args.kv_block // bn) * per_step * B * H
            found = int(re.search(r"mma\.sync \(warp instrs\)\s+(\d+)", printed).group(1))
            dense = programs * -(-n // bn) * per_step * B * H
            good = found == expected
            print("%s %s: mma.sync %d, from the tables %d (every block: %d)" % (
                "PASS" if good else "FAIL", what, found, expected, dense))
            ok = ok and good
    remove_scratch(args.workdir, tag)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
