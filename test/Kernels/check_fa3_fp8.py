"""kernels/fa3_fp8.tile (fp8 attention forward) against float64.

Q, K, V [1, 2, N, D] are random e4m3 values (ml_dtypes) with per-tensor
descales (with --per-head: [2, 2, N, D] with a descale per (batch, head),
each head's values drawn at a scale of its own, for
kernels/fa3_fp8_descale.tile); the reference is softmax(sm_scale (q_descale Q)(k_descale K)^T)
(v_descale V) in float64. The kernel rounds P to e4m3 (3 mantissa bits,
as FlashAttention-3 does), so its error against float64 is set by that
rounding: the largest error at most 4% of max |O|, the mean at most 0.6% of
mean |O|. With --against DIR it also compares with the O of another
target (the interpreter) on the same inputs: the same P roundings, apart
from f32 summation order and exp2's last bits flipping a rounded P now and
then (at most 1% of max |O|, 99.9% of elements within 2 bf16 ulps).
Extra arguments go to `flashc run`.
"""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np

import f8_checks
from f8_checks import E4M3

ap = f8_checks.parser()
ap.add_argument("--head-dim", type=int, default=128)
ap.add_argument("--nq", type=int, default=200)
ap.add_argument("--nk", type=int, default=300)
ap.add_argument("--causal", action="store_true")
ap.add_argument("--against", default=None)
ap.add_argument("--per-head", action="store_true")
a, rest = ap.parse_known_args()
os.makedirs(a.workdir, exist_ok=True)

rng = np.random.default_rng(11)
d = a.head_dim
batch = 2 if a.per_head else 1
# Quantized as a caller would: x8 = x / descale, descale = amax / 448 (per
# tensor, or per (batch, head): [B, H]).
def quantize(x):
    if a.per_head:
        scale = (np.abs(x).max(axis=(2, 3)) / 448.0).astype(np.float32)
        return (x / scale[:, :, None, None]).astype(E4M3), scale
    scale = np.float32(np.abs(x).max() / 448.0)
    return (x / scale).astype(E4M3), scale
def draw(n):
    x = rng.standard_normal((batch, 2, n, d))
    if a.per_head:  # heads at scales 1/4 .. 4 apart
        x *= 2.0 ** rng.integers(-2, 3, size=(batch, 2, 1, 1))
    return x
Q8, qd = quantize(draw(a.nq))
K8, kd = quantize(draw(a.nk))
V8, vd = quantize(draw(a.nk))
sm_scale = float(1.0 / np.sqrt(d))
paths = {k: os.path.join(a.workdir, k + ".npy") for k in "QKVO"}
np.save(paths["Q"], Q8)
np.save(paths["K"], K8)
np.save(paths["V"], V8)
np.save(paths["O"], np.zeros((batch, 2, a.nq, d), ml_dtypes.bfloat16))
cmd = [a.flashc, "run", a.kernel, "-D", "HEAD_DIM=%d" % d] + rest
if a.causal:
    cmd += ["-D", "CAUSAL=true"]
for k in "QKV":
    cmd += ["--arg", "%s=%s" % (k, paths[k])]
cmd += ["--arg", "O=" + paths["O"], "--arg", "sm_scale=%r" % sm_scale,
        "--out", "O=" + paths["O"]]
for name, x in (("q_descale", qd), ("k_descale", kd), ("v_descale", vd)):
    if a.per_head:
        path = os.path.join(a.workdir, name + ".npy")
        np.save(path, x)
        cmd += ["--arg", "%s=%s" % (name, path)]
    else:
        cmd += ["--arg", "%s=%r" % (name, float(x))]
subprocess.run(cmd, check=True)

def load_o(path):
    return np.load(path).view(ml_dtypes.bfloat16).astype(np.float64)

got = load_o(paths["O"])
def dequantize(x8, scale):
    return x8.astype(np.float64) * np.asarray(scale, np.float64).reshape(
        (batch, 2, 1, 1) if a.per_head else ())
q = dequantize(Q8, qd)
k = dequantize(K8, kd)
v = dequantize(V8, vd)
s = np.einsum("bhqd,bhkd->bhqk", q, k) * sm_scale
if a.causal:
    i = np.arange(a.nq)[:, None]
    j = np.arange(a.nk)[None, :]
    s = np.where(j <= i + (a.nk - a.nq), s, -np.inf)
m = s.max(-1, keepdims=True)
m = np.where(np.isfinite(m), m, 0)
p = np.exp(s - m)
l = p.sum(-1, keepdims=True)
ref = np.einsum("bhqk,bhkd->bhqd", p, v) / np.where(l > 0, l, 1)
err = np.abs(got - ref)
# e4m3 P: a relative error of at most 2^-4 (normal values), an absolute one
# of at most 2^-10 (subnormals, below 2^-6); then bf16's rounding of O.
lsafe = np.where(l > 0, l, 1)
tol = (2.0 ** -4 * np.einsum("bhqk,bhkd->bhqd", p, np.abs(v)) +
       2.0 ** -10 * np.abs(v).sum(-2)[:, :, None, :]) / lsafe
tol += 2.0 ** -8 * np.abs(ref) + 1e-6
scale_max = np.abs(ref).max()
ok = not np.isnan(got).any() and (err <= tol).all()
print("vs float64: max error %.3g (%.3g of max |O|), %.3g of the e4m3 bound"
      % (err.max(), err.max() / scale_max, (err / tol).max()), file=sys.stderr)
if a.against:
    other = load_o(os.path.join(a.against, "O.npy"))
    diff = np.abs(got - other)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(other), 1e-30))) - 7)
    within = np.mean(diff <= 2 * ulp)
    print("vs %s: max difference %.3g, %.4f within 2 bf16 ulps"
          % (a.against, diff.max(), within), file=sys.stderr)
    ok = ok and diff.max() <= 0.01 * scale_max and within >= 0.999
if not ok:
    print("MISMATCH")
    sys.exit(1)
print("OK: %s d%d%s matches" % ("fa3_fp8_descale" if a.per_head else "fa3_fp8", d,
                               " causal" if a.causal else ""))
