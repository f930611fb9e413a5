"""f8e4m3 conversions of a flashc target against ml_dtypes.float8_e4m3fn.

Runs test/Kernels/Inputs/f8_cast.tile on every e4m3 value, the midpoints of
neighbouring values and the doubles next to them, out-of-range values,
infinities and NaNs (f32 -> f8e4m3), and on all 256 codes (f8e4m3 -> f32).
ml_dtypes' cast turns out-of-range values into NaN; flashc's is satfinite
(cvt.rn.satfinite): the expected bytes clamp to +-448 before the cast.
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

codes = np.arange(256, dtype=np.uint8)
vals = codes.view(E4M3).astype(np.float64)
finite = np.unique(np.abs(vals[np.isfinite(vals)]))
mids = (finite[:-1] + finite[1:]) / 2
x = np.concatenate([finite, mids, np.nextafter(mids, 0), np.nextafter(mids, 1e9),
                    [447.9, 448.0, 463.9, 464.0, 500.0, 1e30, np.inf, np.nan,
                     2.0**-10, 2.0**-10 * 1.0001, 1e-30]])
x = np.concatenate([x, -x]).astype(np.float32)
n = max(len(x), 256)
x = np.resize(x, n).astype(np.float32)
z = np.resize(codes, n).view(E4M3)

paths = {k: os.path.join(a.workdir, k + ".npy") for k in "XYZW"}
np.save(paths["X"], x)
np.save(paths["Z"], z)
np.save(paths["Y"], np.zeros(n, E4M3))
np.save(paths["W"], np.zeros(n, np.float32))
cmd = [a.flashc, "run", a.kernel, "--target=" + a.target]
if a.arch:
    cmd.append("--arch=" + a.arch)
for k in "XYZW":
    cmd += ["--arg", f"{k}={paths[k]}"]
cmd += ["--out", f"Y={paths['Y']}", "--out", f"W={paths['W']}"]
subprocess.run(cmd, check=True)

y = np.load(paths["Y"])
assert y.dtype.itemsize == 1, y.dtype
got = y.view(np.uint8)
want = np.clip(x, -448, 448).astype(E4M3).view(np.uint8)  # NaN stays NaN
bad = np.nonzero(got != want)[0]
for i in bad[:10]:
    print(f"f32 {x[i]!r} -> 0x{got[i]:02x}, want 0x{want[i]:02x}")
w = np.load(paths["W"])
wz = z.astype(np.float32)
same = (w.view(np.uint32) == wz.view(np.uint32)) | (np.isnan(w) & np.isnan(wz))
for i in np.nonzero(~same)[0][:10]:
    print(f"code 0x{z.view(np.uint8)[i]:02x} -> {w[i]!r}, want {wz[i]!r}")
if len(bad) or not same.all():
    sys.exit(f"FAIL: {len(bad)} of {n} f32 -> f8e4m3 and {int((~same).sum())} "
             f"f8e4m3 -> f32 conversions differ from ml_dtypes")
print(f"OK: {n} f32 -> f8e4m3 and {n} f8e4m3 -> f32 conversions match ml_dtypes")
