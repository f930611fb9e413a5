#!/usr/bin/env python3
"""row_sums.py S.npy FACTOR OUT.npy...: exit 0 iff every OUT equals FACTOR
times the row sums of S exactly (S of small integers: exact in f32)."""
import sys

import numpy as np

s = np.load(sys.argv[1]).astype(np.float64)
expected = float(sys.argv[2]) * s.sum(axis=1)
ok = True
for path in sys.argv[3:]:
    out = np.load(path).astype(np.float64)
    if out.shape != expected.shape or not np.array_equal(out, expected):
        print("%s DIFFERENT: %r vs %r" % (path, out[:8], expected[:8]))
        ok = False
print("same" if ok else "")
sys.exit(0 if ok else 1)
