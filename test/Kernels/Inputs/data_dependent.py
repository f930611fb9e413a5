#!/usr/bin/env python3
"""data_dependent.py --flashc FLASHC --workdir DIR --kernel varlen|paged [...]

Attention whose shape is read from memory, on the interpreter and the
emulator against float64 (outputs NaN-poisoned):

- varlen (Inputs/varlen.tile): keys of 5 sequences of lengths 1, 300, 17, 0
  and 129 packed into one K and V; each program reads its sequence's start
  and length from cu_seqlens_k (scalar loads) and loops to that length. Also
  compared with kernels/fa2.tile run on each sequence alone (interp).
- paged (Inputs/paged.tile): a KV cache of 16-token pages in shuffled order,
  read through a block table with BLOCK_N 64 (4 pages a block); every page no
  sequence uses, every slot past a sequence's end in its last page and every
  block-table entry past its last page hold NaN (or name a NaN page), so
  reading any of them would poison the output. With --stats the emulator's
  cp.async must read exactly Q and the K and V rows in use (once per program
  along M): no unused page, no slot past a sequence's end.
- bounds (Inputs/bounds.tile): scalar reads and gathered rows whose indices
  fall outside their tensors read the pad value on both targets, exactly
  (f32 copies) as numpy says.

Tolerances as fa2's (kernel_specs.py): 2e-3 relative L2, 1e-2 max abs.
"""
import argparse
import math
import os
import re
import subprocess
import sys

import numpy as np

REL_TOL, ABS_TOL = 2e-3, 1e-2
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("FAIL: %s\n%s%s" % (" ".join(cmd), done.stdout, done.stderr))
    return done.stdout


def attention(q, k, v, scale):
    """softmax(q k^T scale) v in float64 for one head; 0 without keys."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    if k.shape[0] == 0:
        return np.zeros((q.shape[0], v.shape[1]))
    s = q @ k.T * scale
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p @ v) / p.sum(axis=1, keepdims=True)


def compare(got, want):
    err = got - want
    norm = np.linalg.norm(want)
    rel = np.linalg.norm(err) / norm if norm > 0 else np.linalg.norm(err)
    return rel, float(np.max(np.abs(err))) if err.size else 0.0


class Runner:
    def __init__(self, args, kernel):
        self.args = args
        self.kernel = kernel
        self.src = os.path.join(HERE, kernel + ".tile")

    def path(self, name):
        return os.path.join(self.args.workdir, "%s-%s.npy" % (self.kernel, name))

    def flashc_run(self, src, target, arrays, scalars, output, extra=()):
        cmd = [self.args.flashc, "run", src, "--target=" + target]
        cmd += list(extra)
        for d in self.args.defines:
            cmd += ["-D", d]
        for name, array in arrays.items():
            np.save(self.path(name), array)
            cmd += ["--arg", "%s=%s" % (name, self.path(name))]
        for name, value in scalars.items():
            cmd += ["--arg", "%s=%r" % (name, value)]
        out = self.path("out-" + target)
        cmd += ["--out", "%s=%s" % (output, out)]
        text = run(cmd)
        return np.load(out).astype(np.float64), text

    def check(self, what, got, want, interp=None):
        unwritten = int(np.count_nonzero(~np.isfinite(got)))
        rel, max_abs = compare(got, want)
        ok = unwritten == 0 and rel < REL_TOL and max_abs < ABS_TOL
        line = "%s %s: rel %.2e (< %.0e), max abs %.2e (< %.0e), non-finite %d" % (
            self.kernel, what, rel, REL_TOL, max_abs, ABS_TOL, unwritten)
        if interp is not None:
            rel_i, max_i = compare(got, interp)
            ok = ok and rel_i < REL_TOL and max_i < ABS_TOL
            line += "; vs interp: rel %.2e, max abs %.2e" % (rel_i, max_i)
        print("%s %s" % ("PASS" if ok else "FAIL", line))
        return ok


def check_varlen(args):
    r = Runner(args, "varlen")
    rng = np.random.default_rng(args.seed)
    lengths = [1, 300, 17, 0, 129]
    B, H, Nq, D = len(lengths), 2, 70, 64
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    Tk = int(cu[-1])
    q = rng.standard_normal((B, H, Nq, D)).astype(np.float16)
    k = rng.standard_normal((Tk, H, D)).astype(np.float16)
    v = rng.standard_normal((Tk, H, D)).astype(np.float16)
    scale = float(np.float32(1 / math.sqrt(D)))
    want = np.zeros((B, H, Nq, D))
    for b in range(B):
        for h in range(H):
            rows = slice(cu[b], cu[b + 1])
            want[b, h] = attention(q[b, h], k[rows, h], v[rows, h], scale)
    arrays = {"Q": q, "K": k, "V": v, "cu_seqlens_k": cu,
              "O": np.full(q.shape, np.nan, np.float16)}
    ok = True
    outs = {}
    for target in ("interp", "emulate"):
        outs[target], _ = r.flashc_run(r.src, target, arrays, {"sm_scale": scale}, "O")
        ok &= r.check("%s lengths %s" % (target, lengths), outs[target], want,
                      outs.get("interp") if target != "interp" else None)
    # Each sequence alone through kernels/fa2.tile (dense K and V of its length).
    fa2 = Runner(args, "fa2-alone")
    worst = 0.0
    for b, n in enumerate(lengths):
        if n == 0:
            worst = max(worst, float(np.max(np.abs(outs["interp"][b]))))
            continue
        rows = slice(cu[b], cu[b + 1])
        alone = {"Q": q[b:b + 1],
                 "K": np.ascontiguousarray(k[rows].transpose(1, 0, 2)[None]),
                 "V": np.ascontiguousarray(v[rows].transpose(1, 0, 2)[None]),
                 "O": np.full((1, H, Nq, D), np.nan, np.float16)}
        o, _ = fa2.flashc_run(os.path.join(args.kernels_dir, "fa2.tile"), "interp",
                              alone, {"sm_scale": scale}, "O")
        worst = max(worst, float(np.max(np.abs(outs["interp"][b] - o[0]))))
    alone_ok = worst < ABS_TOL
    print("%s varlen vs fa2 on each sequence alone: max abs %.2e (< %.0e)"
          % ("PASS" if alone_ok else "FAIL", worst, ABS_TOL))
    return ok and alone_ok


def check_paged(args, kernel="paged", page=16):
    """Pages of `page` tokens; paged_block: one page per key block, slots
    past a sequence's end finite garbage (masked by the scores), the rest
    NaN as for paged."""
    r = Runner(args, kernel)
    rng = np.random.default_rng(args.seed)
    D, H, Nq, block_m = args.head_dim, 2, args.nq, args.block_m
    if D != 64:
        args.defines.append("HEAD_DIM=%d" % D)
    if block_m != 64:
        args.defines.append("BLOCK_M=%d" % block_m)
    lengths = [130, 1, 64, 0, 77]
    B = len(lengths)
    used = [math.ceil(n / page) for n in lengths]
    max_pages = max(used) + 2
    unused = 7
    P = sum(used) + unused
    order = rng.permutation(P)  # pages in shuffled order; the last `unused` stay NaN
    k_cache = np.full((P, page, H, D), np.nan, np.float16)
    v_cache = np.full((P, page, H, D), np.nan, np.float16)
    table = np.zeros((B, max_pages), np.int32)
    k_seq, v_seq = [], []
    nan_pages = order[sum(used):]
    next_page = 0
    for b, n in enumerate(lengths):
        ks = rng.standard_normal((n, H, D)).astype(np.float16)
        vs = rng.standard_normal((n, H, D)).astype(np.float16)
        k_seq.append(ks)
        v_seq.append(vs)
        for j in range(max_pages):
            if j < used[b]:
                p = order[next_page]
                next_page += 1
                take = slice(j * page, min(n, (j + 1) * page))
                if kernel == "paged_block":  # the whole page is read
                    k_cache[p] = rng.standard_normal((page, H, D)) * 100
                    v_cache[p] = rng.standard_normal((page, H, D)) * 100
                k_cache[p, :take.stop - take.start] = ks[take]
                v_cache[p, :take.stop - take.start] = vs[take]
                table[b, j] = p
            else:  # past the sequence: a NaN page, must never be read
                table[b, j] = nan_pages[(b + j) % unused]
    q = rng.standard_normal((B, H, Nq, D)).astype(np.float16)
    scale = float(np.float32(1 / math.sqrt(D)))
    want = np.zeros((B, H, Nq, D))
    for b in range(B):
        for h in range(H):
            want[b, h] = attention(q[b, h], k_seq[b][:, h], v_seq[b][:, h], scale)
    arrays = {"Q": q, "K_cache": k_cache, "V_cache": v_cache, "block_table": table,
              "seqlens_k": np.array(lengths, np.int32),
              "O": np.full(q.shape, np.nan, np.float16)}
    ok = True
    outs = {}
    for target in ("interp", "emulate"):
        extra = ["--stats"] if target == "emulate" and args.stats else []
        outs[target], text = r.flashc_run(r.src, target, arrays, {"sm_scale": scale},
                                          "O", extra)
        ok &= r.check("%s page %d lengths %s" % (target, page, lengths), outs[target],
                      want, outs.get("interp") if target != "interp" else None)
        if extra:
            read = [math.ceil(n / page) * page for n in lengths] \
                if kernel == "paged_block" else lengths
            ok &= check_paged_stats(text, read, B, H, Nq, D, block_m, P, page)
    return ok


def check_paged_stats(text, lengths, B, H, Nq, D, block_m, P, page):
    """cp.async reads exactly Q and the K and V rows in use (`lengths` per
    sequence), once per program along M: not one byte of a page no sequence
    uses, nor (16-token pages) of a slot past a sequence's end."""
    match = re.search(r"cp.async bytes read \(global\)\s+(\d+)", text)
    total = re.search(r"global bytes read\s+(\d+)", text)
    if not match or not total:
        print("FAIL paged stats: no cp.async bytes read in\n" + text)
        return False
    copied = int(match.group(1))
    programs_m = math.ceil(Nq / block_m)
    q_bytes = B * H * Nq * D * 2
    kv_bytes = 2 * programs_m * H * sum(lengths) * D * 2
    cache_bytes = 2 * P * page * H * D * 2
    ok = copied == q_bytes + kv_bytes
    print("%s paged stats: cp.async read %d bytes = Q %d + K/V rows in use %d "
          "(the whole cache is %d bytes); global bytes read %d (the rest: "
          "sequence lengths and block-table entries)"
          % ("PASS" if ok else "FAIL", copied, q_bytes, kv_bytes, cache_bytes,
             int(total.group(1))))
    return ok


def check_bounds(args):
    r = Runner(args, "bounds")
    rows, cols = 32, 16
    x = np.arange(50 * cols, dtype=np.float32).reshape(50, cols) / 7
    idx = np.array([3, -5, 49, 50, 100, 0] * 6 + [7, 8, 9, 10], np.int32)  # 40
    starts = np.array([0, 30, -3, 45, 1000, 12], np.int32)
    B = len(starts)

    def at(array, i, pad):
        return array[i] if 0 <= i < len(array) else pad

    want_y = np.zeros((B, rows, cols))
    want_z = np.zeros((B, cols))
    for b in range(B):
        s = at(starts, b - 1, -7)
        e = x[s, 5] if 0 <= s < len(x) else -3.0
        for i in range(rows):
            row = at(idx, s + i, -1)
            want_y[b, i] = (x[row] if 0 <= row < len(x) else 2.5) + e
        want_z[b] = x[s] if 0 <= s < len(x) else 9.0
    ok = True
    for target in ("interp", "emulate"):
        arrays = {"X": x, "idx": idx, "starts": starts,
                  "Y": np.full((B, rows, cols), np.nan, np.float32),
                  "Z": np.full((B, cols), np.nan, np.float32)}
        y, _ = r.flashc_run(r.src, target, arrays, {}, "Y")
        # Z from a second run: one --out per run.
        z, _ = r.flashc_run(r.src, target, arrays, {}, "Z")
        same = np.array_equal(y, want_y.astype(np.float32)) and np.array_equal(
            z, want_z.astype(np.float32))
        print("%s bounds %s: out-of-range scalar reads and gathered rows read "
              "the pad (%s)" % ("PASS" if same else "FAIL", target,
                                "exact" if same else "differs from numpy"))
        ok &= same
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kernel", required=True, choices=["varlen", "paged", "paged_block", "bounds"])
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--kernels-dir", default=os.path.join(HERE, "..", "..", "..", "kernels"))
    ap.add_argument("--nq", type=int, default=40, help="paged: query rows")
    ap.add_argument("--block-m", type=int, default=64, help="paged: BLOCK_M")
    ap.add_argument("--stats", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    check = {"varlen": check_varlen, "paged": check_paged, "bounds": check_bounds,
             "paged_block": lambda a: check_paged(a, "paged_block", 64)}
    ok = check[args.kernel](args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
