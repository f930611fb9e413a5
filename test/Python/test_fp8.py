"""e4m3 attention through flashc.attention / flash_attn_func: ml_dtypes
float8_e4m3fn q, k, v with FlashAttention-3's descale factors, bf16 out
(kernels/fa3_fp8.tile), against float64 within the e4m3 rounding of P."""
import numpy as np
import pytest

import flashc
from flashc import flash_attn as fa

ml_dtypes = pytest.importorskip("ml_dtypes")
E4M3 = ml_dtypes.float8_e4m3fn


def quantized(shape, rng):
    """x / descale rounded to e4m3, and descale = amax / 448."""
    x = rng.standard_normal(shape)
    descale = float(np.float32(np.abs(x).max() / 448.0))
    return (x / descale).astype(E4M3), descale


def quantized_per_head(shape, rng):
    """Per-(batch, head) quantization of x [B, N, H, D] whose heads lie at
    scales 1/4 .. 4 apart: x / descale[b, h] rounded to e4m3, and descale
    [B, H] (f32) = amax over the head / 448."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-2, 3, size=(shape[0], 1, shape[2], 1))
    descale = (np.abs(x).max(axis=(1, 3)) / 448.0).astype(np.float32)
    return (x / descale[:, None, :, None]).astype(E4M3), descale


def check(out, q8, k8, v8, qd, kd, vd, scale, causal):
    """out [B, Nq, H, D] against float64, within P's e4m3 rounding (2^-4
    relative per normal element, 2^-10 absolute per subnormal one, times
    |V|) plus bf16's rounding of out. Descales are numbers or [B, H]."""
    def dequantized(x, d):
        d = np.asarray(d, np.float64)
        return x.astype(np.float64).transpose(0, 2, 1, 3) * (d[:, :, None, None] if d.ndim else d)
    q, k, v = (dequantized(x, d) for x, d in ((q8, qd), (k8, kd), (v8, vd)))
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        nq, nk = s.shape[-2:]
        s = np.where(np.arange(nk)[None, :] <= np.arange(nq)[:, None] + nk - nq, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(m), m, 0))
    l = np.where(p.sum(-1, keepdims=True) > 0, p.sum(-1, keepdims=True), 1)
    ref = np.einsum("bhqk,bhkd->bhqd", p, v) / l
    tol = (2.0 ** -4 * np.einsum("bhqk,bhkd->bhqd", p, np.abs(v)) +
           2.0 ** -10 * np.abs(v).sum(-2)[:, :, None, :]) / l + 2.0 ** -8 * np.abs(ref) + 1e-6
    got = out.astype(np.float64).transpose(0, 2, 1, 3)
    assert out.dtype == ml_dtypes.bfloat16
    assert (np.abs(got - ref) <= tol).all(), np.abs(got - ref).max()
    return got


@pytest.mark.parametrize("d, causal", [(64, False), (40, True), (128, False)])
def test_e4m3_interp(d, causal):
    rng = np.random.default_rng(d)
    (q, qd), (k, kd), (v, vd) = (quantized((1, n, 2, d), rng) for n in (45, 70, 70))
    out = fa.flash_attn_func(q, k, v, causal=causal, q_descale=qd, k_descale=kd,
                             v_descale=vd)
    assert out.shape == q.shape
    check(out, q, k, v, qd, kd, vd, d ** -0.5, causal)


def test_e4m3_emulate_sm90a_matches_interp():
    rng = np.random.default_rng(7)
    (q, qd), (k, kd), (v, vd) = (quantized((1, n, 2, 64), rng) for n in (70, 100, 100))
    kwargs = dict(softmax_scale=0.1, q_descale=qd, k_descale=kd,
                  v_descale=np.full((1, 2), vd, np.float32))
    emulated = flashc.attention(q, k, v, target="emulate", arch="sm_90a", **kwargs)
    interp = flashc.attention(q, k, v, target="interp", **kwargs)
    check(emulated, q, k, v, qd, kd, vd, 0.1, False)
    np.testing.assert_array_equal(emulated.view(np.uint16), interp.view(np.uint16))


@pytest.mark.parametrize("d, causal", [(64, True), (96, False)])
def test_e4m3_per_head_descales_interp(d, causal):
    # FlashAttention-3's [B, H_KV] descales that differ per head, numbers
    # mixed in: kernels/fa3_fp8_descale.tile.
    rng = np.random.default_rng(d + 1)
    (q, qd), (k, kd), (v, vd) = (quantized_per_head((2, n, 3, d), rng) for n in (45, 70, 70))
    out = fa.flash_attn_func(q, k, v, causal=causal, q_descale=qd, k_descale=kd,
                             v_descale=vd)
    check(out, q, k, v, qd, kd, vd, d ** -0.5, causal)
    one = fa.flash_attn_func(q, k, v, causal=causal, q_descale=qd, k_descale=1.0)
    check(one, q, k, v, qd, 1.0, 1.0, d ** -0.5, causal)


def test_e4m3_per_head_descales_emulate_sm90a_matches_interp():
    rng = np.random.default_rng(9)
    (q, qd), (k, kd), (v, vd) = (quantized_per_head((2, n, 2, 64), rng) for n in (70, 100, 100))
    kwargs = dict(causal=True, q_descale=qd, k_descale=kd, v_descale=vd)
    emulated = flashc.attention(q, k, v, target="emulate", arch="sm_90a", **kwargs)
    interp = flashc.attention(q, k, v, target="interp", **kwargs)
    check(emulated, q, k, v, qd, kd, vd, 64 ** -0.5, True)
    np.testing.assert_array_equal(emulated.view(np.uint16), interp.view(np.uint16))


def test_e4m3_errors():
    rng = np.random.default_rng(3)
    (q, _), (k, _), (v, _) = (quantized((1, 32, 2, 64), rng) for _ in range(3))
    with pytest.raises(ValueError, match="q_descale must be a number or \\[B, H_KV\\]"):
        flashc.attention(q, k, v, q_descale=np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="no window, softcap"):
        flashc.attention(q, k, v, softcap=5.0)
    with pytest.raises(ValueError, match="apply to e4m3"):
        flashc.attention(q.astype(np.float16), k.astype(np.float16), v.astype(np.float16),
                         q_descale=1.0)
    # Off sm_90a the kernel's dots are errors (no e4m3 MMA).
    with pytest.raises(Exception, match="needs --arch=sm_90a"):
        flashc.attention(q, k, v, target="emulate", arch="sm_90")
