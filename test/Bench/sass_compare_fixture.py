"""Writes a FIXTURE sass-compare-before.json (sass-compare.test) from the
checked-in listings: loop-noinc.sass stands for flashc, loop-simple.sass for
both peers, d64 on sm_80. Not real kernels; only the renderer is tested."""
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
from sassprof import profile, sass  # noqa: E402

inputs, out_dir = sys.argv[2], sys.argv[3]


def prof(name):
    with open(os.path.join(inputs, name)) as f:
        return profile.profile_function(sass.find_function(sass.parse(f.read())), "sm_80", 4, 49152)


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
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "sass-compare-before.json"), "w") as f:
    json.dump({"meta": meta, "results": results}, f)
