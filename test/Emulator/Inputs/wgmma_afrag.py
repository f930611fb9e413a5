#!/usr/bin/env python3
"""wgmma_afrag.py A.npy OUT.npy: packs A (64 x 16, float16) into the register
operand A of wgmma m64nNk16: OUT[t][r] (int32) holds elements 2r (low half)
and 2r + 1 of thread t, element e being A[16 w + g + 8 ((e / 2) % 2),
2 q + e % 2 + 8 (e / 4)] with w = t / 32, g = t % 32 / 4, q = t % 4."""
import sys

import numpy as np

a = np.load(sys.argv[1]).astype(np.float16)
bits = a.view(np.uint16).astype(np.uint32)
out = np.zeros((128, 4), dtype=np.uint32)
for t in range(128):
    w, g, q = t // 32, t % 32 // 4, t % 4
    for e in range(8):
        row = 16 * w + g + 8 * ((e // 2) % 2)
        k = 2 * q + e % 2 + 8 * (e // 4)
        out[t][e // 2] |= bits[row][k] << (16 * (e % 2))
np.save(sys.argv[2], out.view(np.int32))
