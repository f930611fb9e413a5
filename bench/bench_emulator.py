#!/usr/bin/env python3
"""Emulated FlashAttention-2 throughput: `flashc run kernels/fa2.tile
--target=emulate` at one shape, timed with /usr/bin/time.

Prints wall and user CPU seconds and GFLOP/s = 4 * B * H * Nq * Nk * D / wall
(the two matmuls of attention, causal masking not discounted). The inputs are
standard normal f16 tensors (seeded); the output is written to a scratch
directory and checked to be finite, so a broken run is not timed as a fast one.

    python3 bench/bench_emulator.py --flashc build/bin/flashc \\
        --Nq 2048 --Nk 2048 --D 128 [--repeat 3] [-- EXTRA flashc FLAGS]

The machine may be shared: compare user time as well as wall time.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", default=os.path.join(REPO_ROOT, "build", "bin", "flashc"))
    ap.add_argument("--kernel", default=os.path.join(REPO_ROOT, "kernels", "fa2.tile"))
    for name, default in (("B", 1), ("H", 1), ("Nq", 2048), ("Nk", 2048), ("D", 128)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--repeat", type=int, default=1, help="runs; each is printed")
    ap.add_argument("--threads", type=int, default=0,
                    help="FLASHC_EMULATOR_THREADS for the runs (0: the emulator's default)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("extra", nargs="*", help="more `flashc run` flags (after --)")
    return ap.parse_args()


def timed(cmd, env):
    """(wall s, user s, system s) of one run under /usr/bin/time."""
    done = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S"] + cmd,
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit("flashc exited %d\n$ %s\n%s%s" % (done.returncode, " ".join(cmd),
                                                  done.stdout, done.stderr))
    m = re.search(r"TIME ([0-9.]+) ([0-9.]+) ([0-9.]+)", done.stderr)
    return tuple(float(x) for x in m.groups())


def main():
    args = parse_args()
    rng = np.random.default_rng(args.seed)
    q_shape = (args.B, args.H, args.Nq, args.D)
    kv_shape = (args.B, args.H, args.Nk, args.D)
    flops = 4.0 * args.B * args.H * args.Nq * args.Nk * args.D
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, shape in (("Q", q_shape), ("K", kv_shape), ("V", kv_shape)):
            paths[name] = os.path.join(tmp, name + ".npy")
            np.save(paths[name], rng.standard_normal(shape).astype(np.float16))
        paths["O"] = os.path.join(tmp, "O.npy")  # poisoned: every element must be written
        np.save(paths["O"], np.full(q_shape, np.nan, np.float16))
        out = paths["O"]
        cmd = [args.flashc, "run", args.kernel, "--target=emulate",
               "-D", "HEAD_DIM=%d" % args.D] + args.extra
        for name, path in paths.items():
            cmd += ["--arg", "%s=%s" % (name, path)]
        cmd += ["--arg", "sm_scale=%r" % (1.0 / math.sqrt(args.D)), "--out", "O=" + out]
        print("fa2 emulate B=%d H=%d Nq=%d Nk=%d D=%d threads=%s %s" % (
            args.B, args.H, args.Nq, args.Nk, args.D, args.threads or "default",
            " ".join(args.extra)))
        env = dict(os.environ)
        if args.threads:
            env["FLASHC_EMULATOR_THREADS"] = str(args.threads)
        for _ in range(args.repeat):
            wall, user, system = timed(cmd, env)
            o = np.load(out)
            if not np.isfinite(o.astype(np.float64)).all():
                sys.exit("the output has non-finite elements")
            print("wall %.2f s  user %.2f s  sys %.2f s  %.3f GFLOP/s (wall)  "
                  "%.3f GFLOP/s (user)" % (wall, user, system, flops / wall / 1e9,
                                           flops / max(user, 1e-9) / 1e9))


if __name__ == "__main__":
    main()
