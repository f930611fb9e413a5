#!/usr/bin/env python3
"""Static SASS profile of one kernel: its MMA main loop(s), one iteration's
instruction mix by class, and cycle bounds per SM sub-partition.

    python3 bench/sass_profile.py --tile kernels/fa2.tile [-D HEAD_DIM=128 ...] [--arch sm_80]
    python3 bench/sass_profile.py --cubin K.cubin --arch sm_80 --warps 4 --smem 49152
    python3 bench/sass_profile.py --sass K.sass --arch sm_80 [--warps 4] [--smem BYTES]

--tile compiles with flashc (--emit=cubin; warps and shared memory from its
sidecar); --cubin disassembles with nvdisasm and reads registers and stack
with cuobjdump (both from `bash scripts/setup-perf.sh`); --sass reads an
nvdisasm listing as is (what the tests use: no CUDA tool needed).
--json FILE writes the whole profile. Exit status: 0, 1 when the input has no
MMA loop or a tool fails, 2 bad usage.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sassprof import model, profile, render, sass, tools  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compile_tile(flashc, tile, defines, arch, out_dir):
    """flashc FILE.tile -D ... --arch ARCH --emit=cubin; returns (cubin, sidecar)."""
    cubin = os.path.join(out_dir, os.path.splitext(os.path.basename(tile))[0] + ".cubin")
    cmd = [flashc, tile, "--arch=" + arch, "--emit=cubin", "-o", cubin]
    for define in defines:
        cmd[2:2] = ["-D", define]
    subprocess.run(cmd, check=True)
    with open(cubin + ".json") as f:
        return cubin, json.load(f), cmd


def sidecar_launch(sidecar):
    shared = sidecar["shared_memory"]
    return sidecar["num_warps"], shared["static_bytes"] + shared["dynamic_bytes"]


def profile_cubin(cubin, arch, warps, smem, function=None, useful_flop=None, tma_bytes=None,
                  mma_warps=None, passes=None):
    listing = tools.disassemble(cubin)
    fn = sass.find_function(sass.parse(listing), function)
    resources = tools.resource_usage(cubin).get(fn.name)
    return profile.profile_function(fn, arch, warps, smem, resources, useful_flop, tma_bytes,
                                    mma_warps, passes)


def sidecar_attention_flop(sidecar):
    """An attention kernel's FLOP per warp and KV block, from fa2's constants
    (BLOCK_M, BLOCK_N, HEAD_DIM, WARPS) in the sidecar."""
    c = sidecar["constants"]
    return model.attention_flop(c["BLOCK_M"], c["BLOCK_N"], c["HEAD_DIM"], c["WARPS"])


ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f8E4M3FN": 1}


def sidecar_tma_bytes(sidecar):
    """Bytes an attention loop's TMA loads write per iteration: one BLOCK_N x
    HEAD_DIM tile of K and one of V when the sidecar has tensor maps over them
    (the boxes may split a tile; the tile is what one iteration consumes);
    None without tensor maps."""
    maps = {m["tensor"] for m in sidecar.get("tensor_maps", [])}
    if not maps:
        return None
    c = sidecar["constants"]
    dtypes = {p["name"]: p.get("dtype") for p in sidecar["params"]}
    return sum(c["BLOCK_N"] * c["HEAD_DIM"] * ELEMENT_BYTES[dtypes[t]]
               for t in ("K", "V") if t in maps)


def sidecar_bwd_tma_bytes(sidecar):
    """The backward's counterpart of sidecar_tma_bytes: one BLOCK_M x HEAD_DIM
    tile of Q and one of dO per query block when the sidecar has tensor maps
    over them (K and V are loaded once, before the loop); None without."""
    maps = {m["tensor"] for m in sidecar.get("tensor_maps", [])}
    c = sidecar["constants"]
    dtypes = {p["name"]: p.get("dtype") for p in sidecar["params"]}
    tiles = [c["BLOCK_M"] * c["HEAD_DIM"] * ELEMENT_BYTES[dtypes[t]]
             for t in ("Q", "DO") if t in maps]
    return sum(tiles) if tiles else None


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--tile", help="a flashc .tile kernel, compiled with flashc")
    src.add_argument("--cubin", help="a cubin (needs nvdisasm and cuobjdump)")
    src.add_argument("--sass", help="an nvdisasm listing")
    ap.add_argument("-D", dest="defines", action="append", default=[],
                    help="NAME=VALUE for --tile (flashc -D)")
    ap.add_argument("--arch", default="sm_80", choices=("sm_80", "sm_90", "sm_90a"))
    ap.add_argument("--warps", type=int, default=4, help="warps per CTA (default 4)")
    ap.add_argument("--smem", type=int, help="shared bytes per CTA (for occupancy)")
    ap.add_argument("--function", help="the kernel in a multi-kernel cubin or listing")
    ap.add_argument("--flashc", default=os.path.join(REPO_ROOT, "build", "bin", "flashc"))
    ap.add_argument("--json", help="write the profile here")
    ap.add_argument("--tma-bytes", type=int,
                    help="bytes the CTA's TMA loads write into shared memory per "
                         "iteration of a loop that issues them (--tile with "
                         "--attention-flop: K's and V's tiles when the sidecar "
                         "has tensor maps)")
    ap.add_argument("--attention-flop", action="store_true",
                    help="--tile: count the work as the attention FLOP of the "
                         "kernel's BLOCK_M, BLOCK_N, HEAD_DIM and WARPS (fa2's "
                         "constants), not the MMAs' (flashc may add MMAs, e.g. "
                         "row sums on the tensor cores)")
    args = ap.parse_args(argv)
    if args.defines and not args.tile:
        ap.error("-D applies to --tile only")
    if args.attention_flop and not args.tile:
        ap.error("--attention-flop applies to --tile only (fa2's constants come "
                 "from flashc's sidecar)")
    return args


def main(argv):
    args = parse_args(argv)
    try:
        if args.tile:
            with tempfile.TemporaryDirectory() as tmp:
                cubin, sidecar, _ = compile_tile(args.flashc, args.tile, args.defines,
                                                 args.arch, tmp)
                warps, smem = sidecar_launch(sidecar)
                useful = sidecar_attention_flop(sidecar) if args.attention_flop else None
                tma = args.tma_bytes
                if tma is None and args.attention_flop:
                    tma = sidecar_tma_bytes(sidecar)
                # A warp-specialized kernel's WARPS consumers run the MMA loop.
                mma_warps = sidecar.get("constants", {}).get("WARPS", warps)
                prof = profile_cubin(cubin, args.arch, warps, smem, args.function, useful, tma,
                                     mma_warps)
        elif args.cubin:
            prof = profile_cubin(args.cubin, args.arch, args.warps, args.smem, args.function,
                                 tma_bytes=args.tma_bytes)
        else:
            with open(args.sass) as f:
                fn = sass.find_function(sass.parse(f.read()), args.function)
            prof = profile.profile_function(fn, args.arch, args.warps, args.smem,
                                            tma_bytes=args.tma_bytes)
    except (ValueError, KeyError, RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        print("sass_profile: error: %s" % exc, file=sys.stderr)
        return 1
    sys.stdout.write(render.text_report(prof))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(prof, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
