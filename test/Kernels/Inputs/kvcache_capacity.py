#!/usr/bin/env python3
"""kvcache_capacity.py DIR SEQLEN -- inputs of the paged-KV kernels for one
sequence whose block table holds 2 pages of 16 tokens, with cache_seqlens
SEQLEN (more than 32 is past the table; with the 1 appended token, more
than 31)."""
import os
import sys

import numpy as np

out, seqlen = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
arrays = {
    "Q": rng.standard_normal((1, 1, 2, 32)).astype(np.float16),
    "K": rng.standard_normal((3, 16, 1, 32)).astype(np.float16),
    "V": rng.standard_normal((3, 16, 1, 32)).astype(np.float16),
    "New": rng.standard_normal((1, 1, 1, 32)).astype(np.float16),
    "table": np.array([[2, 0]], np.int32),
    "seqlens": np.array([seqlen], np.int32),
    "leftpad": np.zeros(1, np.int32),
    "slopes": np.zeros((1, 2), np.float32),
    "O": np.zeros((1, 1, 2, 32), np.float16),
    "LSE": np.zeros((1, 2, 1), np.float32),
    "O_part": np.zeros((2, 1, 1, 2, 32), np.float32),
    "LSE_part": np.zeros((2, 1, 2, 1), np.float32),
}
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), a)
