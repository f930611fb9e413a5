"""flashc's fa2 (and the fp8 fa3_fp8, the backward's flash_attn_bwd) at its
defaults, compiled to cubins for the SASS comparison."""

import json
import os
import subprocess

KERNEL = os.path.join("kernels", "fa2.tile")


class CompileError(RuntimeError):
    """flashc rejected the configuration (e.g. an arch whose lowering is not
    there yet); the message is its first diagnostic line."""


# The fp8 (e4m3) forward: FlashAttention-3's e4m3 kernels' counterpart.
FP8_KERNEL = os.path.join("kernels", "fa3_fp8.tile")


# The backward's dK/dV kernel (flash_attn_bwd), FlashAttention-2's
# dq_dk_dv kernel's counterpart.
BWD_KERNEL = os.path.join("kernels", "flash_attn_bwd.tile")


def config_name(head_dim, causal, arch, kernel=KERNEL):
    stem = "flashc" if kernel == KERNEL else os.path.splitext(os.path.basename(kernel))[0]
    return "%s_d%d_%s.%s" % (stem, head_dim, "causal" if causal else "noncausal", arch)


def build(repo_root, flashc, head_dim, causal, arch, out_dir, kernel=KERNEL):
    """flashc KERNEL (kernels/fa2.tile) -D HEAD_DIM=D -D CAUSAL=C --arch=ARCH
    --emit=cubin; returns (cubin, meta) with the sidecar's tile, warps and
    shared memory."""
    os.makedirs(out_dir, exist_ok=True)
    cubin = os.path.join(out_dir, config_name(head_dim, causal, arch, kernel) + ".cubin")
    cmd = [flashc, os.path.join(repo_root, kernel), "-D", "HEAD_DIM=%d" % head_dim,
           "-D", "CAUSAL=%s" % ("true" if causal else "false"), "--arch=" + arch,
           "--emit=cubin", "-o", cubin]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.strip()]
        first = lines[0] if lines else "exit status %d" % done.returncode
        raise CompileError(first.split("error: ", 1)[-1])
    with open(cubin + ".json") as f:
        sidecar = json.load(f)
    constants = sidecar["constants"]
    shared = sidecar["shared_memory"]
    meta = {"peer": "flashc", "version": "flashc", "sidecar": sidecar,
            "block_m": constants["BLOCK_M"], "block_n": constants["BLOCK_N"],
            "num_warps": sidecar["num_warps"],
            # The warps that run the MMA loop: all but a warp-specialized
            # kernel's producer warpgroup (the block's extra 4 warps).
            "mma_warps": constants.get("WARPS", sidecar["num_warps"]),
            "smem": shared["static_bytes"] + shared["dynamic_bytes"],
            "command": "flashc %s -D HEAD_DIM=%d -D CAUSAL=%s --arch=%s "
                       "--emit=cubin -o OUT.cubin" % (kernel, head_dim,
                                                      "true" if causal else "false", arch)}
    if kernel == FP8_KERNEL:
        meta["dtype"] = "e4m3"
    if kernel == BWD_KERNEL:
        meta["pass"] = "backward"
        # dK (and dQ's share), then dV over query blocks of BLOCK_M_DV rows:
        # each pass's iterations per BLOCK_M query rows.
        if constants.get("SPLIT_TILES"):
            meta["passes"] = [1.0, constants["BLOCK_M"] / constants["BLOCK_M_DV"]]
    return cubin, meta
