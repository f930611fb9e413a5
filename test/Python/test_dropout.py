"""Dropout in the flash_attn family: the Philox generator of
kernels/lib/dropout.tile against an independent NumPy Philox4x32-10 (and
Random123's known answers), the dropout forward against float64 attention
under the kernel's own mask (read back from S_dmask), and the backward
against the analytic float64 gradient under the same mask; interp and
emulate."""
import os

import numpy as np
import pytest

import flashc
from flashc.attention import (DEFAULT_ARCH, dropout_block_size_n, dropout_probs, dropout_seed,
                              dropout_state, forward)
from flashc.flash_attn import flash_attn_func

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "kernels", "lib")
MASK32 = 0xFFFFFFFF


def philox_numpy(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 (Salmon et al., SC 2011), all four words, on uint64
    arrays holding 32-bit values."""
    x = [np.asarray(c, np.uint64) & MASK32 for c in (c0, c1, c2, c3)]
    k0, k1 = np.uint64(k0 & MASK32), np.uint64(k1 & MASK32)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * x[0]
        p1 = np.uint64(0xCD9E8D57) * x[2]
        x = [(p1 >> np.uint64(32)) ^ x[1] ^ k0, p1 & np.uint64(MASK32),
             (p0 >> np.uint64(32)) ^ x[3] ^ k1, p0 & np.uint64(MASK32)]
        k0 = (k0 + np.uint64(0x9E3779B9)) & np.uint64(MASK32)
        k1 = (k1 + np.uint64(0xBB67AE85)) & np.uint64(MASK32)
    return x


def test_numpy_philox_known_answers():
    # Random123's kat_vectors for philox4x32 with 10 rounds.
    assert [int(w) for w in philox_numpy(0, 0, 0, 0, 0, 0)] == [
        0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    ones = MASK32
    assert [int(w) for w in philox_numpy(ones, ones, ones, ones, ones, ones)] == [
        0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    assert [int(w) for w in philox_numpy(0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344,
                                         0xA4093822, 0x299F31D0)] == [
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


PHILOX_KERNEL = """
import "dropout.tile";
kernel philox_words<BLOCK: int = 16>(C: i32[BLOCK, 4], Key: i32[2], X: i32[BLOCK]) {
  grid(1);
  let rows = arange(0, BLOCK);
  let c = load(C[:, :]);
  let x = philox(load(C[rows, 0]), load(C[rows, 1]), load(C[rows, 2]), load(C[rows, 3]),
                 load(Key[0]), load(Key[1]));
  store(X[:], x);
}
"""


def as_i32(values):
    return (np.asarray(values, np.uint64) & MASK32).astype(np.uint32).view(np.int32)


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_philox_kernel_matches_numpy(target):
    rng = np.random.default_rng(3)
    counters = rng.integers(0, 2**32, (16, 4), dtype=np.uint64)
    counters[0] = 0
    counters[1] = MASK32
    key = (0xA4093822, 0x299F31D0)
    kernel = flashc.compile(PHILOX_KERNEL, import_dirs=[LIB])
    out = np.zeros(16, np.int32)
    kernel(target=target, C=np.ascontiguousarray(as_i32(counters)), Key=as_i32(key), X=out)
    want = philox_numpy(*counters.T, *key)[0]
    np.testing.assert_array_equal(out.view(np.uint32), want.astype(np.uint32))


PRODUCTS_KERNEL = """
kernel products(A: i32[64], B: i32[64], Lo: i32[64], Hi: i32[64], MulHi: i32[64],
                S: i32[64], s: i32) {
  grid(1);
  let a = load(A[:]);
  let b = load(B[:]);
  let lo, hi = umul_wide(a, b);
  store(Lo[:], lo);
  store(Hi[:], hi);
  store(MulHi[:], umulhi(a, 3528531795));
  let slo, shi = umul_wide(s, 3449720151);
  store(S[:], where(arange(0, 64) == 0, slo, shi + umulhi(s, s)));
}
"""


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_wide_products_match_numpy(target):
    # umul_wide and umulhi (one arith.mului_extended each) on tiles and on a
    # runtime scalar, edge values included.
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 64, dtype=np.uint64)
    b = rng.integers(0, 2**32, 64, dtype=np.uint64)
    a[:4] = [0, 1, MASK32, MASK32]
    b[:4] = [MASK32, MASK32, MASK32, 2]
    s = 0xF1234567
    outs = {name: np.zeros(64, np.int32) for name in ("Lo", "Hi", "MulHi", "S")}
    kernel = flashc.compile(PRODUCTS_KERNEL)
    kernel(target=target, A=as_i32(a), B=as_i32(b), s=int(as_i32([s])[0]), **outs)
    got = {name: v.view(np.uint32).astype(np.uint64) for name, v in outs.items()}
    p = [int(x) * int(y) for x, y in zip(a, b)]
    assert list(got["Lo"]) == [x & MASK32 for x in p]
    assert list(got["Hi"]) == [x >> 32 for x in p]
    assert list(got["MulHi"]) == [(int(x) * 0xD2511F53) >> 32 for x in a]
    ps = s * 0xCD9E8D57
    assert int(got["S"][0]) == ps & MASK32
    assert set(int(x) for x in got["S"][1:]) == {((ps >> 32) + ((s * s) >> 32)) & MASK32}


def inputs(b=2, h=2, h_kv=2, nq=40, nk=56, d=32, seed=5):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, nq, h, d)).astype(np.float16)
    k = rng.standard_normal((b, nk, h_kv, d)).astype(np.float16)
    v = rng.standard_normal((b, nk, h_kv, d)).astype(np.float16)
    return q, k, v


def visible(nq, nk, causal=False, window=(-1, -1)):
    left, right = window
    if causal:
        right = 0
    i = np.arange(nq)[:, None] + nk - nq
    j = np.arange(nk)[None, :]
    mask = np.ones((nq, nk), bool)
    if left >= 0:
        mask &= j >= i - left
    if right >= 0:
        mask &= j <= i + right
    return mask


def keep_numpy(rng_state, b, h, nq, nk):
    """The keep mask [B, H, Nq, Nk] of kernels/lib/dropout.tile from NumPy's Philox."""
    seed_lo, seed_hi, offset, threshold = (int(x) for x in rng_state)
    bb, hh, ii, jj = np.meshgrid(np.arange(b), np.arange(h), np.arange(nq), np.arange(nk),
                                 indexing="ij")
    x = philox_numpy(jj, ii, bb * 65536 + hh, np.full(jj.shape, offset), seed_lo, seed_hi)[0]
    return (x >> np.uint64(1)) >= np.uint64(threshold)


def reference(q, k, v, keep, p, causal=False, window=(-1, -1), dout=None, slopes=None):
    """float64 dropout attention [B, Nq, H, D] (and its gradients for dout);
    slopes [H]: ALiBi, -slope * |i + Nk - Nq - j| added to the scaled scores."""
    qf, kf, vf = (x.astype(np.float64).transpose(0, 2, 1, 3) for x in (q, k, v))
    group = qf.shape[1] // kf.shape[1]
    kf, vf = np.repeat(kf, group, 1), np.repeat(vf, group, 1)
    scale = q.shape[-1] ** -0.5
    s = np.einsum("bhid,bhjd->bhij", qf, kf) * scale
    if slopes is not None:
        i = np.arange(q.shape[1])[:, None] + k.shape[1] - q.shape[1]
        s = s - np.asarray(slopes, np.float64)[:, None, None] * np.abs(i - np.arange(k.shape[1]))
    s = np.where(visible(q.shape[1], k.shape[1], causal, window), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    probs = e / np.maximum(e.sum(-1, keepdims=True), 1e-300)
    dropped = np.where(keep, probs / (1 - p), 0.0)
    out = np.einsum("bhij,bhjd->bhid", dropped, vf)
    if dout is None:
        return out.transpose(0, 2, 1, 3)
    do = dout.astype(np.float64).transpose(0, 2, 1, 3)
    dv = np.einsum("bhij,bhid->bhjd", dropped, do)
    dp = np.where(keep, np.einsum("bhid,bhjd->bhij", do, vf) / (1 - p), 0.0)
    delta = (do * out).sum(-1, keepdims=True)
    ds = probs * (dp - delta)
    dq = np.einsum("bhij,bhjd->bhid", ds, kf) * scale
    dk = np.einsum("bhij,bhid->bhjd", ds, qf) * scale
    b, hk = k.shape[0], k.shape[2]
    dk = dk.reshape(b, hk, group, *dk.shape[2:]).sum(2)
    dv = dv.reshape(b, hk, group, *dv.shape[2:]).sum(2)
    return [g.transpose(0, 2, 1, 3) for g in (dq, dk, dv)]


def reference_scores(q, k, causal, window, slopes):
    """The scaled scores [B, H, Nq, Nk] in float64 (-inf where masked)."""
    qf, kf = (x.astype(np.float64).transpose(0, 2, 1, 3) for x in (q, k))
    kf = np.repeat(kf, qf.shape[1] // kf.shape[1], 1)
    s = np.einsum("bhid,bhjd->bhij", qf, kf) * q.shape[-1] ** -0.5
    if slopes is not None:
        i = np.arange(q.shape[1])[:, None] + k.shape[1] - q.shape[1]
        s = s - np.asarray(slopes, np.float64)[:, None, None] * np.abs(i - np.arange(k.shape[1]))
    return np.where(visible(q.shape[1], k.shape[1], causal, window), s, -np.inf)


def reference_probs(q, k, causal, window, slopes):
    s = reference_scores(q, k, causal, window, slopes)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    return e / np.maximum(e.sum(-1, keepdims=True), 1e-300)


def relative_error(got, want):
    return np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1e-6)


@pytest.mark.parametrize("target,options", [
    ("interp", {}),
    ("interp", {"causal": True, "h": 4, "h_kv": 2}),
    ("interp", {"window": (9, 4)}),
    ("interp", {"slopes": [0.3, 0.1], "causal": True}),
    ("emulate", {"b": 1, "nq": 24, "nk": 40, "causal": True}),
    ("emulate", {"b": 1, "nq": 20, "nk": 24, "slopes": [0.25, 0.5]}),
    ("emulate", {"b": 1, "nq": 24, "nk": 40, "causal": True, "arch": "sm_90a"}),
])
def test_forward_and_probs(target, options):
    arch = options.pop("arch", DEFAULT_ARCH)
    causal = options.pop("causal", False)
    window = options.pop("window", (-1, -1))
    slopes = options.pop("slopes", None)
    slopes = None if slopes is None else np.array(slopes, np.float32)
    q, k, v = inputs(**options)
    p = 0.17
    np.random.seed(11)
    out, lse, s_dmask = flash_attn_func(q, k, v, p, causal=causal, window_size=window,
                                        alibi_slopes=slopes, return_attn_probs=True,
                                        target=target, arch=arch)
    np.random.seed(11)
    rng_state = dropout_state(p, dropout_seed(q))
    b, nq, h, _ = q.shape
    nk = k.shape[1]
    assert s_dmask.shape == (b, h, -(-nq // 128) * 128, -(-nk // 128) * 128)
    keep = keep_numpy(rng_state, b, h, nq, nk)
    mask = visible(nq, nk, causal, window)
    # S_dmask's signs are the kernel's mask: those of NumPy's Philox.
    s = s_dmask[:, :, :nq, :nk].astype(np.float64)
    strict = mask[None, None] & (s != 0)
    assert strict.mean() > 0.5 * mask.mean()
    np.testing.assert_array_equal((s >= 0)[strict], keep[strict])
    fraction = 1 - keep[:, :, mask].mean()
    assert abs(fraction - p) < 0.03
    want = reference(q, k, v, keep, p, causal, window, slopes=slopes)
    assert relative_error(out, want) < 5e-3
    assert out.dtype == q.dtype and lse.shape == (b, h, nq)
    # |S_dmask| normalized as upstream's tests do (the max over the key
    # blocks at and after each one, block_size_n keys) is the softmax.
    block = dropout_block_size_n(q.shape[-1])
    probs = reference_probs(q, k, causal, window, slopes)
    scores = reference_scores(q, k, causal, window, slopes)
    blocks = range(0, nk, block)
    block_max = np.stack([scores[..., j:j + block].max(-1) for j in blocks], -1)
    after = np.maximum.accumulate(block_max[..., ::-1], -1)[..., ::-1]
    lse64 = np.log(np.exp(scores - scores.max(-1, keepdims=True)).sum(-1)) + scores.max(-1)
    norm = np.concatenate([np.abs(s[..., j:j + block]) *
                           np.exp(after[..., n] - lse64)[..., None]
                           for n, j in enumerate(blocks)], -1)
    rows = np.isfinite(lse64)
    assert np.abs(np.where(rows[..., None], norm - probs, 0)).max() < 2e-3


@pytest.mark.parametrize("target,options", [
    ("interp", {}),
    ("interp", {"causal": True, "h": 4, "h_kv": 1, "deterministic": True}),
    ("emulate", {"b": 1, "nq": 20, "nk": 24, "causal": True}),
    ("emulate", {"b": 1, "nq": 20, "nk": 24, "deterministic": True}),
    ("interp", {"slopes": [0.2, 0.4], "deterministic": True}),
    ("emulate", {"b": 1, "nq": 20, "nk": 24, "slopes": [0.2, 0.4], "causal": True}),
    ("emulate", {"b": 1, "nq": 20, "nk": 24, "causal": True, "arch": "sm_90a"}),
    ("emulate", {"b": 1, "nq": 20, "nk": 24, "deterministic": True, "arch": "sm_90a"}),
])
def test_backward(target, options):
    arch = options.pop("arch", DEFAULT_ARCH)
    causal = options.pop("causal", False)
    deterministic = options.pop("deterministic", False)
    slopes = options.pop("slopes", None)
    slopes = None if slopes is None else np.array(slopes, np.float32)
    q, k, v = inputs(**options)
    p = 0.25
    rng_state = dropout_state(p, 0x1234_5678_9ABC_DEF0, offset=7)
    out, lse = forward(q, k, v, causal=causal, rng=rng_state, target=target, arch=arch,
                       alibi_slopes=slopes)
    dout = np.random.default_rng(2).standard_normal(out.shape).astype(np.float16)
    got = flashc.attention_backward(dout, q, k, v, out, lse, causal=causal,
                                    deterministic=deterministic, target=target, arch=arch,
                                    rng=rng_state, alibi_slopes=slopes)
    keep = keep_numpy(rng_state, q.shape[0], q.shape[2], q.shape[1], k.shape[1])
    want = reference(q, k, v, keep, p, causal, dout=dout, slopes=slopes)
    for name, g, w in zip(("dq", "dk", "dv"), got, want):
        assert relative_error(g, w) < 5e-3, name


def test_dropout_fraction_large():
    q, k, v = inputs(b=1, h=2, nq=128, nk=128, d=16)
    rng_state = dropout_state(0.4, 99)
    s = dropout_probs(q, k, rng_state)
    assert abs((s < 0).mean() - 0.4) < 0.01


def test_offset_changes_the_mask():
    a = keep_numpy(dropout_state(0.5, 5, 0), 1, 1, 32, 32)
    b = keep_numpy(dropout_state(0.5, 5, 1), 1, 1, 32, 32)
    assert 0.3 < (a != b).mean() < 0.7


def test_dropout_p_range():
    q, k, v = inputs(b=1, nq=8, nk=8)
    with pytest.raises(ValueError, match="dropout_p"):
        flash_attn_func(q, k, v, 1.0)


def keep_packed(rng_state, h, q_start, nq, k_start, nk):
    """keep_numpy for one sequence of a packed batch: rows and keys counted
    in the packed tensors, batch 0."""
    seed_lo, seed_hi, offset, threshold = (int(x) for x in rng_state)
    hh, ii, jj = np.meshgrid(np.arange(h), q_start + np.arange(nq), k_start + np.arange(nk),
                             indexing="ij")
    x = philox_numpy(jj, ii, hh, np.full(jj.shape, offset), seed_lo, seed_hi)[0]
    return (x >> np.uint64(1)) >= np.uint64(threshold)


@pytest.mark.parametrize("target,causal,deterministic,arch", [
    ("interp", False, False, DEFAULT_ARCH),
    ("interp", True, True, DEFAULT_ARCH),
    ("emulate", True, False, DEFAULT_ARCH),
    ("emulate", False, True, DEFAULT_ARCH),
    ("emulate", True, True, "sm_90a"),
])
def test_varlen(target, causal, deterministic, arch):
    from flashc.flash_attn import flash_attn_varlen_func

    lengths_q, lengths_k = [5, 19, 12], [9, 17, 30]
    cu_q = np.concatenate([[0], np.cumsum(lengths_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lengths_k)]).astype(np.int32)
    rng = np.random.default_rng(4)
    h, d, p = 2, 32, 0.3
    q = rng.standard_normal((cu_q[-1], h, d)).astype(np.float16)
    k = rng.standard_normal((cu_k[-1], h, d)).astype(np.float16)
    v = rng.standard_normal((cu_k[-1], h, d)).astype(np.float16)
    np.random.seed(3)
    out, lse, s_dmask = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lengths_q),
                                               max(lengths_k), p, causal=causal,
                                               return_attn_probs=True, target=target,
                                               arch=arch)
    np.random.seed(3)
    rng_state = dropout_state(p, dropout_seed(q))
    dout = rng.standard_normal(out.shape).astype(np.float16)
    from flashc.inference import attention_varlen
    out2, lse2 = attention_varlen(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k),
                                  causal=causal, return_lse=True, target=target, arch=arch,
                                  rng=rng_state)
    np.testing.assert_array_equal(out, out2)
    grads = flashc.attention_varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k,
                                             max(lengths_q), max(lengths_k), causal=causal,
                                             deterministic=deterministic, target=target,
                                             arch=arch, rng=rng_state)
    assert s_dmask.shape == (3, h, 128, 128)
    for b in range(3):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        keep = keep_packed(rng_state, h, cu_q[b], lengths_q[b], cu_k[b], lengths_k[b])
        mask = visible(lengths_q[b], lengths_k[b], causal)
        s = s_dmask[b, :, :lengths_q[b], :lengths_k[b]].astype(np.float64)
        strict = mask[None] & (s != 0)
        np.testing.assert_array_equal((s >= 0)[strict], keep[strict])
        want = reference(q[None, qs], k[None, ks], v[None, ks], keep[None], p, causal)
        assert relative_error(out[qs], want[0]) < 5e-3
        for name, g, w in zip(("dq", "dk", "dv"), (grads[0][qs], grads[1][ks], grads[2][ks]),
                              reference(q[None, qs], k[None, ks], v[None, ks], keep[None], p,
                                        causal, dout=dout[None, qs])):
            assert relative_error(g, w[0]) < 5e-3, (name, b)


@pytest.mark.parametrize("d,causal,window", [(64, True, -1), (128, False, 50), (192, True, 30),
                                             (256, False, 40)])
def test_varlen_sm90a_tiles(d, causal, window):
    """flash_attn_varlen_dropout at sm_90a's warp-specialized tiles (128 x 32,
    every key block a TMA box of packed rows, the Q block a window of them;
    at 256 read from shared memory in the loop) over sequences of several
    key blocks: the kept weights are NumPy's Philox mask, on the emulator as
    on the interpreter."""
    from flashc.flash_attn import flash_attn_varlen_func

    lengths_q, lengths_k = [5, 150, 40, 1], [9, 200, 170, 64]
    cu_q = np.concatenate([[0], np.cumsum(lengths_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lengths_k)]).astype(np.int32)
    rng = np.random.default_rng(4)
    h, p = 2, 0.3
    q, k, v = (rng.standard_normal((n, h, d)).astype(np.float16)
               for n in (cu_q[-1], cu_k[-1], cu_k[-1]))
    outs = {}
    for target in ("interp", "emulate"):
        np.random.seed(3)
        outs[target] = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lengths_q),
                                              max(lengths_k), p, causal=causal,
                                              window_size=(window, -1), target=target,
                                              arch="sm_90a")
    np.random.seed(3)
    rng_state = dropout_state(p, dropout_seed(q))
    for b in range(len(lengths_q)):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        keep = keep_packed(rng_state, h, cu_q[b], lengths_q[b], cu_k[b], lengths_k[b])
        want = reference(q[None, qs], k[None, ks], v[None, ks], keep[None], p, causal,
                         (window, -1))[0]
        for target, out in outs.items():
            assert relative_error(out[qs], want) < 5e-3, (target, b)
