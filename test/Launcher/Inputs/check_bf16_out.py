#!/usr/bin/env python3
"""check_bf16_out.py IN.npy OUT.npy: OUT holds IN's bf16 values, written the
way np.save writes ml_dtypes.bfloat16 (descr '<V2'), so that
np.load(OUT).view(ml_dtypes.bfloat16) reads them."""
import sys

import ml_dtypes
import numpy as np

with open(sys.argv[2], "rb") as f:
    header = f.read(128)
assert b"'descr': '<V2'" in header, header
want = np.load(sys.argv[1]).view(ml_dtypes.bfloat16)
got = np.load(sys.argv[2]).view(ml_dtypes.bfloat16)
assert got.shape == want.shape, (got.shape, want.shape)
assert (got.view(np.uint16) == want.view(np.uint16)).all(), "values differ"
print("OK", got.dtype, got.shape)
