#!/usr/bin/env python3
"""make_npy.py DIR NAME:DTYPE:SHAPE:FILL ... -- writes DIR/NAME.npy.

SHAPE is comma-separated; FILL is arange (0, 1, 2, ... exact in the dtype for
small sizes), nan (poison: unwritten outputs stay NaN) or randn (seed 0).
DTYPE is a numpy dtype name, bfloat16 (ml_dtypes: saved as '<V2'),
bfloat16bits (the same values saved as their bits, uint16) or
float8_e4m3fn (ml_dtypes, saved as '<V1'; randn values rounded to it).
"""
import os
import sys

import numpy as np


def convert(a, dtype):
    if dtype.startswith("bfloat16"):
        import ml_dtypes
        a = a.astype(ml_dtypes.bfloat16)
        return a.view(np.uint16) if dtype == "bfloat16bits" else a
    if dtype == "float8_e4m3fn":
        import ml_dtypes
        return a.astype(ml_dtypes.float8_e4m3fn)
    return a.astype(dtype)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    for spec in sys.argv[2:]:
        name, dtype, shape, fill = spec.split(":")
        shape = tuple(int(s) for s in shape.split(","))
        if fill == "arange":
            a = (np.arange(np.prod(shape)) % 2048).reshape(shape)
        elif fill == "nan":
            a = np.full(shape, np.nan)
        else:
            a = rng.standard_normal(shape)
        np.save(os.path.join(out, name + ".npy"), convert(a, dtype))


if __name__ == "__main__":
    main()
