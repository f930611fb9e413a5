"""flashc.attention_backward against the analytic float64 gradient of
test/Kernels/check_backward.py, on the forward's own out and softmax_lse."""
import numpy as np
import pytest

import flashc
from check_backward import reference
from check_variant import visible
from conftest import relative_error

TOLERANCE = 5e-3


def gradients(b=1, h=2, h_kv=2, nq=24, nk=40, d=32, causal=False, window=(-1, -1),
              deterministic=False, target="interp", seed=7, slopes=None):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, nq, h, d)).astype(np.float16)
    k, v = (rng.standard_normal((b, nk, h_kv, d)).astype(np.float16) for _ in range(2))
    dout = rng.standard_normal((b, nq, h, d)).astype(np.float16)
    out, lse = flashc.attention(q, k, v, causal=causal, window_size=window, return_lse=True,
                                alibi_slopes=slopes)
    got = flashc.attention_backward(dout, q, k, v, out, lse, causal=causal,
                                    window_size=window, deterministic=deterministic,
                                    target=target, alibi_slopes=slopes)
    heads_first = {n: x.transpose(0, 2, 1, 3) for n, x in
                   (("Q", q), ("K", k), ("V", v), ("DO", dout))}
    if slopes is not None:
        heads_first["Slopes"] = np.broadcast_to(slopes, (b, h))
    mask = visible(nq, nk, causal, *window)
    sizes = {"H": h, "H_KV": h_kv}
    want = reference(dict(heads_first, sm_scale=d ** -0.5), mask, sizes)[2]
    return got, [w.transpose(0, 2, 1, 3) for w in want], (q, k, v)


@pytest.mark.parametrize("options", [
    {"causal": True},
    {"h": 4, "h_kv": 1, "deterministic": True},
    {"window": (5, 3), "nq": 40, "nk": 24},
])
def test_gradients(options):
    got, want, inputs = gradients(**options)
    for name, g, w, x in zip(("dq", "dk", "dv"), got, want, inputs):
        assert g.shape == x.shape and g.dtype == x.dtype, name
        assert relative_error(g, w) < TOLERANCE, name


def test_on_emulate():
    got, want, _ = gradients(h=2, h_kv=1, nq=16, nk=20, causal=True, target="emulate")
    for g, w in zip(got, want):
        assert relative_error(g, w) < TOLERANCE


@pytest.mark.parametrize("d", [40, 59, 111])
def test_head_dims_padded(d):
    # Padded to the kernels' next multiple of 16 and cut back: the gradients
    # of the original d columns, with the scale of d.
    got, want, inputs = gradients(d=d, nq=20, nk=24, causal=True)
    for name, g, w, x in zip(("dq", "dk", "dv"), got, want, inputs):
        assert g.shape == x.shape and g.dtype == x.dtype, name
        assert relative_error(g, w) < TOLERANCE, name


@pytest.mark.parametrize("options", [
    {"causal": True, "per_batch": True},
    {"window": (6, 2), "deterministic": True, "per_batch": False},
])
def test_alibi_gradients(options):
    # ALiBi's bias is a constant of the inputs: the gradients of the biased
    # attention, through flash_attn_bwd_alibi (and _dq_alibi).
    per_batch = options.pop("per_batch")
    rng = np.random.default_rng(12)
    slopes = (rng.random((2, 2) if per_batch else (2,)) * 0.5 + 0.05).astype(np.float32)
    got, want, inputs = gradients(b=2, slopes=slopes, **options)
    for name, g, w, x in zip(("dq", "dk", "dv"), got, want, inputs):
        assert g.shape == x.shape and g.dtype == x.dtype, name
        assert relative_error(g, w) < TOLERANCE, name
