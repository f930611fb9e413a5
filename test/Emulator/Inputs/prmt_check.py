"""prmt_check.py make DIR | check DIR: writes X (lo, hi, selector per
thread: random words, the selectors of the fp8 V transpose and random
ones, sign-replicating nibbles among them), then checks the emulator's Y
against prmt.b32's definition (PTX ISA, default mode)."""
import sys

import numpy as np

mode, d = sys.argv[1], sys.argv[2]
if mode == "make":
    rng = np.random.default_rng(5)
    words = rng.integers(0, 2 ** 32, size=(32, 2), dtype=np.uint64)
    fixed = [0x5140, 0x7362, 0x5410, 0x7632, 0x3210, 0x7654, 0x0123, 0x89ab]
    sels = fixed + [int(x) for x in rng.integers(0, 2 ** 16, size=32 - len(fixed))]
    x = np.concatenate([words, np.array(sels, np.uint64)[:, None]], axis=1)
    np.save(d + "/X.npy", x.astype(np.uint32).view(np.int32))
    np.save(d + "/Y.npy", np.zeros(32, np.int32))
    sys.exit(0)
x = np.load(d + "/X.npy").view(np.uint32).astype(np.uint64)
y = np.load(d + "/out.npy").view(np.uint32)
bad = 0
for t in range(32):
    lo, hi, sel = (int(v) for v in x[t])
    pool = lo | hi << 32
    want = 0
    for k in range(4):
        n = sel >> (4 * k) & 0xF
        byte = pool >> (8 * (n & 7)) & 0xFF
        if n & 8:
            byte = 0xFF if byte & 0x80 else 0
        want |= byte << (8 * k)
    if int(y[t]) != want:
        print("thread %d: prmt(%#x, %#x, %#x) = %#x, want %#x" % (t, lo, hi, sel, y[t], want))
        bad += 1
if bad:
    sys.exit(1)
print("OK: prmt matches on 32 threads")
