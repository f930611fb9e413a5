"""dot on f8e4m3 tiles (test/Kernels/Inputs/f8_dot.tile) against float64.

A (64 x 64) and B (32 x 64) are random e4m3 values (ml_dtypes), S = descale
A B^T. The interpreter sums the exact products in double and rounds once to
f32 before the descale multiply (one more f32 rounding), so S must match
float64 to two f32 roundings.
"""
import os
import subprocess
import sys

import numpy as np

import f8_checks
from f8_checks import E4M3

ap = f8_checks.parser(run_options=True)
a = ap.parse_args()
os.makedirs(a.workdir, exist_ok=True)

rng = np.random.default_rng(3)
A = (rng.standard_normal((64, 64)) * 4).astype(E4M3)
B = (rng.standard_normal((32, 64)) * 4).astype(E4M3)
descale = 0.375
paths = {k: os.path.join(a.workdir, k + ".npy") for k in "ABS"}
np.save(paths["A"], A)
np.save(paths["B"], B)
np.save(paths["S"], np.full((64, 32), np.nan, np.float32))
cmd = [a.flashc, "run", a.kernel, "--target=" + a.target]
if a.arch:
    cmd.append("--arch=" + a.arch)
cmd += ["--arg", "A=" + paths["A"], "--arg", "B=" + paths["B"],
        "--arg", "S=" + paths["S"], "--arg", "descale=%r" % descale,
        "--out", "S=" + paths["S"]]
subprocess.run(cmd, check=True)

got = np.load(paths["S"]).astype(np.float64)
exact = A.astype(np.float64) @ B.astype(np.float64).T
ref = exact * descale
err = np.abs(got - ref)
tol = 2 * np.finfo(np.float32).eps * np.abs(ref) + 1e-30
if np.isnan(got).any() or (err > tol).any():
    print("MISMATCH: max error %r" % np.nanmax(err))
    sys.exit(1)
# The products do not fit f32 sums of f16 inputs trivially: a test that a
# plain f16 dot would fail (cast to f16 first changes nothing, but an
# accumulation in f16 would).
assert np.abs(exact).max() > 64
print("OK: f8e4m3 dot of 64 x 64 and 32 x 64 matches float64")
