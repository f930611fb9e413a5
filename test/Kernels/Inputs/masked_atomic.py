#!/usr/bin/env python3
"""masked_atomic.py --flashc FLASHC --workdir DIR [--ptxas PTXAS]

Masked stores, atomic_add and bool tensor parameters, each in a small kernel
run on the interpreter and on the emulator (whose sanitizer must stay quiet)
against numpy in float64, and, with --ptxas, compiled to PTX for sm_80 and
sm_90 and assembled:

  masks      a triangle (a mask that differs along every row), a row mask
             (the same along a row: with the static row length, stores stay
             16-byte vectors), a mask read from a bool tensor, and a bool
             output; untouched elements must keep their initial values
             exactly;
  colsum     every program adds its column sums into one f32 vector, and
             its tile (where positive) into one shared block: many programs
             add into the same addresses; integer-valued inputs make every
             order of additions exact;
  kpm        attention with a key-padding mask read from a bool[B, Nk]
             tensor (dot, online softmax), rows whose keys are all masked
             give 0;
  dq         the dQ accumulation of an attention backward pass: one
             program per KV block loops over the query blocks and adds
             dS K into dQ with atomic_add, so every dQ row receives one
             addition per KV block; the same kernel with store instead
             must make the emulator's sanitizer report a global-memory
             race.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

MASKS = """kernel masks<BR: int = 16, BC: int = 64, C: int = 192>(X: f32[R, C],
    M: bool[R, C], Y: f32[R, C], Z: f32[R, C], W: f32[R, C], P: bool[R, C],
    limit: i32)
{
  grid(cdiv(R, BR), cdiv(C, BC));
  let r0 = program_id(0) * BR;
  let c0 = program_id(1) * BC;
  let rows = r0 + arange(0, BR);
  let cols = c0 + arange(0, BC);
  let x = load(X[r0 : r0 + BR, c0 : c0 + BC]);
  store(Y[r0 : r0 + BR, c0 : c0 + BC], x, mask = cols[None, :] <= rows[:, None]);
  store(Z[r0 : r0 + BR, c0 : c0 + BC], x, mask = rows[:, None] < limit);
  store(W[r0 : r0 + BR, c0 : c0 + BC], x, mask = load(M[r0 : r0 + BR, c0 : c0 + BC]));
  store(P[r0 : r0 + BR, c0 : c0 + BC], x > 0.0);
}
"""

COLSUM = """kernel colsum<BR: int = 16, BC: int = 64>(X: f32[R, C], S: f32[C], T: f32[BR, C])
{
  grid(cdiv(R, BR), cdiv(C, BC));
  let r0 = program_id(0) * BR;
  let c0 = program_id(1) * BC;
  let x = load(X[r0 : r0 + BR, c0 : c0 + BC]);
  atomic_add(S[c0 : c0 + BC], sum(x, axis = 0));
  atomic_add(T[:, c0 : c0 + BC], x, mask = x > 0.0);
}
"""

KPM = """kernel kpm<BLOCK_M: int = 64, BLOCK_N: int = 64, D: int = 64>(
    Q: f16[B, Nq, D], K: f16[B, Nk, D], V: f16[B, Nk, D], KPM: bool[B, Nk],
    O: f32[B, Nq, D], sm_scale: f32)
{
  grid(cdiv(Nq, BLOCK_M), B);
  let m0 = program_id(0) * BLOCK_M;
  let b = program_id(1);
  let q = load(Q[b, m0 : m0 + BLOCK_M, :]);
  var m_i = full([BLOCK_M], -inf, f32);
  var l_i = zeros([BLOCK_M], f32);
  var acc = zeros([BLOCK_M, D], f32);
  for n0 in range(0, Nk, BLOCK_N) {
    let k = load(K[b, n0 : n0 + BLOCK_N, :]);
    let v = load(V[b, n0 : n0 + BLOCK_N, :]);
    let keep = load(KPM[b, n0 : n0 + BLOCK_N]);   # keys past Nk read false
    let s = where(keep[None, :], dot(q, trans(k)), -inf);
    m_i, l_i, acc = online_softmax(s, v, m_i, l_i, acc, scale = sm_scale);
  }
  store(O[b, m0 : m0 + BLOCK_M, :], finalize(acc, l_i));
}
"""

DQ = """kernel dq<BLOCK_M: int = 64, BLOCK_N: int = 32, D: int = 64, RACY: bool = false>(
    Q: f16[B, Nq, D], K: f16[B, Nk, D], V: f16[B, Nk, D], DO: f16[B, Nq, D],
    DQ: f32[B, Nq, D], scale: f32)
{
  # BLOCK_N 32 keeps K, V and the dQ tile in registers without spills.
  grid(cdiv(Nk, BLOCK_N), B);
  let n0 = program_id(0) * BLOCK_N;
  let b = program_id(1);
  let k = load(K[b, n0 : n0 + BLOCK_N, :]);   # keys past Nk read 0: dS = 0
  let v = load(V[b, n0 : n0 + BLOCK_N, :]);
  for m0 in range(0, Nq, BLOCK_M) {
    let q = load(Q[b, m0 : m0 + BLOCK_M, :]);
    let d_o = load(DO[b, m0 : m0 + BLOCK_M, :]);
    let s = dot(q, trans(k)) * scale;
    let dp = dot(d_o, trans(v));
    let ds = cast(s * dp, f16);               # a stand-in for P * (dP - delta)
    let dq = dot(ds, k) * scale;
    if RACY {
      store(DQ[b, m0 : m0 + BLOCK_M, :], dq);
    } else {
      atomic_add(DQ[b, m0 : m0 + BLOCK_M, :], dq);
    }
  }
}
"""


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("FAIL: %s\n%s%s" % (" ".join(cmd), done.stdout, done.stderr))
    return done.stdout


class Case:
    """One kernel: its source, inputs, outputs and float64 reference."""

    def __init__(self, args, name, source):
        self.args, self.name = args, name
        self.src = self.path(".tile")
        with open(self.src, "w") as f:
            f.write(source)

    def path(self, suffix):
        return os.path.join(self.args.workdir, self.name + suffix)

    def run(self, target, arrays, scalars, outs, defines=(), fail=False):
        cmd = [self.args.flashc, "run", self.src, "--target=" + target]
        for d in defines:
            cmd += ["-D", d]
        for name, a in arrays.items():
            np.save(self.path("-" + name + ".npy"), a)
            cmd += ["--arg", "%s=%s" % (name, self.path("-" + name + ".npy"))]
        for name, value in scalars.items():
            cmd += ["--arg", "%s=%s" % (name, value)]
        for name in outs:
            cmd += ["--out", "%s=%s" % (name, self.path("-%s-%s.npy" % (name, target)))]
        if fail:
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode == 0:
                sys.exit("FAIL: %s succeeded" % " ".join(cmd))
            return done.stderr
        run(cmd)
        return {name: np.load(self.path("-%s-%s.npy" % (name, target))) for name in outs}

    def ptx(self):
        if not self.args.ptxas:
            return
        usage = []
        for arch in ("sm_80", "sm_90"):
            ptx = self.path("-%s.ptx" % arch)
            run([self.args.flashc, self.src, "--arch=" + arch, "-o", ptx])
            done = subprocess.run([self.args.ptxas, "-v", "-arch=" + arch, ptx,
                                   "-o", ptx + ".cubin"],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit("FAIL %s ptxas %s:\n%s" % (self.name, arch, done.stderr))
            regs = re.search(r"Used (\d+) registers", done.stderr)
            spill = re.search(r"(\d+) bytes spill stores", done.stderr)
            usage.append("%s %s regs, %s B spilled" % (
                arch, regs.group(1) if regs else "?", spill.group(1) if spill else "?"))
        print("PASS %s ptx: ptxas accepts sm_80 and sm_90 (%s)"
              % (self.name, "; ".join(usage)))


def check_exact(case, target, got, want):
    for name, w in want.items():
        g = got[name]
        if g.dtype != w.dtype or not np.array_equal(g, w):
            bad = np.argwhere(g != w)
            sys.exit("FAIL %s %s: %s differs at %d elements, first %s: %r vs %r"
                     % (case, target, name, len(bad), bad[0],
                        g[tuple(bad[0])], w[tuple(bad[0])]))


def masks(args, rng):
    case = Case(args, "masks", MASKS)
    R, C, limit = 45, 192, 37   # a tail of rows; limit cuts a block
    x = rng.standard_normal((R, C)).astype(np.float32)
    m = rng.random((R, C)) < 0.5
    init = {n: rng.standard_normal((R, C)).astype(np.float32) for n in "YZW"}
    p0 = rng.random((R, C)) < 0.5
    rows, cols = np.arange(R)[:, None], np.arange(C)[None, :]
    want = {
        "Y": np.where(cols <= rows, x, init["Y"]),
        "Z": np.where(rows < limit, x, init["Z"]),
        "W": np.where(m, x, init["W"]),
        "P": x > 0,
    }
    for target in ("interp", "emulate"):
        got = case.run(target, dict(X=x, M=m, P=p0, **init), {"limit": limit}, "YZWP")
        check_exact("masks", target, got, want)
        print("PASS masks %s: masked elements untouched, bool in and out" % target)
    case.ptx()


def colsum(args, rng):
    case = Case(args, "colsum", COLSUM)
    R, C, BR = 100, 150, 16
    x = rng.integers(-8, 9, (R, C)).astype(np.float32)
    s0 = rng.integers(-4, 5, C).astype(np.float32)
    t0 = rng.integers(-4, 5, (BR, C)).astype(np.float32)
    xp = np.zeros((-(-R // BR) * BR, C))
    xp[:R] = x
    blocks = xp.reshape(-1, BR, C)
    want = {
        "S": (s0 + x.astype(np.float64).sum(0)).astype(np.float32),
        "T": (t0 + np.where(blocks > 0, blocks, 0).sum(0)).astype(np.float32),
    }
    for target in ("interp", "emulate"):
        got = case.run(target, dict(X=x, S=s0, T=t0), {}, "ST")
        check_exact("colsum", target, got, want)
        print("PASS colsum %s: %d programs add into S and T exactly"
              % (target, -(-R // BR) * -(-C // 64)))
    case.ptx()


def kpm(args, rng):
    case = Case(args, "kpm", KPM)
    B, Nq, Nk, D, scale = 2, 80, 150, 64, 0.125
    q, k, v = (rng.standard_normal((B, n, D)).astype(np.float16) for n in (Nq, Nk, Nk))
    keep = rng.random((B, Nk)) < 0.6
    keep[1] = False                      # a batch whose keys are all masked
    s = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k.astype(np.float64)) * scale
    s = np.where(keep[:, None, :], s, -np.inf)
    mx = np.max(s, axis=-1, keepdims=True)
    p = np.where(keep[:, None, :], np.exp(s - np.where(np.isfinite(mx), mx, 0)), 0)
    l = p.sum(-1, keepdims=True)
    want = np.einsum("bqk,bkd->bqd", p, v.astype(np.float64)) / np.where(l > 0, l, 1)
    outs = {}
    for target in ("interp", "emulate"):
        o0 = np.full((B, Nq, D), np.nan, np.float32)
        got = case.run(target, dict(Q=q, K=k, V=v, KPM=keep, O=o0),
                       {"sm_scale": scale}, ["O"])["O"].astype(np.float64)
        # P is rounded to f16 before P*V (as in FlashAttention): ~1e-3.
        err = np.max(np.abs(got - want))
        if not np.all(np.isfinite(got)) or err > 5e-3 or np.any(got[1] != 0):
            sys.exit("FAIL kpm %s: max abs error %.3g" % (target, err))
        outs[target] = got
        print("PASS kpm %s: max abs error %.3g" % (target, err))
    diff = np.max(np.abs(outs["interp"] - outs["emulate"]))
    if diff > 5e-3:
        sys.exit("FAIL kpm: interp and emulate differ by %.3g" % diff)
    case.ptx()


def dq(args, rng):
    case = Case(args, "dq", DQ)
    B, Nq, Nk, D, scale = 2, 150, 200, 64, 0.125
    q, do = (rng.standard_normal((B, Nq, D)).astype(np.float16) for _ in "12")
    k, v = (rng.standard_normal((B, Nk, D)).astype(np.float16) for _ in "12")
    f = lambda a: a.astype(np.float64)
    s = np.einsum("bqd,bkd->bqk", f(q), f(k)) * scale
    dp = np.einsum("bqd,bkd->bqk", f(do), f(v))
    ds = (s * dp).astype(np.float16)  # the kernel rounds dS to f16
    dq0 = rng.standard_normal((B, Nq, D)).astype(np.float32)
    want = f(dq0) + np.einsum("bqk,bkd->bqd", f(ds), f(k)) * scale
    outs = {}
    for target in ("interp", "emulate"):
        got = case.run(target, dict(Q=q, K=k, V=v, DO=do, DQ=dq0),
                       {"scale": scale}, ["DQ"])["DQ"].astype(np.float64)
        err = np.max(np.abs(got - want)) / np.max(np.abs(want))
        if not np.all(np.isfinite(got)) or err > 2e-3:
            sys.exit("FAIL dq %s: max error %.3g of max |dQ|" % (target, err))
        outs[target] = got
        print("PASS dq %s: %d KV blocks add into each dQ row, max error %.3g "
              "of max |dQ|" % (target, -(-Nk // 32), err))
    diff = np.max(np.abs(outs["interp"] - outs["emulate"])) / np.max(np.abs(want))
    if diff > 2e-3:
        sys.exit("FAIL dq: interp and emulate differ by %.3g" % diff)
    err = case.run("emulate", dict(Q=q, K=k, V=v, DO=do, DQ=dq0),
                   {"scale": scale}, ["DQ"], defines=["RACY=true"], fail=True)
    print("RACY dq emulate: " + err.strip().splitlines()[0])
    case.ptx()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--ptxas")
    ap.add_argument("--only", choices=["masks", "colsum", "kpm", "dq"])
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    for name, fn in (("masks", masks), ("colsum", colsum), ("kpm", kpm),
                     ("dq", dq)):
        if args.only in (None, name):
            fn(args, np.random.default_rng(len(name)))


if __name__ == "__main__":
    main()
