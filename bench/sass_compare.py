#!/usr/bin/env python3
"""Static SASS comparison of flashc's fa2 with FlashAttention-2, -3 and Triton.

    bash scripts/setup-perf.sh                 # once: the venv with triton, nvdisasm, cuobjdump
    python3 bench/sass_compare.py [--label before|after] [--update-perf docs/perf.md]
    python3 bench/sass_compare.py render [--update-perf docs/perf.md]   # from the JSON only
    python3 bench/sass_compare.py --label hopper --merge \
        --kernels flashc-sm_90a,flashc-sm_90a-e4m3,fa3,fa3-f16,fa3-e4m3,Triton \
        --head-dims 64,128,256
                                        # add rows to the hopper table, keep the others
    python3 bench/sass_compare.py --label backward   # the backward's dK/dV kernels

For head dim 64 and 128 (--head-dims: also 256), causal and not, sm_80 and
sm_90, it compiles
  - flashc: kernels/fa2.tile at its defaults (build/bin/flashc --emit=cubin);
    `flashc-sm_90a` the same for --arch=sm_90a (wgmma), profiled on the H100
    beside the sm_90 builds (a configuration flashc does not compile for
    sm_90a yet is listed with flashc's message); `flashc-sm_90a-e4m3`
    kernels/fa3_fp8.tile (fp8) for sm_90a, non-causal rows beside `fa3-e4m3`;
  - FlashAttention-2: the forward kernel run_mha_fwd_hdimD launches, from the
    flash-attn sdist, with nvcc (bench/peers/fa2.py; one nvcc at a time,
    about a minute each, cached);
  - Triton: the tutorial's fused-attention forward kernel over the tutorial's
    autotuning configs (bench/peers/triton_build.py, in the perf venv); the
    config with the best modelled no-overlap ceiling stands for Triton;
  - FlashAttention-3 (sm_90 only): the forward kernel of the hopper/ kernels
    as built in the wheels on PyPI (bench/peers/fa3.py; no sdist carries
    their sources): `fa3` bf16 from fa3-fwd (its fp16 kernels are disabled),
    `fa3-f16` from flash-attn3-jax (d128 only), `fa3-e4m3` fp8 from fa3-fwd
    (non-causal rows only); warp-specialized, so the attention FLOP and the
    TMA bytes are the consumer warps' (`mma_warps`);
`--label backward` profiles the backward's dK/dV kernels instead, on sm_90
(`--archs sm_80 --kernels flashc-bwd,fa2-bwd`: the A100's),
at head dims 64, 128 and 256 (one primary loop: the walk over query blocks
with its five GEMMs, S = Q K^T, dP = dO V^T, dV += P^T dO, dK += dS^T Q and
dQ += dS K; per backward FLOP, 10 * BLOCK_M * BLOCK_N * D per iteration):
  - `flashc-sm_90a-bwd`, `flashc-bwd`: kernels/flash_attn_bwd.tile at its
    defaults for sm_90a and sm_90; where it makes dK and dV in two passes
    (SPLIT_TILES: sm_90a at head dims 160, 192 and 256), the primary "loop"
    is the leanest loop of each pass, their cycles added per backward FLOP
    of a BLOCK_M query block (the dV pass's BLOCK_M_DV blocks weighted by
    BLOCK_M / BLOCK_M_DV; sassprof.profile.merged_passes);
  - `fa2-bwd`: the dq_dk_dv kernel run_mha_bwd_hdimD launches, from the same
    sdist (bench/peers/fa2.py: the H100's traits; several minutes per nvcc);
  - `fa3-bwd`: FlashAttention-3's backward kernel from flash-attn3-jax (f16,
    d128 only: --head-dims 128 with --merge);
profiles each (bench/sassprof) and writes bench/perf-data/sass-compare-LABEL.json.
`--label hopper` defaults to sm_90 and flashc's, FlashAttention-2's and
Triton's kernels: the Hopper table. `--merge` keeps the label's earlier rows
other than the ones collected (their run is listed in the provenance).
TMA loads (Triton on sm_90; flashc where its sidecar lists tensor maps) count
one K and one V tile per iteration through shared memory.
`render` turns the JSON files present into the Markdown of docs/perf.md's
sass-compare section. Peer sources and builds live in the cache directory
(FLASHC_PERF_CACHE, default ~/.cache/flashc-perf), never in the repository.

A benchmark, not a test: nothing about the numbers is asserted. Exit status:
0 success, 1 a build or a tool failed, 2 bad usage.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import fa2, fa3, flashc_kernels  # noqa: E402
from sassprof import cache, compare_render, model, tools  # noqa: E402
from sass_profile import profile_cubin, sidecar_bwd_tma_bytes, sidecar_tma_bytes  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_DIR = os.path.join(REPO_ROOT, "bench", "perf-data")


def venv_python():
    path = os.path.join(tools.venv_dir(), "bin", "python")
    return path if os.path.exists(path) else None


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def git_commit():
    try:
        head = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO_ROOT, "status", "--porcelain", "--",
                                "lib", "include", "kernels", "dialect"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" (with uncommitted compiler changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def portable(value):
    """Paths in the cache or the checkout written as $FLASHC_PERF_CACHE / ."""
    if isinstance(value, str):
        return value.replace(cache.cache_dir(), "$FLASHC_PERF_CACHE").replace(REPO_ROOT, ".")
    return value


def summarize(prof, meta):
    """A JSON entry: the build's meta data and the profile."""
    out = {key: portable(value) for key, value in meta.items() if key != "sidecar"}
    out["profile"] = prof
    return out


def profile_flashc(args, d, causal, arch, flashc_arch=None, kernel=flashc_kernels.KERNEL):
    flashc_arch = flashc_arch or arch
    try:
        cubin, meta = flashc_kernels.build(REPO_ROOT, args.flashc, d, causal, flashc_arch,
                                           os.path.join(REPO_ROOT, "build", "sass-compare"),
                                           kernel)
    except flashc_kernels.CompileError as exc:
        if flashc_arch == arch:
            raise
        return {"peer": "flashc", "version": "flashc", "flashc_arch": flashc_arch,
                "error": str(exc)}
    # Per attention FLOP: flashc's row sums on the tensor cores are MMAs too.
    # The attention FLOP and the TMA bytes are the MMA warps' (a
    # warp-specialized kernel's producer warpgroup does neither).
    if kernel == flashc_kernels.BWD_KERNEL:
        useful = model.backward_flop(meta["block_m"], meta["block_n"], d, meta["mma_warps"])
        tma = sidecar_bwd_tma_bytes(meta["sidecar"])
    else:
        useful = model.attention_flop(meta["block_m"], meta["block_n"], d, meta["mma_warps"])
        tma = sidecar_tma_bytes(meta["sidecar"])
    prof = profile_cubin(cubin, flashc_arch, meta["num_warps"], meta["smem"],
                         useful_flop=useful, tma_bytes=tma, mma_warps=meta["mma_warps"],
                         passes=meta.get("passes"))
    out = summarize(prof, meta)
    out["flashc_arch"] = flashc_arch
    return out


def profile_flashc_sm90a(args, d, causal, arch):
    if arch != "sm_90":
        raise RuntimeError("flashc-sm_90a is profiled beside sm_90 (--archs sm_90)")
    return profile_flashc(args, d, causal, arch, "sm_90a")


def profile_flashc_sm90a_e4m3(args, d, causal, arch):
    """kernels/fa3_fp8.tile for sm_90a: e4m3 beside FlashAttention-3's."""
    if arch != "sm_90":
        raise RuntimeError("flashc-sm_90a e4m3 is profiled beside sm_90 (--archs sm_90)")
    return profile_flashc(args, d, causal, arch, "sm_90a", flashc_kernels.FP8_KERNEL)


def profile_fa2(args, d, causal, arch):
    cubin, meta = fa2.build(d, causal, arch, nvcc=args.nvcc, log=log)
    return summarize(profile_cubin(cubin, arch, meta["num_warps"], meta["smem"]), meta)


def profile_flashc_bwd(args, d, causal, arch):
    """kernels/flash_attn_bwd.tile (dK, dV and dQ's atomic share) for ARCH."""
    return profile_flashc(args, d, causal, arch, kernel=flashc_kernels.BWD_KERNEL)


def profile_flashc_sm90a_bwd(args, d, causal, arch):
    """kernels/flash_attn_bwd.tile for sm_90a, beside the sm_90 builds."""
    if arch != "sm_90":
        raise RuntimeError("flashc-sm_90a bwd is profiled beside sm_90 (--archs sm_90)")
    return profile_flashc(args, d, causal, arch, "sm_90a", flashc_kernels.BWD_KERNEL)


def profile_fa2_bwd(args, d, causal, arch):
    """FlashAttention-2's dq_dk_dv kernel; its five GEMMs' FLOP is what the
    MMAs of its query-block loop compute."""
    cubin, meta = fa2.build_bwd(d, causal, arch, nvcc=args.nvcc, log=log)
    useful = model.backward_flop(meta["block_m"], meta["block_n"], d, meta["num_warps"])
    prof = profile_cubin(cubin, arch, meta["num_warps"], meta["smem"], useful_flop=useful)
    out = summarize(prof, meta)
    out["pass"] = "backward"
    return out


def profile_fa3(variant):
    """FlashAttention-3's kernel for the variant (fa3.VARIANTS), or an entry
    with the reason when the wheel has none for the configuration."""
    def run(args, d, causal, arch):
        if arch != "sm_90":
            raise RuntimeError("%s is profiled on sm_90 (its cubins are sm_90a)" % variant)
        try:
            cubin, function, meta = fa3.build(variant, d, causal)
        except fa3.NotInWheel as exc:
            wheel = fa3.WHEELS[fa3.VARIANTS[variant][0]]
            return {"peer": variant, "version": "%s %s" % (wheel[0], wheel[1]),
                    "error": "not in the wheel (%s)" % exc, "error_kind": "absent"}
        # Per attention FLOP, over the consumer warps; the producer warpgroup
        # loads one K and one V tile per consumer iteration by TMA.
        mma = meta["mma_warps"]
        useful = model.attention_flop(meta["block_m"], meta["block_n"], d, mma)
        tma = 2 * meta["block_n"] * d * fa3.ELEMENT_BYTES[meta["dtype"]]
        prof = profile_cubin(cubin, "sm_90a", meta["num_warps"], meta["smem"], function,
                             useful_flop=useful, tma_bytes=tma, mma_warps=mma)
        return summarize(prof, meta)
    return run


def profile_fa3_bwd(args, d, causal, arch):
    """FlashAttention-3's backward kernel (flash-attn3-jax, f16, d128):
    per backward FLOP over the consumer warps, Q and dO by TMA per query
    block."""
    if arch != "sm_90":
        raise RuntimeError("FlashAttention-3 bwd is profiled on sm_90 (its cubins are sm_90a)")
    cubin, function, meta = fa3.build_bwd(d, causal)
    mma = meta["mma_warps"]
    useful = model.backward_flop(meta["block_m"], meta["block_n"], d, mma)
    prof = profile_cubin(cubin, "sm_90a", meta["num_warps"], meta["smem"], function,
                         useful_flop=useful, tma_bytes=meta["tma_bytes"], mma_warps=mma)
    return summarize(prof, meta)


def profile_triton(args, d, causal, arch):
    """Every tutorial config, profiled; of those that fit on an SM (a config
    whose shared memory exceeds the SM's is never launched), the one with the
    best no-overlap ceiling (then overlapped) is returned, and every config is
    listed in 'considered'."""
    out_dir = os.path.join(cache.cache_dir(), "build", "triton")
    cmd = [args.venv_python, os.path.join(REPO_ROOT, "bench", "peers", "triton_build.py"),
           "--head-dim", str(d), "--arch", arch, "--out-dir", out_dir,
           "--configs", args.triton_configs] + (["--causal"] if causal else [])
    paths = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                      text=True).stdout.strip().splitlines()[-1])
    considered = []
    for path in paths:
        with open(path) as f:
            meta = json.load(f)
        if "error" in meta:
            considered.append({"config": meta["name"], "error": meta["error"]})
            continue
        meta.update({"peer": "Triton", "version": "triton " + meta["triton"],
                     "smem": meta["shared"]})
        # On sm_90 the K and V tiles come by TMA (tensor descriptors).
        prof = profile_cubin(meta["cubin"], arch, meta["num_warps"], meta["shared"],
                             tma_bytes=2 * meta["block_n"] * d * 2)
        considered.append(summarize(prof, meta))
    ok = [c for c in considered
          if "profile" in c and c["profile"]["occupancy"]["ctas_per_sm"] > 0]
    if not ok:
        raise RuntimeError("no Triton config compiled for d%d %s" % (d, arch))

    def key(c):
        loop = c["profile"]["loops"][c["profile"]["primary_loop"]]
        return (loop["ceiling_no_overlap_tflops"], loop["ceiling_overlapped_tflops"])

    best = dict(max(ok, key=key))
    best["considered"] = [
        {"config": c.get("name", c.get("config")), "error": c.get("error")} if "error" in c else
        {"config": c["name"], "regs": c["profile"]["registers"],
         "ctas_per_sm": c["profile"]["occupancy"]["ctas_per_sm"],
         "overlapped_tflops": key(c)[1], "no_overlap_tflops": key(c)[0]}
        for c in considered]
    return best


def collect(args):
    peers = {"flashc-sm_90a": profile_flashc_sm90a,
             "flashc-sm_90a e4m3": profile_flashc_sm90a_e4m3, "flashc": profile_flashc,
             "FlashAttention-2": profile_fa2, "Triton": profile_triton,
             "flashc-sm_90a bwd": profile_flashc_sm90a_bwd, "flashc bwd": profile_flashc_bwd,
             "FlashAttention-2 bwd": profile_fa2_bwd, "FlashAttention-3 bwd": profile_fa3_bwd}
    peers.update({variant: profile_fa3(variant) for variant in fa3.VARIANTS})
    results = []
    for arch in args.archs:
        for d in args.head_dims:
            for causal in args.causal:
                for name in args.kernels:
                    if causal and name in NONCAUSAL_ONLY:
                        continue
                    log("sass_compare: %s d%d %s %s" % (name, d, "causal" if causal else
                                                        "noncausal", arch))
                    entry = peers[name](args, d, causal, arch)
                    entry.update({"kernel": name, "head_dim": d, "causal": causal, "arch": arch})
                    results.append(entry)
    return {
        "meta": {
            "label": args.label, "commit": git_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": "%s, %s, %d CPU cores" % (platform.node(), platform.machine(),
                                                 os.cpu_count() or 0),
            "command": "python3 bench/sass_compare.py " + " ".join(args.argv),
            "tools": {"nvdisasm": tools.tool_version(tools.require_tool("nvdisasm")),
                      "cuobjdump": tools.tool_version(tools.require_tool("cuobjdump")),
                      "nvcc": tools.tool_version(args.nvcc) if args.nvcc else None,
                      "ptxas (flashc)": tools.tool_version(args.ptxas) if args.ptxas else None},
            "fa2_nvcc_flags": " ".join(fa2.NVCC_FLAGS),
        },
        "results": results,
    }


# The fp8 rows are the non-causal ones (FlashAttention-3's fp8 headline).
NONCAUSAL_ONLY = ("FlashAttention-3 e4m3", "flashc-sm_90a e4m3")
ALIASES = {"fa2": "FlashAttention-2", "fa3": "FlashAttention-3",
           "fa3-f16": "FlashAttention-3 f16", "fa3-e4m3": "FlashAttention-3 e4m3",
           "flashc-sm_90a-e4m3": "flashc-sm_90a e4m3", "fa2-bwd": "FlashAttention-2 bwd",
           "flashc-bwd": "flashc bwd", "flashc-sm_90a-bwd": "flashc-sm_90a bwd",
           "fa3-bwd": "FlashAttention-3 bwd"}
# Head dims each kernel builds (FlashAttention-2's tiles, the one backward of
# flash-attn3-jax, Triton's tutorial
# space; the others report what they cannot build as a row).
HEAD_DIMS = {"FlashAttention-2": (64, 128), "FlashAttention-2 bwd": (64, 128, 192, 256),
             "FlashAttention-3 bwd": (128,)}


def merge(old, new):
    """new's results with old's that new does not replace. The runs they come
    from are listed in meta["merged"]; a kept result's "run" indexes it."""
    key = lambda e: (e["kernel"], e["head_dim"], e["causal"], e["arch"])  # noqa: E731
    fresh = {key(e) for e in new["results"]}
    kept = [e for e in old["results"] if key(e) not in fresh]
    if not kept:
        return new
    earlier = dict(old["meta"])
    merged = earlier.pop("merged", [])
    for entry in kept:
        entry.setdefault("run", len(merged))
    new["meta"]["merged"] = merged + [earlier]
    order = compare_render.KERNELS.index
    new["results"] = sorted(kept + new["results"], key=lambda e: (
        e["arch"], e["head_dim"], e["causal"], order(e["kernel"])))
    return new


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="collect", choices=("collect", "render"))
    ap.add_argument("--label", default="before", choices=compare_render.LABELS)
    ap.add_argument("--archs", help="default sm_80,sm_90 (hopper: sm_90)")
    ap.add_argument("--head-dims", help="default 64,128 (backward: 64,128,256)")
    ap.add_argument("--causal", default="false,true")
    ap.add_argument("--kernels", help="default flashc,FlashAttention-2,Triton "
                                      "(hopper: flashc-sm_90a first); also fa3, fa3-f16, "
                                      "fa3-e4m3 (sm_90); fa2 for FlashAttention-2")
    ap.add_argument("--merge", action="store_true",
                    help="keep the label's earlier rows that this run does not collect")
    ap.add_argument("--triton-configs", default="tutorial", choices=("tutorial", "test"))
    ap.add_argument("--flashc", default=os.path.join(REPO_ROOT, "build", "bin", "flashc"))
    ap.add_argument("--data-dir", default=DATA_DIR)
    ap.add_argument("--update-perf", metavar="DOC", help="rewrite the sass-compare section")
    args = ap.parse_args(argv)
    args.argv = argv
    hopper = args.label == "hopper"
    backward = args.label == "backward"
    if args.archs is None:
        args.archs = "sm_90" if hopper or backward else "sm_80,sm_90"
    if args.kernels is None:
        args.kernels = ("flashc-sm_90a-bwd,flashc-bwd,fa2-bwd" if backward else
                        ("flashc-sm_90a," if hopper else "") + "flashc,FlashAttention-2,Triton")
    if args.head_dims is None:
        args.head_dims = "64,128,256" if backward else "64,128"
    try:
        args.archs = [a for a in args.archs.split(",") if a]
        args.head_dims = [int(d) for d in args.head_dims.split(",") if d]
        args.causal = [{"false": False, "true": True}[c] for c in args.causal.split(",") if c]
        args.kernels = [ALIASES.get(k, k) for k in args.kernels.split(",") if k]
    except (ValueError, KeyError):
        ap.error("--head-dims takes integers, --causal false/true")
    for arch in args.archs:
        if arch not in ("sm_80", "sm_90"):
            ap.error("unsupported arch %s (sm_80, sm_90)" % arch)
    # The backward also at 160 and 192 (flashc's two-pass tiles; FlashAttention-2's hdim192).
    dims = (64, 128, 160, 192, 256) if backward else (64, 128, 256)
    for d in args.head_dims:
        if d not in dims:
            ap.error("unsupported head dim %d (%s)" % (d, ", ".join(map(str, dims))))
    for k in args.kernels:
        if k not in compare_render.KERNELS:
            ap.error("unknown kernel %s (%s)" % (k, ", ".join(compare_render.KERNELS)))
        dims = HEAD_DIMS.get(k)
        if dims and any(d not in dims for d in args.head_dims):
            ap.error("%s builds head dims %s only" % (k, ", ".join(map(str, dims))))
        if (k in fa3.VARIANTS or k == "FlashAttention-3 bwd") and args.archs != ["sm_90"]:
            ap.error("%s is profiled on sm_90 only: --archs sm_90" % k)
    if any(k.startswith("flashc-sm_90a") for k in args.kernels) and args.archs != ["sm_90"]:
        ap.error("flashc-sm_90a is profiled beside sm_90: --archs sm_90")
    return args


def check_tools(args):
    missing = [t for t in ("nvdisasm", "cuobjdump") if not tools.find_tool(t)]
    args.nvcc = fa2.nvcc_path()
    args.ptxas = tools.find_tool("ptxas")
    args.venv_python = venv_python()
    if any(k.startswith("FlashAttention-2") for k in args.kernels) and not args.nvcc:
        missing.append("nvcc (for FlashAttention-2)")
    if any(k.startswith("FlashAttention-3") for k in args.kernels) and not shutil.which("c++filt"):
        missing.append("c++filt (binutils, for FlashAttention-3's kernel names)")
    if "Triton" in args.kernels and not args.venv_python:
        missing.append("the perf venv with triton")
    if any(k.startswith("flashc") for k in args.kernels) and not os.path.exists(args.flashc):
        missing.append(args.flashc + " (build flashc first)")
    if missing:
        raise RuntimeError("missing: %s; %s" % (", ".join(missing), tools.HINT))


def main(argv):
    args = parse_args(argv)

    def path(label):
        return os.path.join(args.data_dir, "sass-compare-%s.json" % label)

    try:
        if args.mode == "collect":
            check_tools(args)
            report = collect(args)
            if args.merge and os.path.exists(path(args.label)):
                with open(path(args.label)) as f:
                    report = merge(json.load(f), report)
            os.makedirs(args.data_dir, exist_ok=True)
            with open(path(args.label), "w") as f:
                json.dump(report, f, indent=1)
            log("sass_compare: wrote %s" % path(args.label))
        reports = {}
        for label in compare_render.LABELS:
            if os.path.exists(path(label)):
                with open(path(label)) as f:
                    reports[label] = json.load(f)
        section = compare_render.render(reports)
        if args.update_perf:
            compare_render.update_perf(args.update_perf, section)
            classes = os.path.join(args.data_dir, compare_render.CLASSES_FILE)
            with open(classes, "w") as f:
                f.write(compare_render.render_classes(reports))
        else:
            sys.stdout.write(section)
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.CalledProcessError) as exc:
        print("sass_compare: error: %s" % exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
