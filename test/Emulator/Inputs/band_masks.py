#!/usr/bin/env python3
"""band_masks.py X.npy CAP Y.npy...: exit 0 iff every Y is band_masks.tile's
result for X (exact: only selects)."""
import sys

import numpy as np

x = np.load(sys.argv[1])
cap = int(sys.argv[2])
rows, cols = x.shape
i = np.arange(rows)[:, None]
j = np.arange(cols)[None, :]
y = np.where((j >= 2) & (j < cols) & (j <= i + 3), x, -1.0)
want = np.where((j >= i - 5) & (j < cols) & (j < cap), y, -2.0).astype(np.float32)
ok = True
for path in sys.argv[3:]:
    got = np.load(path)
    same = got.shape == want.shape and bool(np.all(got == want))
    print(path.rsplit("/", 1)[-1], "same" if same else "DIFFERENT")
    ok &= same
sys.exit(0 if ok else 1)
