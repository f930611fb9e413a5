"""Q K^T on f8e4m3 tiles (test/Kernels/Inputs/f8_qk.tile) against float64.

Q [1, 2, Nq, D] and K [1, 2, Nk, D] are random e4m3 values (ml_dtypes), S =
q_descale k_descale Q K^T. The interpreter rounds the exact sum once to f32,
the emulator's wgmma m64nNk32 once per k32 step (each sums its exact
products in double), then the descale product rounds once more: S must
match float64 within those roundings. Extra arguments go to `flashc run` (-D, --arch).
"""
import os
import subprocess
import sys

import numpy as np

import f8_checks
from f8_checks import E4M3

ap = f8_checks.parser()
ap.add_argument("--head-dim", type=int, default=128)
ap.add_argument("--nq", type=int, default=128)
ap.add_argument("--nk", type=int, default=256)
a, rest = ap.parse_known_args()
os.makedirs(a.workdir, exist_ok=True)

rng = np.random.default_rng(5)
d = a.head_dim
Q = (rng.standard_normal((1, 2, a.nq, d)) * 3).astype(E4M3)
K = (rng.standard_normal((1, 2, a.nk, d)) * 3).astype(E4M3)
qd, kd = 0.5, 0.1875
paths = {k: os.path.join(a.workdir, k + ".npy") for k in "QKS"}
np.save(paths["Q"], Q)
np.save(paths["K"], K)
np.save(paths["S"], np.full((1, 2, a.nq, a.nk), np.nan, np.float32))
cmd = [a.flashc, "run", a.kernel, "-D", "HEAD_DIM=%d" % d] + rest
cmd += ["--arg", "Q=" + paths["Q"], "--arg", "K=" + paths["K"],
        "--arg", "S=" + paths["S"], "--arg", "q_descale=%r" % qd,
        "--arg", "k_descale=%r" % kd, "--out", "S=" + paths["S"]]
subprocess.run(cmd, check=True)

got = np.load(paths["S"]).astype(np.float64)
q64, k64 = Q.astype(np.float64), K.astype(np.float64)
ref = np.einsum("bhqd,bhkd->bhqk", q64, k64) * (qd * kd)
# Each k32 wgmma (and the interpreter's one sum) rounds its partial sum to
# f32, then the descale multiply: one half-ulp per rounding of at most
# sum |q k| (the partial sums' bound) scaled by the descales.
bound = np.einsum("bhqd,bhkd->bhqk", np.abs(q64), np.abs(k64)) * (qd * kd)
u = 2.0 ** -24
err = np.abs(got - ref)
tol = (d // 32) * u * bound + 2 * u * np.abs(ref) + 1e-30
if np.isnan(got).any() or (err > tol).any():
    print("MISMATCH: max error %r" % np.nanmax(err))
    sys.exit(1)
print("OK: f8e4m3 Q K^T at d%d matches float64" % d)
