#!/usr/bin/env python3
"""Runs the inference kernels of kernels/ (docs/kernels.md) through `flashc
run` on the interpreter and on the emulator and checks them against float64
(and the emulator against the interpreter):

  check_inference.py --flashc F --workdir W --kernel KIND [--bf16] [-D X=V]...
                     [--lengths N,N,...] [--q-lengths N,...] [--nq N] [--H N]
                     [--H_KV N] [--D N] [--page N] [--splits S,S,...]
                     [--nnew N] [--dense] [--stats] [--slopes H|BH]

KIND:
- varlen: flash_attn_varlen (O and LSE) over sequences of key lengths
  --lengths and query lengths --q-lengths (default: the same) packed into Q,
  K and V; --dense also runs kernels/flash_attn_lse.tile on each sequence
  alone (interp) and requires both targets' varlen output to equal it.
  --stats: the emulator's cp.async reads each Q row once per head and, per
  program, the K/V rows of its own sequence only.
- kvcache: flash_attn_kvcache (O and LSE) with Nq queries per sequence and
  cache_seqlens --lengths over a cache of --page-token pages in shuffled
  order. Every page no sequence uses, every slot past a sequence's end and
  every block-table entry past its last page hold NaN (or name a NaN page),
  so that reading one poisons the output. --dense: also equal to
  kernels/flash_attn_lse.tile over each sequence's K/V gathered from the
  cache (interp). --stats: the emulator's cp.async
  reads exactly Q once plus the K/V rows each program uses (with PACK_GQA
  and one query token: the cache's slots in use, once). -D LEFTPAD=true:
  sequence b's keys start at cache_leftpad[b] (0 to its length; the slots
  before it NaN). -D ALIBI=true: slopes of shape --slopes ([H] or [B, H]).
- split: flash_attn_kvcache_split with each S of --splits, then
  flash_attn_kvcache_combine; O and LSE against float64 and against
  flash_attn_kvcache on the same target.
- append: kvcache_append of --nnew tokens per sequence at cache_seqlens
  --lengths; the cache after it must equal numpy's, bit for bit (NaN
  untouched).
- rotary: kvcache_rotary of --nnew tokens per sequence of --H heads
  (-D ROTARY_DIM, INTERLEAVED, PER_TOKEN) at positions from cache_seqlens
  --lengths; every element within half a unit in the last place of the
  float64 rotation (f32 arithmetic, rounded once), the features past
  ROTARY_DIM bit for bit.

The reference is FlashAttention-2's (bottom-right aligned causal/window,
GQA, softcap; rows that see no key: O = 0, LSE = +inf). Outputs are poisoned
with NaN. Tolerances as check_variant.py's.
"""
import argparse
import math
import os
import re
import subprocess
import sys

import numpy as np

from scratch import remove_scratch


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kernel", required=True,
                    choices=["varlen", "kvcache", "split", "append", "rotary"])
    ap.add_argument("--kernels-dir",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", "kernels"))
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--lengths", default="1,300,17,0,129")
    ap.add_argument("--q-lengths", default=None)
    ap.add_argument("--nq", type=int, default=1)
    ap.add_argument("--H", type=int, default=4)
    ap.add_argument("--H_KV", type=int, default=2)
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--page", type=int, default=16)
    ap.add_argument("--splits", default="1,3,8")
    ap.add_argument("--nnew", type=int, default=3)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--stats", action="store_true")
    ap.add_argument("--slopes", choices=["H", "BH"], default="BH")
    ap.add_argument("--flashc-flag", dest="flashc_flags", action="append", default=[],
                    help="an option for every `flashc run` (e.g. --lean-masks)")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


class Ctx:
    """The options, the random inputs' generator and the flashc runs."""

    def __init__(self, args):
        self.args = args
        defines = dict(d.split("=", 1) for d in args.defines)
        self.causal = defines.get("CAUSAL", "false") == "true"
        self.left = int(defines.get("WINDOW_LEFT", -1))
        self.right = 0 if self.causal else int(defines.get("WINDOW_RIGHT", -1))
        self.softcap = float(defines.get("SOFTCAP", 0))
        self.packed = defines.get("PACK_GQA", "") == "true"
        self.leftpad = defines.get("LEFTPAD", "") == "true"
        self.alibi = defines.get("ALIBI", "") == "true"
        self.paged = defines.get("PAGED", "") == "true"
        self.rng = np.random.default_rng(args.seed)
        self.half = np.float16
        if args.bf16:
            import ml_dtypes
            self.half = ml_dtypes.bfloat16
        self.tol = (1.6e-2, 8e-2) if args.bf16 else (2e-3, 1e-2)
        self.scale = float(np.float32(1 / math.sqrt(args.D)))
        self.tag = "%s-%d" % (args.kernel, os.getpid())
        self.ok = True
        os.makedirs(args.workdir, exist_ok=True)

    def normal(self, shape):
        a = self.rng.standard_normal(shape)
        return np.where(a == 0, 0.5, a).astype(self.half)

    def path(self, name):
        return os.path.join(self.args.workdir, "%s-%s.npy" % (self.tag, name))

    def run(self, kernel, target, inputs, outputs, defines=None, extra=()):
        """flashc run of kernels/KERNEL.tile (-D T=bf16 with --bf16); the outputs
        as float64."""
        cmd = [self.args.flashc, "run", os.path.join(self.args.kernels_dir, kernel + ".tile"),
               "--target=" + target] + self.args.flashc_flags + list(extra)
        if self.args.bf16:
            cmd += ["-D", "T=bf16"]
        for d in self.args.defines if defines is None else defines:
            cmd += ["-D", d]
        if self.args.D != 64:
            cmd += ["-D", "HEAD_DIM=%d" % self.args.D]
        given = any(d.startswith("PAGE_SIZE=") for d in cmd)
        if "PAGE_SIZE" in open(cmd[2]).read() and self.args.page != 16 and not given:
            cmd += ["-D", "PAGE_SIZE=%d" % self.args.page]
        for arg, value in inputs.items():
            if isinstance(value, (float, int)):
                cmd += ["--arg", "%s=%r" % (arg, value)]
            else:
                np.save(self.path(arg), value)
                cmd += ["--arg", "%s=%s" % (arg, self.path(arg))]
        for arg in outputs:
            cmd += ["--out", "%s=%s" % (arg, self.path("out-" + arg))]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("FAIL %s on %s: flashc exited %d\n$ %s\n%s%s" % (
                kernel, target, done.returncode, " ".join(cmd), done.stdout, done.stderr))
        outs = {}
        for arg in outputs:
            out = np.load(self.path("out-" + arg))
            if out.dtype.kind == "V":
                out = out.view(self.half)
            outs[arg] = out
        return outs, done.stdout

    def check(self, what, out, ref, lse=False):
        """Prints PASS/FAIL for out against ref (float64)."""
        out = out.astype(np.float64)
        if lse:
            same_inf = np.array_equal(np.isposinf(out), np.isposinf(ref))
            fin = np.isfinite(ref)
            err = np.abs(out[fin] - ref[fin]) / np.maximum(1, np.abs(ref[fin]))
            worst = float(err.max()) if err.size else 0.0
            good = same_inf and not np.isnan(out).any() and worst < 1e-4
            line = "max scaled abs %.1e, +inf rows %d%s" % (
                worst, int(np.isposinf(ref).sum()), "" if same_inf else " (MISMATCH)")
        else:
            bad = int(np.count_nonzero(~np.isfinite(out)))
            err = out - ref
            norm = np.linalg.norm(ref)
            rel = np.linalg.norm(err) / norm if norm > 0 else np.linalg.norm(err)
            worst = float(np.max(np.abs(err))) if err.size else 0.0
            good = bad == 0 and rel < self.tol[0] and worst < self.tol[1]
            line = "rel %.1e max abs %.1e non-finite %d" % (rel, worst, bad)
        print("%s %s: %s" % ("PASS" if good else "FAIL", what, line))
        self.ok = self.ok and good

    def cleanup(self):
        remove_scratch(self.args.workdir, self.tag)


def attention(c, q, k, v, slopes=None):
    """float64 (O [nq, H, D], LSE [H, nq]) of one sequence: q [nq, H, D], k and
    v [nk, H_KV, D], bottom-right aligned, FlashAttention-2's options; ALiBi
    with slopes [H]."""
    nq, h, d = q.shape
    nk, hkv = k.shape[0], k.shape[1]
    heads = np.arange(h) // (h // hkv)
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("ihd,jhd->hij", q, k[:, heads]) * c.scale
    if c.softcap > 0:
        s = c.softcap * np.tanh(s / c.softcap)
    i = np.arange(nq)[:, None] + (nk - nq)
    j = np.arange(nk)[None, :]
    if slopes is not None:
        s = s - slopes.astype(np.float64)[:, None, None] * np.abs(i - j)[None]
    ok = np.ones((nq, nk), bool)
    if c.left >= 0:
        ok &= j >= i - c.left
    if c.right >= 0:
        ok &= j <= i + c.right
    s = np.where(ok[None], s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True) if nk else np.full((h, nq, 1), -np.inf)
    seen = np.isfinite(row_max)
    p = np.where(ok[None], np.exp(s - np.where(seen, row_max, 0)), 0.0)
    total = p.sum(axis=-1, keepdims=True)
    o = np.einsum("hij,jhd->ihd", p / np.where(seen, total, 1), v[:, heads])
    lse = np.where(seen, row_max + np.log(np.where(seen, total, 1)), np.inf)[..., 0]
    return o, lse


def lengths(text):
    return [int(n) for n in text.split(",")]


def check_forward(c, kernel, inputs, want_o, want_lse, what, check_run_stats, defines=None):
    """Runs a forward kernel on interp and emulate, checks O and LSE against
    the float64 reference and the two targets against each other; with
    --stats, hands the emulator's counters to check_run_stats. Returns the
    outputs by target."""
    outs = {}
    for target in ("interp", "emulate"):
        extra = ["--stats"] if target == "emulate" and c.args.stats else []
        outs[target], text = c.run(kernel, target, inputs, ["O", "LSE"], defines=defines,
                                   extra=extra)
        c.check("%s on %s: O" % (what, target), outs[target]["O"], want_o)
        c.check("%s on %s: LSE" % (what, target), outs[target]["LSE"], want_lse, lse=True)
        if extra:
            check_run_stats(text)
    c.check("%s emulate vs interp: O" % what, outs["emulate"]["O"],
            outs["interp"]["O"].astype(np.float64))
    return outs


def check_varlen(c):
    """flash_attn_varlen: with PAGED the keys live in a paged cache of
    --page-token pages in shuffled order (paged_cache), else in packed K, V;
    with ALIBI the slopes are --slopes [H] or [B, H]."""
    a = c.args
    lk = lengths(a.lengths)
    lq = lengths(a.q_lengths) if a.q_lengths else lk
    B = len(lk)
    cu_q = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lk)]).astype(np.int32)
    q = c.normal((int(cu_q[-1]), a.H, a.D))
    defines = list(a.defines)
    if c.paged:
        k_cache, v_cache, table, pages = paged_cache(c, lk, lk)
        k = np.concatenate([ks for ks, _ in pages])
        v = np.concatenate([vs for _, vs in pages])
        # The packed K and V are not read: NaN, one row.
        kv = {"K": np.full((1, a.H_KV, a.D), np.nan, c.half),
              "V": np.full((1, a.H_KV, a.D), np.nan, c.half),
              "K_cache": k_cache, "V_cache": v_cache, "block_table": table}
        defines.append("PAGE_SIZE=%d" % a.page)
    else:
        k = c.normal((int(cu_k[-1]), a.H_KV, a.D))
        v = c.normal((int(cu_k[-1]), a.H_KV, a.D))
        unread = np.full((1, 1, a.H_KV, a.D), np.nan, c.half)
        kv = {"K": k, "V": v, "K_cache": unread, "V_cache": unread,
              "block_table": np.full((1, 1), -1, np.int32)}
    slopes = np.full((1, a.H), np.nan, np.float32)
    if c.alibi:
        slopes = c.rng.uniform(0.05, 0.6, (B if a.slopes == "BH" else 1, a.H)).astype(np.float32)
    want_o = np.zeros(q.shape)
    want_lse = np.zeros((a.H, len(q)))
    seqs = [(slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])) for b in range(B)]
    for b, (qs, ks) in enumerate(seqs):
        want_o[qs], want_lse[:, qs] = attention(
            c, q[qs], k[ks], v[ks], slopes=slopes[b % len(slopes)] if c.alibi else None)
    inputs = dict(kv, Q=q, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                  O=np.full(q.shape, np.nan, c.half),
                  LSE=np.full(want_lse.shape, np.nan, np.float32), Slopes=slopes,
                  max_seqlen_q=max(lq), sm_scale=c.scale)
    what = "flash_attn_varlen%s q lengths %s k lengths %s H %d H_KV %d D %d %s%s%s" % (
        " bf16" if a.bf16 else "", lq, lk, a.H, a.H_KV, a.D, " ".join(a.defines),
        " page %d" % a.page if c.paged else "",
        " slopes [%s]" % ", ".join(a.slopes) if c.alibi else "")
    outs = check_forward(c, "flash_attn_varlen", inputs, want_o, want_lse, what,
                         lambda text: check_varlen_stats(c, text, lq, lk), defines)
    if a.dense:
        assert not c.alibi and not c.paged, "--dense: flash_attn_lse has no ALiBi or pages"
        pairs = []
        for qs, ks in seqs:
            if qs.stop > qs.start:
                dense = dense_kernel(c, q[qs], k[ks], v[ks])
                pairs += [((out["O"][qs], out["LSE"][:, qs]), dense) for out in outs.values()]
        check_dense(c, "varlen vs flash_attn_lse on each sequence alone", pairs)


def check_varlen_stats(c, text, lq, lk):
    """cp.async reads each Q row once per head and, per program, the K and V
    rows of its own sequence: nothing of another sequence."""
    a = c.args
    assert not c.causal and c.left < 0 and c.right < 0, "--stats: every key is visible"
    defines = dict(d.split("=", 1) for d in a.defines)
    block_m = int(defines.get("BLOCK_M", 128 if a.D <= 64 else 64))
    row = a.D * 2
    q_bytes = sum(lq) * a.H * row
    kv_bytes = 2 * sum(math.ceil(nq / block_m) * a.H * nk * row for nq, nk in zip(lq, lk))
    copied = stat(text, r"cp.async bytes read \(global\)")
    good = copied == q_bytes + kv_bytes
    print("%s varlen stats: cp.async read %d bytes = Q %d + each program's own K/V rows %d "
          "(K and V are %d bytes)" % ("PASS" if good else "FAIL", copied, q_bytes, kv_bytes,
                                      2 * sum(lk) * a.H_KV * row))
    c.ok = c.ok and good


def stat(text, name):
    match = re.search(name + r"\s+(\d+)", text)
    return int(match.group(1)) if match else -1


def paged_cache(c, lens, capacity):
    """A cache of --page-token pages in shuffled order holding sequences of
    `lens` tokens, with pages for `capacity` tokens each; the rest NaN (unused
    pages, slots past each sequence, table entries past its last page)."""
    a = c.args
    page = a.page
    used = [math.ceil(n / page) for n in capacity]
    max_pages = max(used) + 2
    unused = 5
    count = sum(used) + unused
    order = c.rng.permutation(count)
    shape = (count, page, a.H_KV, a.D)
    k_cache = np.full(shape, np.nan, c.half)
    v_cache = np.full(shape, np.nan, c.half)
    table = np.zeros((len(lens), max_pages), np.int32)
    nan_pages = order[sum(used):]
    seqs = []
    taken = 0
    for b, n in enumerate(lens):
        ks, vs = c.normal((n, a.H_KV, a.D)), c.normal((n, a.H_KV, a.D))
        seqs.append((ks, vs))
        for j in range(max_pages):
            if j < used[b]:
                p = order[taken]
                taken += 1
                rows = ks[j * page:(j + 1) * page]
                k_cache[p, :len(rows)] = rows
                v_cache[p, :len(rows)] = vs[j * page:(j + 1) * page]
                table[b, j] = p
            else:
                table[b, j] = nan_pages[(b + j) % unused]
    return k_cache, v_cache, table, seqs


def kvcache_inputs(c):
    a = c.args
    lens = lengths(a.lengths)
    k_cache, v_cache, table, seqs = paged_cache(c, lens, lens)
    B = len(lens)
    # Left padding: from none to the whole sequence; the slots before it NaN.
    pads = [(7 * b + 5) % (n + 1) if c.leftpad else 0 for b, n in enumerate(lens)]
    for b, pad in enumerate(pads):
        for pos in range(pad):
            k_cache[table[b, pos // a.page], pos % a.page] = np.nan
            v_cache[table[b, pos // a.page], pos % a.page] = np.nan
        seqs[b] = (seqs[b][0][pad:], seqs[b][1][pad:])
    slopes = np.zeros((1, a.H), np.float32)
    if c.alibi:
        slopes = c.rng.uniform(0.05, 0.6, (B if a.slopes == "BH" else 1, a.H)).astype(np.float32)
    q = c.normal((B, a.nq, a.H, a.D))
    want_o = np.zeros(q.shape)
    want_lse = np.zeros((B, a.H, a.nq))
    for b in range(B):
        want_o[b], want_lse[b] = attention(c, q[b], *seqs[b],
                                           slopes=slopes[b % len(slopes)] if c.alibi else None)
    inputs = {"Q": q, "K_cache": k_cache, "V_cache": v_cache, "block_table": table,
              "cache_seqlens": np.array(lens, np.int32),
              "cache_leftpad": np.array(pads, np.int32), "Slopes": slopes}
    what = "page %d lengths %s%s Nq %d H %d H_KV %d D %d %s%s" % (
        a.page, lens, " leftpad %s" % pads if c.leftpad else "", a.nq, a.H, a.H_KV, a.D,
        " ".join(a.defines), " slopes [%s]" % ", ".join(a.slopes) if c.alibi else "")
    return inputs, want_o, want_lse, what, seqs


def dense_kernel(c, q, k, v):
    """kernels/flash_attn_lse.tile (interp, the -D options that it shares) on
    one sequence: q [nq, H, D], k and v [nk, H_KV, D]; (O [nq, H, D], LSE [H,
    nq]). Without keys: O = 0, LSE = +inf."""
    if len(k) == 0:
        return np.zeros(q.shape), np.full((q.shape[1], q.shape[0]), np.inf)
    heads = lambda x: np.ascontiguousarray(x.transpose(1, 0, 2)[None])
    shared = ("CAUSAL", "WINDOW_LEFT", "WINDOW_RIGHT", "SOFTCAP")
    o = c.run("flash_attn_lse", "interp",
              {"Q": heads(q), "K": heads(k), "V": heads(v),
               "O": np.full(heads(q).shape, np.nan, c.half),
               "LSE": np.full((1, q.shape[1], q.shape[0]), np.nan, np.float32),
               "sm_scale": c.scale}, ["O", "LSE"],
              defines=[d for d in c.args.defines if d.split("=")[0] in shared])[0]
    return o["O"][0].transpose(1, 0, 2).astype(np.float64), o["LSE"][0].astype(np.float64)


def check_dense(c, what, pairs):
    """pairs: (O, LSE) of a sequence from both targets with the dense
    kernel's; prints the largest differences."""
    worst = [0.0, 0.0]
    for (o, lse), (dense_o, dense_lse) in pairs:
        worst[0] = max(worst[0], float(np.max(np.abs(o.astype(np.float64) - dense_o))))
        inf = np.isinf(dense_lse)
        if not np.array_equal(np.isinf(lse), inf):
            worst[1] = np.inf
        elif (~inf).any():
            err = np.abs(lse[~inf] - dense_lse[~inf]) / np.maximum(1, np.abs(dense_lse[~inf]))
            worst[1] = max(worst[1], float(np.max(err)))
    good = worst[0] < c.tol[1] and worst[1] < 1e-4
    print("%s %s (interp and emulate): O max abs %.1e, LSE max scaled abs %.1e" % (
        "PASS" if good else "FAIL", what, *worst))
    c.ok = c.ok and good


def check_kvcache(c):
    a = c.args
    if a.dense and c.alibi:
        sys.exit("--dense compares with flash_attn_lse, which has no ALiBi")
    inputs, want_o, want_lse, what, seqs = kvcache_inputs(c)
    inputs.update({"O": np.full(want_o.shape, np.nan, c.half),
                   "LSE": np.full(want_lse.shape, np.nan, np.float32), "sm_scale": c.scale})
    what = "flash_attn_kvcache%s %s" % (" bf16" if a.bf16 else "", what)
    outs = check_forward(c, "flash_attn_kvcache", inputs, want_o, want_lse, what,
                         lambda text: check_stats(c, text, lengths(a.lengths)))
    if a.dense:
        pairs = []
        for b, (ks, vs) in enumerate(seqs):
            dense = dense_kernel(c, inputs["Q"][b], ks, vs)
            pairs += [((out["O"][b], out["LSE"][b]), dense) for out in outs.values()]
        check_dense(c, "kvcache vs flash_attn_lse on each sequence's gathered K/V", pairs)


def check_stats(c, text, lens):
    """cp.async reads Q once and, per program, the K and V rows of its
    sequence: with PACK_GQA and Nq = 1 each slot in use exactly once."""
    a = c.args
    assert not c.causal and c.left < 0 and c.right < 0, "--stats: every key is visible"
    defines = dict(d.split("=", 1) for d in a.defines)
    block_m = int(defines.get("BLOCK_M", 16 if c.packed else 64))
    group = a.H // a.H_KV
    programs = (a.nq * math.ceil(group / block_m) * a.H_KV if c.packed
                else math.ceil(a.nq / block_m) * a.H)
    row = a.D * 2
    q_bytes = len(lens) * a.nq * a.H * row
    kv_bytes = 2 * programs * sum(lens) * row
    in_use = 2 * sum(lens) * a.H_KV * row
    copied = stat(text, r"cp.async bytes read \(global\)")
    good = copied == q_bytes + kv_bytes
    print("%s kvcache stats: cp.async read %d bytes = Q %d + K/V rows %d (the cache's slots "
          "in use: %d bytes, %s); global bytes read %d (the rest: cache_seqlens and "
          "block-table entries)" % (
              "PASS" if good else "FAIL", copied, q_bytes, kv_bytes, in_use,
              "each read once" if kv_bytes == in_use else "read by %d programs each"
              % (kv_bytes // in_use), stat(text, "global bytes read")))
    c.ok = c.ok and good


def check_split(c):
    a = c.args
    inputs, want_o, want_lse, what, _ = kvcache_inputs(c)
    combine_defines = []
    for target in ("interp", "emulate"):
        whole = c.run("flash_attn_kvcache", target,
                      dict(inputs, O=np.full(want_o.shape, np.nan, c.half),
                           LSE=np.full(want_lse.shape, np.nan, np.float32), sm_scale=c.scale),
                      ["O", "LSE"])[0]
        for splits in lengths(a.splits):
            parts = c.run("flash_attn_kvcache_split", target,
                          dict(inputs, O_part=np.full((splits,) + want_o.shape, np.nan,
                                                      np.float32),
                               LSE_part=np.full((splits,) + want_lse.shape, np.nan,
                                                np.float32), sm_scale=c.scale),
                          ["O_part", "LSE_part"])[0]
            merged = c.run("flash_attn_kvcache_combine", target,
                           dict(parts, O=np.full(want_o.shape, np.nan, c.half),
                                LSE=np.full(want_lse.shape, np.nan, np.float32)),
                           ["O", "LSE"], defines=combine_defines)[0]
            name = "split %d%s %s on %s" % (splits, " bf16" if a.bf16 else "", what, target)
            c.check(name + ": O", merged["O"], want_o)
            c.check(name + ": LSE", merged["LSE"], want_lse, lse=True)
            c.check(name + ": O vs no split", merged["O"], whole["O"].astype(np.float64))
            c.check(name + ": LSE vs no split", merged["LSE"],
                    whole["LSE"].astype(np.float64), lse=True)


def check_append(c):
    a = c.args
    lens = lengths(a.lengths)
    k_cache, v_cache, table, _ = paged_cache(c, lens, [n + a.nnew for n in lens])
    B = len(lens)
    k_new = c.normal((B, a.nnew, a.H_KV, a.D))
    v_new = c.normal((B, a.nnew, a.H_KV, a.D))
    want_k, want_v = k_cache.copy(), v_cache.copy()
    for b in range(B):
        for i in range(a.nnew):
            pos = lens[b] + i
            p = table[b, pos // a.page]
            want_k[p, pos % a.page] = k_new[b, i]
            want_v[p, pos % a.page] = v_new[b, i]
    bits = lambda x: x.view(np.uint16)
    for target in ("interp", "emulate"):
        outs = c.run("kvcache_append", target,
                     {"K_new": k_new, "V_new": v_new, "K_cache": k_cache, "V_cache": v_cache,
                      "block_table": table, "cache_seqlens": np.array(lens, np.int32)},
                     ["K_cache", "V_cache"])[0]
        same = (np.array_equal(bits(outs["K_cache"]), bits(want_k))
                and np.array_equal(bits(outs["V_cache"]), bits(want_v)))
        changed = int(np.count_nonzero(bits(want_k) != bits(k_cache)))
        print("%s kvcache_append%s page %d lengths %s Nnew %d on %s: the cache equals "
              "numpy's bit for bit (%d elements of K written, the rest untouched)" % (
                  "PASS" if same else "FAIL", " bf16" if a.bf16 else "", a.page, lens,
                  a.nnew, target, changed))
        c.ok = c.ok and same


def rotated(x, cos, sin, positions, interleaved):
    """float64 rotary embedding of x [B, N, H, D]: token i of batch b at row
    positions[b, i] of cos and sin [S, R / 2]."""
    half = cos.shape[1]
    cs = cos.astype(np.float64)[positions][:, :, None, :]
    sn = sin.astype(np.float64)[positions][:, :, None, :]
    y = x.astype(np.float64)
    first, second = ((slice(0, 2 * half, 2), slice(1, 2 * half, 2)) if interleaved
                     else (slice(0, half), slice(half, 2 * half)))
    x1, x2 = y[..., first].copy(), y[..., second].copy()
    y[..., first], y[..., second] = x1 * cs - x2 * sn, x2 * cs + x1 * sn
    return y


def check_rotary(c):
    a = c.args
    defines = dict(d.split("=", 1) for d in a.defines)
    rotary_dim = int(defines.get("ROTARY_DIM", 64))
    interleaved = defines.get("INTERLEAVED", "true") == "true"
    per_token = defines.get("PER_TOKEN", "true") == "true"
    lens = lengths(a.lengths)
    B = len(lens)
    x = c.normal((B, a.nnew, a.H, a.D))
    rows = max(lens) + a.nnew + 3
    angle = c.rng.uniform(0, 2 * np.pi, (rows, rotary_dim // 2))
    cos, sin = np.cos(angle).astype(c.half), np.sin(angle).astype(c.half)
    positions = np.array(lens)[:, None] + (np.arange(a.nnew)[None, :] if per_token else 0)
    positions = np.broadcast_to(positions, (B, a.nnew))
    want = rotated(x, cos, sin, positions, interleaved)
    view = x.shape[:3] + ((a.D // 2, 2) if interleaved else (1, a.D))
    # Half a unit in the last place of T (11 significant bits for f16, 8 for
    # bf16), with f16's subnormal spacing as the floor.
    bits = 8 if a.bf16 else 11
    ulp = np.maximum(2.0 ** (np.floor(np.log2(np.maximum(np.abs(want), 1e-30))) - bits + 1),
                     2.0 ** -24)
    for target in ("interp", "emulate"):
        out = c.run("kvcache_rotary", target,
                    {"X": x.reshape(view), "cos": cos, "sin": sin,
                     "cache_seqlens": np.array(lens, np.int32),
                     "Y": np.full(view, np.nan, c.half)}, ["Y"])[0]["Y"].reshape(x.shape)
        err = np.abs(out.astype(np.float64) - want)
        # 1/2 ulp of rounding f32 to T plus f32's own error, far below it.
        good = bool(np.all(err <= 0.5 * ulp * (1 + 2 ** -8)))
        same = np.array_equal(out[..., rotary_dim:].view(np.uint16),
                              x[..., rotary_dim:].view(np.uint16))
        print("%s kvcache_rotary%s lengths %s Nnew %d H %d D %d %s on %s: rotated within "
              "half an ulp (worst %.2f ulp), the other features %s" % (
                  "PASS" if good and same else "FAIL", " bf16" if a.bf16 else "", lens, a.nnew,
                  a.H, a.D, " ".join(a.defines), target, float(np.max(err / ulp)),
                  "copied bit for bit" if same else "CHANGED"))
        c.ok = c.ok and good and same


def main():
    c = Ctx(parse_args())
    {"varlen": check_varlen, "kvcache": check_kvcache, "split": check_split,
     "append": check_append, "rotary": check_rotary}[c.args.kernel](c)
    c.cleanup()
    return 0 if c.ok else 1


if __name__ == "__main__":
    sys.exit(main())
