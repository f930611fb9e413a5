#!/usr/bin/env python3
"""Compiles the benchmark's kernels to PTX + launch sidecars (runs where flashc is built).

For each kernel (fa2, fa1) x head dim (64, 128) x causal (false, true):

    flashc kernels/KERNEL.tile -D HEAD_DIM=D -D CAUSAL=C --arch=ARCH -o OUT/KERNEL_dD_{causal,noncausal}.ARCH.ptx

which writes the .ptx and its .ptx.json sidecar; then OUT/manifest.json lists
them (kernel, head_dim, causal, arch, files, sha256, flashc version). Carry OUT
to the GPU machine and run bench/bench_attention.py there.

Exit status: 0 success, 1 a flashc run failed, 2 bad usage (including a
flashc binary that does not exist).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Compile the benchmark's flashc kernels to PTX + launch sidecars.")
    ap.add_argument("--flashc", default=os.path.join(benchlib.REPO_ROOT, "build", "bin", "flashc"),
                    help="the flashc binary (default: build/bin/flashc)")
    ap.add_argument("--arch", default="sm_90", choices=benchlib.ARCHS,
                    help="GPU architecture (default: sm_90, H100/H200)")
    ap.add_argument("--out-dir", default=os.path.join(benchlib.REPO_ROOT, "bench", "ptx"),
                    help="where the PTX, sidecars and manifest.json go (default: bench/ptx)")
    ap.add_argument("--kernels-dir", default=os.path.join(benchlib.REPO_ROOT, "kernels"),
                    help="where fa2.tile / fa1.tile are (default: kernels/)")
    ap.add_argument("--kernels", default=",".join(benchlib.FLASHC_KERNELS),
                    help=f"comma list of: {', '.join(benchlib.FLASHC_KERNELS)}")
    ap.add_argument("--head-dims", default="64,128", help="comma list (default: 64,128)")
    ap.add_argument("--causal", default="both", choices=("both", "false", "true"))
    args = ap.parse_args(argv)
    try:
        args.kernels = benchlib.parse_choices(args.kernels, benchlib.FLASHC_KERNELS, "kernel")
        args.head_dims = benchlib.parse_int_list(args.head_dims, "head_dim")
        benchlib.workload([512], args.head_dims, [False])  # validates the head dims
    except benchlib.UsageError as e:
        ap.error(str(e))
    if os.sep not in args.flashc and shutil.which(args.flashc):
        args.flashc = shutil.which(args.flashc)
    if not (os.path.isfile(args.flashc) and os.access(args.flashc, os.X_OK)):
        ap.error(f"flashc not found or not executable: {args.flashc} "
                 f"(build it first, or pass --flashc)")
    for k in args.kernels:
        if not os.path.isfile(os.path.join(args.kernels_dir, k + ".tile")):
            ap.error(f"no {k}.tile in {args.kernels_dir}")
    args.causals = benchlib.parse_causal(args.causal)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.makedirs(args.out_dir, exist_ok=True)
    version = subprocess.run([args.flashc, "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()
    entries = []
    for kernel in args.kernels:
        for d in args.head_dims:
            for causal in args.causals:
                name = benchlib.ptx_basename(kernel, d, causal, args.arch)
                ptx = os.path.join(args.out_dir, name)
                defines = [f"HEAD_DIM={d}", f"CAUSAL={'true' if causal else 'false'}"]
                cmd = [args.flashc, os.path.join(args.kernels_dir, kernel + ".tile")]
                for x in defines:
                    cmd += ["-D", x]
                cmd += [f"--arch={args.arch}", "--emit=ptx", "-o", ptx]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0 or not os.path.exists(ptx + ".json"):
                    sys.stderr.write(r.stderr)
                    print(f"compile_kernels: error: {' '.join(cmd)} failed "
                          f"(exit {r.returncode})", file=sys.stderr)
                    return 1
                sidecar = benchlib.load_sidecar(ptx + ".json")
                entries.append({
                    "kernel": kernel, "head_dim": d, "causal": causal, "arch": args.arch,
                    "ptx": name, "sidecar": name + ".json", "entry": sidecar["entry"],
                    "defines": defines, "sha256": sha256(ptx),
                })
                print(f"wrote {ptx} (+ .json): entry {sidecar['entry']}, grid "
                      f"{sidecar['grid']}, {sidecar['threads_per_cta']} threads, "
                      f"smem {sidecar['shared_memory']}")
    git = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=benchlib.REPO_ROOT,
                         capture_output=True, text=True)
    manifest = {
        "arch": args.arch,
        "git": git.stdout.strip() if git.returncode == 0 else "",
        "flashc_version": version[0] if version else "",
        "kernels": entries,
    }
    path = os.path.join(args.out_dir, "manifest.json")
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"wrote {path} ({len(entries)} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
