#!/usr/bin/env python3
"""Compiles the Triton tutorial's attention kernel to cubins (no GPU needed).

Run with the perf venv's python (it imports triton):

    VENV/bin/python bench/peers/triton_build.py --head-dim 64 --arch sm_80 \\
        [--causal] --out-dir DIR [--configs tutorial|test]

through `triton.compile(ASTSource(_attn_fwd, ...), target=GPUTarget("cuda", CC, 32))`.
--configs tutorial (default) compiles the tutorial's autotuning space (BLOCK_M
64/128 x BLOCK_N 32/64/128 x num_stages 2/3/4 x num_warps 4/8, with its filters:
BLOCK_N <= HEAD_DIM; causal needs BLOCK_M >= BLOCK_N; on sm_90 no 8 warps for
tiles under 128 x 128); `test` only the tutorial's pytest config (128 x 64,
2 stages, 4 warps). Each config gives NAME.cubin and NAME.json (block sizes,
warps, stages, shared memory, triton and ptxas versions, the command); existing
pairs are reused. Prints one JSON list of the written .json paths.
"""

import argparse
import json
import os
import subprocess
import sys

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9's default, stated

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_attn_kernel  # noqa: E402

SIGNATURE = {"sm_scale": "fp32", "M": "*fp32", "Z": "i32", "H": "i32", "Q": "*fp16",
             "K": "*fp16", "V": "*fp16", "Out": "*fp16", "N_CTX": "i32",
             "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
             "STAGE": "constexpr"}
# What the JIT would specialize for 16-byte aligned tensors and N_CTX % 16 == 0.
DIVISIBLE = ["M", "Q", "K", "V", "Out", "N_CTX"]


def tutorial_configs(head_dim, causal, cc):
    configs = []
    for bm in (64, 128):
        for bn in (32, 64, 128):
            for stages in (2, 3, 4):
                for warps in (4, 8):
                    if bn > head_dim or (causal and bm < bn):
                        continue
                    if cc == 90 and bm * bn < 128 * 128 and warps == 8:
                        continue
                    configs.append((bm, bn, stages, warps))
    return configs


def ptxas_version(cc):
    from triton.backends.nvidia import compiler as nvidia_compiler
    path = nvidia_compiler.get_ptxas(cc).path
    out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def compile_one(head_dim, causal, cc, config, out_dir):
    bm, bn, stages, warps = config
    name = "triton_d%d_%s.sm_%d.m%dn%ds%dw%d" % (head_dim, "causal" if causal else "noncausal",
                                                 cc, bm, bn, stages, warps)
    meta_path = os.path.join(out_dir, name + ".json")
    cubin_path = os.path.join(out_dir, name + ".cubin")
    if os.path.exists(meta_path) and os.path.exists(cubin_path):
        with open(meta_path) as f:
            if json.load(f).get("triton") == triton.__version__:
                return meta_path
    names = list(SIGNATURE)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in DIVISIBLE}
    constexprs = {"HEAD_DIM": head_dim, "BLOCK_M": bm, "BLOCK_N": bn,
                  "STAGE": 3 if causal else 1}
    src = ASTSource(fn=triton_attn_kernel._attn_fwd, signature=SIGNATURE,
                    constexprs=constexprs, attrs=attrs)
    try:
        kernel = triton.compile(src, target=GPUTarget("cuda", cc, 32),
                                options={"num_warps": warps, "num_stages": stages})
    except Exception as exc:  # a config the compiler rejects (e.g. out of shared memory)
        meta = {"name": name, "error": str(exc).splitlines()[0][:200]}
    else:
        with open(cubin_path, "wb") as f:
            f.write(kernel.asm["cubin"])
        meta = {"name": name, "cubin": cubin_path, "function": kernel.metadata.name,
                "shared": kernel.metadata.shared}
    meta.update({"triton": triton.__version__, "ptxas": ptxas_version(cc),
                 "block_m": bm, "block_n": bn, "num_stages": stages, "num_warps": warps,
                 "head_dim": head_dim, "causal": causal, "arch": "sm_%d" % cc,
                 "command": "triton.compile(ASTSource(_attn_fwd, constexprs=%s), "
                            "target=GPUTarget('cuda', %d, 32), options={'num_warps': %d, "
                            "'num_stages': %d})" % (constexprs, cc, warps, stages)})
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta_path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--head-dim", type=int, required=True, choices=(64, 128, 256))
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--arch", required=True, choices=("sm_80", "sm_90"))
    ap.add_argument("--configs", default="tutorial", choices=("tutorial", "test"))
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args(argv)
    cc = int(args.arch.split("_")[1])
    os.makedirs(args.out_dir, exist_ok=True)
    configs = (tutorial_configs(args.head_dim, args.causal, cc) if args.configs == "tutorial"
               else [(128, 64, 2, 4)])
    paths = [compile_one(args.head_dim, args.causal, cc, c, args.out_dir) for c in configs]
    print(json.dumps(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
