#!/usr/bin/env python3
"""Runs a kernel of kernels/ through `flashc run` and checks it against float64.

With --target other than interp, the output must also agree with the
tile-level interpreter's (--target=interp) within the same tolerance.

What each kernel takes, its float64 reference and its tolerance are its spec
in kernel_specs.py; the problem sizes (--B, --Nq, --rows, ...) are the spec's.
Inputs are random (never zeros) and outputs are poisoned with NaN before the
run, so an element the kernel never writes fails the check. The reference is
computed in float64 from the very f16/f32 values the kernel reads.

With --bf16 the kernel runs in bf16: compiled with -D T=bf16 (its type
constant), its float16 tensors ml_dtypes.bfloat16 arrays saved by np.save
(descr '<V2'; with --bf16-bits their raw bits as uint16, '<u2'), its output
read back with np.load(f).view(ml_dtypes.bfloat16), within the spec's
bf16_tolerance.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from kernel_specs import SPECS


def parse_defines(defines):
    values = {}
    for d in defines:
        name, _, value = d.partition("=")
        values[name] = value
    return values


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernel", required=True, choices=sorted(SPECS))
    ap.add_argument("--kernels-dir",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", "kernels"))
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--target", default="interp")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--flashc-flag", dest="flashc_flags", action="append", default=[],
                    help="an option for `flashc run` (e.g. --defer-loop-sums)")
    sizes = {}
    for spec in SPECS.values():
        sizes.update(spec.sizes)
    for size, default in sizes.items():
        ap.add_argument("--" + size, type=int, default=default)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bf16", action="store_true",
                    help="run the kernel with bf16 in place of f16")
    ap.add_argument("--bf16-bits", action="store_true",
                    help="with --bf16: pass the bf16 inputs as uint16 bits")
    return ap.parse_args()


def save_input(path, array, bits):
    """np.save; bf16 arrays as their raw bits (uint16) if `bits`."""
    if bits and array.dtype.itemsize == 2 and array.dtype != np.float16:
        array = array.view(np.uint16)
    np.save(path, array)


def load_output(path, bf16):
    """The output in float64; bf16 the way users read it back."""
    out = np.load(path)
    if bf16:
        import ml_dtypes
        out = out.view(ml_dtypes.bfloat16)
    return out.astype(np.float64)


def compare(out, expected):
    """(relative L2 error, max abs error)."""
    err = out - expected
    norm = np.linalg.norm(expected)
    rel = np.linalg.norm(err) / norm if norm > 0 else np.linalg.norm(err)
    return rel, (float(np.max(np.abs(err))) if err.size else 0.0)


def main():
    args = parse_args()
    spec = SPECS[args.kernel]
    sizes = {size: getattr(args, size) for size in spec.sizes}
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.workdir, exist_ok=True)
    tag = "%s-%d" % (args.kernel, os.getpid())
    path = lambda name: os.path.join(args.workdir, "%s-%s.npy" % (tag, name))
    defines = parse_defines(args.defines)
    tolerance = spec.bf16_tolerance if args.bf16 else spec.tolerance
    if tolerance is None:
        sys.exit("kernel %s has no bf16_tolerance in kernel_specs.py" % args.kernel)
    half = "float16"
    if args.bf16:
        import ml_dtypes
        half = ml_dtypes.bfloat16
    source = os.path.join(args.kernels_dir, args.kernel + ".tile")
    cmd = [args.flashc, "run", source, "--target=" + args.target] + args.flashc_flags
    if args.bf16:
        cmd += ["-D", "T=bf16"]
    for d in args.defines:
        cmd += ["-D", d]
    for name, value in spec.defines_for(sizes).items():
        if defines.get(name) != str(value):
            cmd += ["-D", "%s=%d" % (name, value)]

    inputs = spec.inputs(rng, sizes, half)
    scalars = spec.scalar_values(sizes)
    ref = spec.reference(inputs, scalars, defines)
    what = " ".join("%s=%d" % kv for kv in sizes.items())
    if spec.attention:
        what += " causal=%s" % (defines.get("CAUSAL", "false") == "true")
    if args.bf16:
        what += " bf16" + (" (as uint16 bits)" if args.bf16_bits else "")
    for name, array in inputs.items():
        save_input(path(name), array, args.bf16_bits)
        cmd += ["--arg", "%s=%s" % (name, path(name))]
    for name, value in scalars.items():
        cmd += ["--arg", "%s=%r" % (name, value)]

    def run(target):
        """The output of one flashc run target (poisoned inputs reused)."""
        target_cmd = [c if c != "--target=" + args.target else "--target=" + target
                      for c in cmd]
        target_cmd += ["--out", "%s=%s" % (spec.output, path("out-" + target))]
        done = subprocess.run(target_cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print("FAIL %s %s: flashc exited %d\n$ %s\n%s%s" % (
                args.kernel, what, done.returncode, " ".join(target_cmd),
                done.stdout, done.stderr))
            return None
        result = load_output(path("out-" + target), args.bf16)
        os.remove(path("out-" + target))
        return result

    # Other targets run the lowered kernel: they must also agree with the
    # interpreter (the tile program's semantics), within the same tolerance
    # (they differ only in rounding order).
    targets = [args.target] + (["interp"] if args.target != "interp" else [])
    outs = {t: run(t) for t in targets}
    for name in inputs:
        os.remove(path(name))
    if any(o is None for o in outs.values()):
        return 1

    rel_tol, abs_tol = tolerance
    out = outs[args.target]
    unwritten = int(np.count_nonzero(~np.isfinite(out)))
    rel, max_abs = compare(out, ref)
    ok = unwritten == 0 and rel < rel_tol and max_abs < abs_tol
    line = "%s %s: rel %.2e (< %.0e), max abs %.2e (< %.0e), non-finite %d" % (
        args.target, what, rel, rel_tol, max_abs, abs_tol, unwritten)
    if "interp" in outs and args.target != "interp":
        rel_i, max_i = compare(out, outs["interp"])
        ok = ok and rel_i < rel_tol and max_i < abs_tol
        line += "; vs interp: rel %.2e, max abs %.2e" % (rel_i, max_i)
    print("%s %s %s" % ("PASS" if ok else "FAIL", args.kernel, line))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
