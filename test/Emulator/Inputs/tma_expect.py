#!/usr/bin/env python3
"""tma_expect.py X.npy Y.npy Z.npy: exit 0 iff Y is X padded with zero rows
to 32 rows and Z is X's first 16 rows (what Inputs/tma.mlir computes)."""
import sys

import numpy as np

x, y, z = (np.load(p) for p in sys.argv[1:4])
want_y = np.zeros((32, 64), x.dtype)
want_y[: x.shape[0]] = x
ok = np.array_equal(y, want_y) and np.array_equal(z, x[:16])
print("same" if ok else "DIFFERENT:\n%r\n%r" % (y[:2, :8], z[:2, :8]))
sys.exit(0 if ok else 1)
