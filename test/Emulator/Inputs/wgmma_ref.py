#!/usr/bin/env python3
"""wgmma_ref.py D.npy A.npy B.npy [TIMES]: exit 0 iff D (64 x N f32) equals
TIMES * A @ B^T (A: 64 x K, B: N x K, both 16-bit, or e4m3 as np.save
writes ml_dtypes' float8_e4m3fn: '|V1') computed in float64, to f32 rounding,
with no NaN."""
import sys

import numpy as np



def load(path):
    x = np.load(path)
    if x.dtype.kind == "V" and x.dtype.itemsize == 1:
        import ml_dtypes
        x = x.view(ml_dtypes.float8_e4m3fn)
    return x.astype(np.float64)


d = np.load(sys.argv[1])
a = load(sys.argv[2])
b = load(sys.argv[3])
times = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
ref = times * (a @ b.T)
ok = d.shape == ref.shape and not np.isnan(d).any() and np.allclose(
    d, ref, rtol=2e-6, atol=1e-6)
print("match" if ok else "MISMATCH: max error %r" % np.nanmax(np.abs(d - ref)))
sys.exit(0 if ok else 1)
