#!/usr/bin/env python3
"""Every kernel of kernels/ compiled for sm_90a and checked numerically on the
emulator (whose sanitizer checks wgmma, TMA, mbarriers and every access)
against the tile-level interpreter and a float64 reference.

  check_sm90a.py --flashc F --workdir W [--kernel NAME]... [--d 64,128,256]
                 [--dtype f16,bf16] [--case TEXT] [--full] [--list]

KERNELS below is the one list: each kernel, the helper that checks it (the
checks and references of check_kernel.py, check_variant.py,
check_inference.py and check_backward.py, each run with
--flashc-flag=--arch=sm_90a), the head dims it is checked at and its
cases: causal and not, sliding windows, tails (lengths that are not
multiples of the blocks), Nq != Nk, GQA, at the kernel's default blocks for
sm_90a (the tiles the Hopper path compiles). For each selected kernel, head
dim and type the script runs one case, taking the kernel's cases in turn
(every case runs at least once); --full runs every case at every head dim
and type; --case keeps the cases whose description contains TEXT. Each
case prints the helper's PASS/FAIL lines, then one line

  PASS|FAIL sm_90a KERNEL d=D TYPE [MMA] CASE

where the bracket says which MMA the kernel's sm_90a SIMT program issues
(`flashc --emit=simt` with the case's constants, f16 source): wgmma,
mma.sync, or wgmma+mma.sync, and `, warp-specialized` where it has a
producer warpgroup (setmaxnreg). A kernel marked `wgmma` (every forward
attention kernel) fails a case whose program issues anything but wgmma
alone; one marked `specialized` (the flash_attn family, the backward's
dK/dV kernels; the paged kernels at any page size, whose producer
warpgroup issues cp.async) fails a case at its default tiles whose
program has no producer warpgroup (unless the case sets a define of its
`unspecialized`), and one with `also_specialized` (the backward's
deterministic dQ) when one of its `also` kernels has none; their brackets
say which. At the end
`sm_90a: N cases, M passed, W warp-specialized`. Exit code 0 when every case
passes (and at least one ran).
"""
import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS_DIR = os.path.join(HERE, "..", "..", "kernels")
ARCH = "--arch=sm_90a"


@dataclass(frozen=True)
class Case:
    """A problem and the kernel constants it is compiled with. Attention
    shapes: B, H, H_KV (0: H), Nq, Nk; inference: lengths (key lengths per
    sequence), q_lengths (varlen), nq (queries per sequence), page, splits."""
    what: str
    defines: tuple = ()
    B: int = 1
    H: int = 2
    H_KV: int = 0
    Nq: int = 0
    Nk: int = 0
    lengths: str = ""
    q_lengths: str = ""
    nq: int = 1
    page: int = 0
    splits: str = ""
    q_scale: float = 1.0


# Every head dim the forward kernels take (multiples of 16 up to 256): all
# of them issue warpgroup MMAs (K and V rows in column blocks of the widest
# swizzle span that divides them). --d picks among them (default 64, 128,
# 256).
WGMMA_DIMS = tuple(range(16, 257, 16))


@dataclass(frozen=True)
class Kernel:
    name: str           # kernels/NAME.tile: the one `--emit=simt` probes
    helper: str         # kernel, variant, inference or backward
    cases: tuple
    dims: tuple = WGMMA_DIMS
    bf16: bool = True
    kind: str = ""      # check_inference.py's --kernel
    also: tuple = ()    # the other kernels its helper runs
    wgmma: bool = True  # its MMAs must all be warpgroup MMAs (no mma.sync)
    # d -> whether its default tiles have a producer warpgroup, or (d, case) ->
    # whether the case's program has one
    specialized: object = None
    unspecialized: tuple = ()   # case defines whose mode its producer tiles leave out
    # (name, d, defines) -> whether the `also` kernel NAME's default tiles
    # have a producer warpgroup in the case
    also_specialized: object = None
    flags: tuple = ()   # more arguments of its helper


# The attention cases of the forward variants and the backward kernels.
TAILS = Case("tails, Nq > Nk, B*H > 1", B=2, H=2, Nq=77, Nk=50)
CAUSAL_GQA = Case("causal, GQA, Nq < Nk", ("CAUSAL=true",), H=4, H_KV=2, Nq=45, Nk=100)
CAUSAL_EMPTY = Case("causal, Nq > Nk (rows that see no key), MQA", ("CAUSAL=true",),
                    H=3, H_KV=1, Nq=90, Nk=40)
WINDOW = Case("window left and right, Nq < Nk", ("WINDOW_LEFT=20", "WINDOW_RIGHT=5"),
              H=2, Nq=70, Nk=100)
WINDOW_CAUSAL = Case("causal + window + soft-cap, GQA, large scores",
                     ("CAUSAL=true", "WINDOW_LEFT=30", "SOFTCAP=10.0"),
                     H=2, H_KV=1, Nq=60, Nk=90, q_scale=4.0)
ATTENTION = (TAILS, CAUSAL_GQA, WINDOW, CAUSAL_EMPTY, WINDOW_CAUSAL)
# V with a head dim of its own (HEAD_DIM_V), narrower and wider than Q/K's.
V_NARROW = Case("V head dim 64, causal, GQA, tails", ("HEAD_DIM_V=64", "CAUSAL=true"),
                H=4, H_KV=2, Nq=77, Nk=150)
V_WIDE = Case("V head dim 256, window, Nq > Nk", ("HEAD_DIM_V=256", "WINDOW_LEFT=30"),
              B=2, H=2, Nq=90, Nk=70)


def EVERY_DIM(d):
    return True


def BWD_DIMS(d):
    """The dK/dV kernels' head dims with a producer at their default tiles."""
    return d <= 96 or d == 128


def DQ_DIMS(name, d, defines):
    """The deterministic dQ kernels (NAME ends in _dq) up to 144."""
    return name.endswith("_dq") and d <= 144


KERNELS = [
    # fa2 and fa1 (check_kernel.py): causal is their only mask; no GQA.
    Kernel("fa2", "kernel", (
        Case("tails, Nq > Nk, B*H > 1", B=2, H=1, Nq=150, Nk=70),
        Case("causal, Nq < Nk, 3 key blocks", ("CAUSAL=true",), H=1, Nq=130, Nk=300),
        Case("causal, Nq > Nk (rows that see no key)", ("CAUSAL=true",), H=2, Nq=130,
             Nk=40),
        # Constants away from the defaults: one warpgroup (4 warps), narrow
        # key blocks (wgmma N 32 and 16), 3 stages and 1.
        Case("BLOCK_M 64 (4 warps), BLOCK_N 32, 3 stages, causal",
             ("BLOCK_M=64", "WARPS=4", "BLOCK_N=32", "STAGES=3", "CAUSAL=true"),
             H=1, Nq=150, Nk=200),
        Case("BLOCK_M 64 (4 warps), BLOCK_N 16, 1 stage", ("BLOCK_M=64", "WARPS=4", "BLOCK_N=16",
                                                          "STAGES=1"),
             H=1, Nq=100, Nk=90))),
    Kernel("fa1", "kernel", (
        Case("tails, Nq > Nk, B*H > 1", B=2, H=1, Nq=77, Nk=50),
        Case("causal, Nq < Nk", ("CAUSAL=true",), H=1, Nq=45, Nk=100),
        Case("causal, Nq > Nk (rows that see no key)", ("CAUSAL=true",), H=1, Nq=70,
             Nk=33)), bf16=False),
    # HOPPER_TILES at every head dim.
    Kernel("flash_attn", "variant", ATTENTION + (V_NARROW, V_WIDE), specialized=EVERY_DIM),
    Kernel("flash_attn_lse", "variant", (CAUSAL_EMPTY, WINDOW_CAUSAL, TAILS, WINDOW, V_WIDE,
                                         V_NARROW),
           specialized=EVERY_DIM),
    Kernel("flash_attn_alibi", "variant", (TAILS, WINDOW_CAUSAL, CAUSAL_GQA, V_NARROW, V_WIDE),
           specialized=EVERY_DIM),
    Kernel("flash_attn_alibi_lse", "variant", (CAUSAL_GQA, TAILS, WINDOW_CAUSAL, V_WIDE,
                                               V_NARROW),
           specialized=EVERY_DIM),
    Kernel("flash_attn_bias", "variant", (CAUSAL_GQA, TAILS, WINDOW, V_NARROW, V_WIDE),
           specialized=EVERY_DIM),
    Kernel("flash_attn_key_mask", "variant", (TAILS, CAUSAL_EMPTY, WINDOW, V_WIDE, V_NARROW),
           specialized=EVERY_DIM),
    Kernel("flash_attn_varlen", "inference", (
        Case("lengths 1, 100, 17, 0, 70 (a sequence without keys), GQA",
             H=4, H_KV=2, lengths="1,100,17,0,70"),
        Case("causal + window + soft-cap, q lengths != k lengths, MQA",
             ("CAUSAL=true", "WINDOW_LEFT=40", "SOFTCAP=10.0"), H=3, H_KV=1,
             q_lengths="1,70,30,5", lengths="1,100,17,0"),
        Case("window right only, q lengths > k lengths", ("WINDOW_RIGHT=3",), H=2, H_KV=1,
             q_lengths="33,64,1", lengths="20,64,20"),
        Case("causal, ALiBi [B, H], keys through pages of 16, GQA",
             ("CAUSAL=true", "ALIBI=true", "PAGED=true"), H=4, H_KV=2,
             q_lengths="1,70,30,5", lengths="1,100,17,0", page=16),
        # Sequences of several key blocks: sm_90a's producer refills its ring
        # for rounds, every block a TMA box of rows in the packed tensor.
        Case("long sequences, ALiBi [B, H] + window, GQA", ("ALIBI=true", "WINDOW_LEFT=150"),
             H=4, H_KV=2, q_lengths="200,5,130", lengths="420,300,129")), kind="varlen",
           specialized=EVERY_DIM,
           # At 240 its paged (gathered) 64-key blocks spill with P V on wgmma:
           # its 8-key blocks keep P V on mma.sync there.
           dims=tuple(d for d in WGMMA_DIMS if d != 240)),
    Kernel("flash_attn_kvcache", "inference", (
        Case("decode, GQA packed, pages of 16", ("PACK_GQA=true",), H=4, H_KV=2,
             lengths="1,100,17,0,70", page=16),
        Case("chunked prefill, causal + window, pages of 48", ("CAUSAL=true", "WINDOW_LEFT=20"),
             H=4, H_KV=2, nq=5, lengths="100,47,48,0,1", page=48),
        Case("Nq 3, causal, GQA packed + soft-cap", ("PACK_GQA=true", "CAUSAL=true",
                                                      "SOFTCAP=5.0"),
             H=4, H_KV=1, nq=3, lengths="70,1,33", page=32),
        Case("decode, GQA packed, left padding + ALiBi", ("PACK_GQA=true", "LEFTPAD=true",
                                                          "ALIBI=true"),
             H=4, H_KV=2, lengths="1,100,17,0,70", page=16),
        # Pages of a multiple of BLOCK_N: whole key blocks within one page
        # (windows) beside the gathered last block, all issued by the
        # producer warpgroup; one page per sequence is a cache without a
        # block table (its slots past the sequence NaN, never read).
        Case("Nq 2 plain, causal + soft-cap, pages of 64", ("CAUSAL=true", "SOFTCAP=5.0"),
             H=4, H_KV=2, nq=2, lengths="200,64,17,0,130", page=64),
        Case("decode, GQA packed, ALiBi + window, one page per sequence",
             ("PACK_GQA=true", "ALIBI=true", "WINDOW_LEFT=90"), H=4, H_KV=2,
             lengths="1,200,17,0,256", page=256)), kind="kvcache",
           specialized=EVERY_DIM),
    Kernel("flash_attn_kvcache_split", "inference", (
        Case("decode, GQA packed, S = 1, 3", H=4, H_KV=2, lengths="1,100,17,0,70", page=16,
             splits="1,3"),
        Case("Nq 3, causal + window, S = 3", ("CAUSAL=true", "WINDOW_LEFT=40"), H=4, H_KV=2,
             nq=3, lengths="100,17,0,2", page=16, splits="3"),
        Case("Nq 3 plain, causal, left padding + ALiBi, S = 3",
             ("PACK_GQA=false", "CAUSAL=true", "LEFTPAD=true", "ALIBI=true"), H=4, H_KV=2,
             nq=3, lengths="100,17,0,2", page=48, splits="3"),
        Case("decode, GQA packed, pages of 64, S = 2", H=4, H_KV=1, lengths="200,64,17,0",
             page=64, splits="2"),
        Case("Nq 2 plain, window right, one page per sequence, S = 3",
             ("PACK_GQA=false", "WINDOW_RIGHT=1"), H=4, H_KV=2, nq=2,
             lengths="256,130,1,0", page=256, splits="3")),
           kind="split", also=("flash_attn_kvcache_combine", "flash_attn_kvcache"),
           specialized=EVERY_DIM),
    Kernel("kvcache_append", "inference", (
        Case("3 new tokens at page boundaries and inside pages", H=4, H_KV=2,
             lengths="1,47,17,0,32", page=16),), kind="append", wgmma=False),
    Kernel("kvcache_rotary", "inference", (
        Case("GPT-J pairs over 32 features, per token, 5 heads", ("ROTARY_DIM=32",), H=5,
             lengths="0,5,30"),
        Case("GPT-NeoX halves over 64 features, all tokens at cache_seqlens",
             ("ROTARY_DIM=64", "INTERLEAVED=false", "PER_TOKEN=false"), H=3,
             lengths="7,0")), kind="rotary", wgmma=False),
    # 128-key wgmma tiles with a producer warpgroup (HOPPER_TILES; at 144 only
    # with DETERMINISTIC, which the probe does not set; two or three passes from
    # 160 to 256), not with a left window; the deterministic dQ's up to 144.
    Kernel("flash_attn_bwd", "backward", (TAILS, CAUSAL_GQA, WINDOW, CAUSAL_EMPTY,
                                          WINDOW_CAUSAL),
           also=("flash_attn_bwd_preprocess", "flash_attn_bwd_dq_convert",
                 "flash_attn_bwd_dq"), wgmma=False,
           specialized=lambda d: BWD_DIMS(d) or d == 112 or d >= 160, unspecialized=("WINDOW_LEFT=",), also_specialized=DQ_DIMS),
    # ALiBi slopes [B, H] (check_backward.py --alibi).
    Kernel("flash_attn_bwd_alibi", "backward", (TAILS, CAUSAL_GQA, WINDOW_CAUSAL),
           also=("flash_attn_bwd_preprocess", "flash_attn_bwd_dq_convert",
                 "flash_attn_bwd_dq_alibi"), wgmma=False, flags=("--alibi",),
           specialized=BWD_DIMS, unspecialized=("WINDOW_LEFT=",), also_specialized=DQ_DIMS),
    # Packed sequences (check_backward.py --varlen q_lengths lengths).
    Kernel("flash_attn_varlen_bwd", "backward", (
        Case("q lengths 1, 70, 30, 0; k lengths 20, 100, 17, 5, GQA", H=4, H_KV=2,
             q_lengths="1,70,30,0", lengths="20,100,17,5"),
        Case("causal + window + soft-cap, MQA, large scores",
             ("CAUSAL=true", "WINDOW_LEFT=40", "SOFTCAP=10.0"), H=3, H_KV=1,
             q_lengths="1,70,30,5", lengths="1,100,17,9", q_scale=4.0)),
           also=("flash_attn_bwd_preprocess", "flash_attn_bwd_dq_convert",
                 "flash_attn_varlen_bwd_dq"), wgmma=False, specialized=lambda d: d <= 80,
           unspecialized=("WINDOW_LEFT=",), also_specialized=DQ_DIMS),
]


def helper_command(args, kernel, case, d, dtype):
    """The helper's command line for one case."""
    script = os.path.join(HERE, "check_%s.py" % kernel.helper)
    cmd = [sys.executable, script, "--flashc", args.flashc, "--workdir", args.workdir,
           "--flashc-flag=" + ARCH]
    for dfn in case.defines:
        cmd += ["-D", dfn]
    cmd += list(kernel.flags)
    if dtype == "bf16":
        cmd.append("--bf16")  # the helpers compile with -D T=bf16 and use bf16 tolerances
    if kernel.helper == "kernel":
        cmd += ["--kernel", kernel.name, "--target", "emulate", "--B", str(case.B),
                "--H", str(case.H), "--Nq", str(case.Nq), "--Nk", str(case.Nk),
                "--D", str(d)]
    elif kernel.helper in ("variant", "backward"):
        if kernel.helper == "variant":
            cmd += ["--kernel", kernel.name]
        cmd += ["--B", str(case.B), "--H", str(case.H), "--H_KV", str(case.H_KV),
                "--Nq", str(case.Nq), "--Nk", str(case.Nk), "--D", str(d)]
        if case.q_lengths:
            cmd += ["--varlen", case.q_lengths, case.lengths]
        if case.q_scale != 1.0:
            cmd += ["--q-scale", str(case.q_scale)]
    else:
        cmd += ["--kernel", kernel.kind, "--H", str(case.H), "--H_KV",
                str(case.H_KV or case.H), "--D", str(d), "--lengths", case.lengths,
                "--nq", str(case.nq)]
        if case.q_lengths:
            cmd += ["--q-lengths", case.q_lengths]
        if case.page:
            cmd += ["--page", str(case.page)]
        if case.splits:
            cmd += ["--splits", case.splits]
    return cmd


def mma_path(args, kernel, case, d, name=None):
    """'wgmma', 'mma.sync', 'wgmma+mma.sync' or 'no MMA': what the kernel's
    (or its `also` kernel NAME's) sm_90a SIMT program issues."""
    cmd = [args.flashc, os.path.join(KERNELS_DIR, (name or kernel.name) + ".tile"), ARCH,
           "--emit=simt", "-o", "-"]
    defines = list(case.defines)
    if kernel.kind in ("kvcache", "split", "append", "varlen") and case.page:
        defines.append("PAGE_SIZE=%d" % case.page)
    for dfn in defines + ["HEAD_DIM=%d" % d]:
        cmd += ["-D", dfn]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return "does not compile: " + done.stderr.strip()
    wgmma, sync = "wgmma.mma_async" in done.stdout, "mma.sync" in done.stdout
    if wgmma:
        path = "wgmma+mma.sync" if sync else "wgmma"
    else:
        path = "mma.sync" if sync else "no MMA"
    if "nvvm.setmaxregister" in done.stdout:
        path += ", warp-specialized"
    return path


def expects_producer(kernel, case, d):
    """Whether the case's program must have a producer warpgroup: the kernel's
    `specialized` says so at d and the case keeps the default tiles."""
    tiles = ("WARPS=", "BLOCK_M=", "BLOCK_N=", "HOPPER_TILES=", "PAGED=true")
    if kernel.specialized is None or any(dfn.startswith(tiles) for dfn in case.defines):
        return False
    if kernel.unspecialized and any(dfn.startswith(kernel.unspecialized) for dfn in case.defines):
        return False
    if kernel.specialized.__code__.co_argcount == 2:
        return kernel.specialized(d, case)
    return kernel.specialized(d)


def also_producers(args, kernel, case, d):
    """[(name, has a producer)] for the `also` kernels that must have one in
    the case (also_specialized) at their default tiles."""
    tiles = ("WARPS=", "BLOCK_M=", "BLOCK_N=", "HOPPER_TILES=")
    if kernel.also_specialized is None or any(dfn.startswith(tiles) for dfn in case.defines):
        return []
    return [(name, mma_path(args, kernel, case, d, name).endswith(", warp-specialized"))
            for name in kernel.also if kernel.also_specialized(name, d, case.defines)]


def selected_cases(args, kernel):
    """[(d, dtype, case)]: one case per head dim and type in turn (every case at
    least once), or with --full every case at each."""
    combos = [(d, t) for d in kernel.dims if d in args.d for t in args.dtype
              if t == "f16" or kernel.bf16]
    cases = [c for c in kernel.cases if args.case in c.what]
    if not combos or not cases:
        return []
    if args.full:
        return [(d, t, c) for d, t in combos for c in cases]
    n = max(len(combos), len(cases))
    return [combos[i % len(combos)] + (cases[i % len(cases)],) for i in range(n)]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kernel", action="append", default=[],
                    choices=[k.name for k in KERNELS], help="default: all")
    ap.add_argument("--d", default="64,128,256", help="head dims")
    ap.add_argument("--dtype", default="f16,bf16")
    ap.add_argument("--case", default="", help="only the cases whose description contains this")
    ap.add_argument("--full", action="store_true", help="every case at every head dim and type")
    ap.add_argument("--list", action="store_true", help="print the helper commands only")
    args = ap.parse_args()
    args.d = [int(x) for x in args.d.split(",")]
    args.dtype = args.dtype.split(",")
    return args


def main():
    args = parse_args()
    kernels = [k for k in KERNELS if not args.kernel or k.name in args.kernel]
    ran = passed = producers = 0
    for kernel in kernels:
        for d, dtype, case in selected_cases(args, kernel):
            cmd = helper_command(args, kernel, case, d, dtype)
            if args.list:
                print(" ".join(cmd))
                continue
            path = mma_path(args, kernel, case, d)
            start = time.time()
            done = subprocess.run(cmd, capture_output=True, text=True)
            mma, _, specialized = path.partition(", ")
            others = also_producers(args, kernel, case, d)
            good = done.returncode == 0 and not path.startswith("does not compile") \
                and (not kernel.wgmma or mma == "wgmma") \
                and (not expects_producer(kernel, case, d) or bool(specialized)) \
                and all(has for _, has in others)
            path += "".join("; %s%s warp-specialized" % (name, "" if has else " not")
                            for name, has in others)
            sys.stdout.write(done.stdout)
            if done.returncode != 0:
                sys.stdout.write(done.stderr)
            print("%s sm_90a %s d=%d %s [%s] %s (%.1f s)" % (
                "PASS" if good else "FAIL", kernel.name, d, dtype, path, case.what,
                time.time() - start))
            sys.stdout.flush()
            ran += 1
            passed += good
            producers += bool(specialized)
    if not args.list:
        print("sm_90a: %d cases, %d passed, %d warp-specialized" % (ran, passed, producers))
    return 0 if ran and passed == ran else 1


if __name__ == "__main__":
    sys.exit(main())
