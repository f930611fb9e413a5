#!/usr/bin/env python3
"""same.py A.npy B.npy [ROLL]: exit 0 iff A equals B (B rolled by ROLL along
the flattened array first) element for element, with no NaN left."""
import sys

import numpy as np

a = np.load(sys.argv[1]).ravel()
b = np.load(sys.argv[2]).ravel()
if len(sys.argv) > 3:
    b = np.roll(b, int(sys.argv[3]))
ok = a.shape == b.shape and bool(np.all(a == b))
print("same" if ok else "DIFFERENT: %r vs %r" % (a[:16], b[:16]))
sys.exit(0 if ok else 1)
