#!/usr/bin/env python3
"""wgmma_afrag8.py A.npy OUT.npy: packs A (64 x 32, float8_e4m3fn as np.save
writes it) into the register operand A of wgmma m64nNk32: OUT[t][r] (int32)
holds bytes 4r .. 4r + 3 of thread t, least significant first, byte e being
A[16 w + g + 8 ((e / 4) % 2), 4 q + e % 4 + 16 (e / 8)] with w = t / 32,
g = t % 32 / 4, q = t % 4 (CUTLASS's ALayout_64x32)."""
import sys

import numpy as np

bits = np.load(sys.argv[1]).view(np.uint8).astype(np.uint32)
out = np.zeros((128, 4), dtype=np.uint32)
for t in range(128):
    w, g, q = t // 32, t % 32 // 4, t % 4
    for e in range(16):
        row = 16 * w + g + 8 * ((e // 4) % 2)
        k = 4 * q + e % 4 + 16 * (e // 8)
        out[t][e // 4] |= bits[row][k] << (8 * (e % 4))
np.save(sys.argv[2], out.view(np.int32))
