"""Writes a FIXTURE sass-compare-before.json (sass-compare.test) from the
checked-in listings: loop-noinc.sass stands for flashc, loop-simple.sass for
both peers, d64 on sm_80. With a fourth argument `hopper`, also an sm_90 row
in it and a sass-compare-hopper.json: flashc sm_90a that does not compile,
flashc sm_90 (loop-simple.sass), Triton (loop-wgmma.sass, with TMA bytes),
FlashAttention-3 (loop-wgmma.sass as a warp-specialized CTA: 4 MMA warps and
a producer warpgroup) and a FlashAttention-3 variant its wheel does not have;
Triton's row is kept from an earlier run (--merge). With `backward`, the
hopper files and a sass-compare-backward.json: flashc sm_90a bwd
(loop-wgmma.sass), flashc bwd and FlashAttention-2 bwd (loop-simple.sass) on
sm_90.
Not real kernels; only the renderer is tested."""
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
from sassprof import profile, sass  # noqa: E402

inputs, out_dir = sys.argv[2], sys.argv[3]


def prof(name, arch="sm_80", tma_bytes=None, warps=4, mma_warps=None):
    with open(os.path.join(inputs, name)) as f:
        return profile.profile_function(sass.find_function(sass.parse(f.read())), arch, warps,
                                        49152, tma_bytes=tma_bytes, mma_warps=mma_warps)


common = {"head_dim": 64, "causal": False, "arch": "sm_80", "num_warps": 4}
results = [
    dict(common, kernel="flashc", version="flashc", block_m=128, block_n=64,
         profile=prof("loop-noinc.sass")),
    dict(common, kernel="FlashAttention-2", version="flash-attn 0.0-fixture", block_m=128,
         block_n=128, profile=prof("loop-simple.sass")),
    dict(common, kernel="Triton", version="triton 0.0-fixture", block_m=128, block_n=64,
         num_stages=3, ptxas="ptxas-fixture", profile=prof("loop-simple.sass"),
         considered=[{"config": "a"}, {"config": "b", "error": "out of resources"}]),
]
meta = {"label": "before", "commit": "fixture", "date": "2026-01-01 00:00 UTC",
        "machine": "fixture", "command": "python3 bench/sass_compare.py --fixture",
        "tools": {"nvdisasm": "nvdisasm 0.0"}, "fa2_nvcc_flags": "-O3"}
backward = sys.argv[4:] == ["backward"]
hopper = sys.argv[4:] == ["hopper"] or backward
if hopper:
    results.append(dict(common, arch="sm_90", kernel="flashc", version="flashc", block_m=128,
                        block_n=64, profile=prof("loop-simple.sass", "sm_90")))
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "sass-compare-before.json"), "w") as f:
    json.dump({"meta": meta, "results": results}, f)
if hopper:
    h90 = dict(common, arch="sm_90")
    rows = [dict(h90, kernel="flashc-sm_90a", version="flashc", flashc_arch="sm_90a",
                 error="flashc exited 1: unsupported arch | sm_90a"),
            dict(h90, kernel="flashc", version="flashc", block_m=128, block_n=64,
                 profile=prof("loop-simple.sass", "sm_90")),
            dict(h90, kernel="Triton", version="triton 0.0-fixture", block_m=64, block_n=32,
                 num_stages=2, ptxas="ptxas-fixture", considered=[{"config": "a"}], run=0,
                 profile=prof("loop-wgmma.sass", "sm_90", tma_bytes=8192)),
            dict(h90, kernel="FlashAttention-3", version="fa3-fwd 0.0-fixture", dtype="bf16",
                 block_m=64, block_n=32, num_warps=8, mma_warps=4, command="cuobjdump fixture",
                 profile=prof("loop-wgmma.sass", "sm_90a", tma_bytes=8192, warps=8,
                              mma_warps=4)),
            dict(h90, kernel="FlashAttention-3 f16", version="flash-attn3-jax 0.0-fixture",
                 error="not in the wheel (no cutlass::half_t d64 non-causal kernel)",
                 error_kind="absent")]
    with open(os.path.join(out_dir, "sass-compare-hopper.json"), "w") as f:
        earlier = {"command": "python3 bench/sass_compare.py --earlier",
                   "date": "2025-12-31 00:00 UTC", "commit": "early"}
        json.dump({"meta": dict(meta, label="hopper", merged=[earlier]), "results": rows}, f)
if backward:
    b90 = dict(common, arch="sm_90", num_warps=8)
    rows = [dict(b90, kernel="flashc-sm_90a bwd", version="flashc", flashc_arch="sm_90a",
                 block_m=64, block_n=128, profile=prof("loop-wgmma.sass", "sm_90a", warps=8)),
            dict(b90, kernel="flashc bwd", version="flashc", block_m=64, block_n=128,
                 profile=prof("loop-simple.sass", "sm_90", warps=8)),
            dict(b90, kernel="FlashAttention-2 bwd", version="flash-attn 0.0-fixture",
                 block_m=128, block_n=128, profile=prof("loop-simple.sass", "sm_90", warps=8))]
    with open(os.path.join(out_dir, "sass-compare-backward.json"), "w") as f:
        json.dump({"meta": dict(meta, label="backward",
                                command="python3 bench/sass_compare.py --label backward"),
                   "results": rows}, f)
