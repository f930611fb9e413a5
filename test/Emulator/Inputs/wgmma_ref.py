#!/usr/bin/env python3
"""wgmma_ref.py D.npy A.npy B.npy [TIMES]: exit 0 iff D (64 x N f32) equals
TIMES * A @ B^T (A: 64 x K, B: N x K, both 16-bit) computed in float64, to
f32 rounding, with no NaN."""
import sys

import numpy as np

d = np.load(sys.argv[1])
a = np.load(sys.argv[2]).astype(np.float64)
b = np.load(sys.argv[3]).astype(np.float64)
times = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
ref = times * (a @ b.T)
ok = d.shape == ref.shape and not np.isnan(d).any() and np.allclose(
    d, ref, rtol=2e-6, atol=1e-6)
print("match" if ok else "MISMATCH: max error %r" % np.nanmax(np.abs(d - ref)))
sys.exit(0 if ok else 1)
