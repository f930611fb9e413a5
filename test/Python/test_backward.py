"""flashc.attention_backward and flashc.attention_varlen_backward against
the analytic float64 gradient of test/Kernels/check_backward.py, on the
forward's own out and softmax_lse."""
import numpy as np
import pytest

import flashc
from check_backward import reference
from check_variant import visible
from conftest import relative_error

TOLERANCE = 5e-3


def gradients(b=1, h=2, h_kv=2, nq=24, nk=40, d=32, dv=None, causal=False,
              window=(-1, -1), deterministic=False, target="interp", seed=7, slopes=None,
              softcap=0.0, q_scale=1.0):
    rng = np.random.default_rng(seed)
    dv = dv or d
    q = (rng.standard_normal((b, nq, h, d)) * q_scale).astype(np.float16)
    k = rng.standard_normal((b, nk, h_kv, d)).astype(np.float16)
    v = rng.standard_normal((b, nk, h_kv, dv)).astype(np.float16)
    dout = rng.standard_normal((b, nq, h, dv)).astype(np.float16)
    out, lse = flashc.attention(q, k, v, causal=causal, window_size=window, return_lse=True,
                                alibi_slopes=slopes, softcap=softcap)
    got = flashc.attention_backward(dout, q, k, v, out, lse, causal=causal,
                                    window_size=window, deterministic=deterministic,
                                    target=target, alibi_slopes=slopes, softcap=softcap)
    heads_first = {n: x.transpose(0, 2, 1, 3) for n, x in
                   (("Q", q), ("K", k), ("V", v), ("DO", dout))}
    if slopes is not None:
        heads_first["Slopes"] = np.broadcast_to(slopes, (b, h))
    mask = visible(nq, nk, causal, *window)
    sizes = {"H": h, "H_KV": h_kv}
    want = reference(dict(heads_first, sm_scale=d ** -0.5), mask, sizes, softcap)[2]
    return got, [w.transpose(0, 2, 1, 3) for w in want], (q, k, v)


def check(got, want, inputs):
    for name, g, w, x in zip(("dq", "dk", "dv"), got, want, inputs):
        assert g.shape == x.shape and g.dtype == x.dtype, name
        assert relative_error(g, w) < TOLERANCE, name


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


@pytest.mark.parametrize("options", [
    {"causal": True, "h": 4, "h_kv": 2},
    {"window": (6, 2), "deterministic": True, "nq": 40, "nk": 30},
    {"d": 40, "causal": True, "target": "emulate", "nq": 20, "nk": 24},
])
def test_softcap_gradients(options):
    # Soft-capped scores (large enough that tanh bends them): the gradient
    # through softcap * tanh(s / softcap).
    check(*gradients(softcap=2.0, q_scale=3.0, **options))


def test_softcap_with_alibi():
    rng = np.random.default_rng(3)
    slopes = (rng.random((2,)) * 0.5 + 0.05).astype(np.float32)
    check(*gradients(b=2, slopes=slopes, softcap=3.0, q_scale=3.0, causal=True))


@pytest.mark.parametrize("options", [
    {"d": 32, "dv": 64, "causal": True},
    {"d": 64, "dv": 32, "h": 4, "h_kv": 1, "window": (5, 3), "deterministic": True},
    {"d": 40, "dv": 24, "softcap": 2.0, "target": "emulate", "nq": 20, "nk": 24},
])
def test_head_dim_v(options):
    # v with a head dim of its own (padded on its own): dv and the inputs'
    # shapes follow v, dq and dk q.
    check(*gradients(**options))


def varlen_gradients(q_lengths, k_lengths, h=2, h_kv=2, d=32, causal=False,
                     window=(-1, -1), softcap=0.0, deterministic=False, target="interp",
                     seed=5, slopes=None):
    rng = np.random.default_rng(seed)
    if slopes is not None:  # "H" or "BH": alibi_slopes [H] or [B, H]
        shape = (h,) if slopes == "H" else (len(q_lengths), h)
        slopes = rng.uniform(0.05, 0.5, shape).astype(np.float32)
    total_q, total_k = sum(q_lengths), sum(k_lengths)
    q = rng.standard_normal((total_q, h, d)).astype(np.float16)
    k, v = (rng.standard_normal((total_k, h_kv, d)).astype(np.float16) for _ in range(2))
    dout = rng.standard_normal((total_q, h, d)).astype(np.float16)
    cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32)
                  for n in (q_lengths, k_lengths))
    out, lse = flashc.attention_varlen(q, k, v, cu_q, cu_k, max(q_lengths), max(k_lengths),
                                       causal=causal, window_size=window, softcap=softcap,
                                       return_lse=True, alibi_slopes=slopes)
    got = flashc.attention_varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k,
                                           max(q_lengths), max(k_lengths), causal=causal,
                                           window_size=window, softcap=softcap,
                                           deterministic=deterministic, target=target,
                                           alibi_slopes=slopes)
    want = [np.zeros(x.shape) for x in (q, k, v)]
    for i, (nq, nk) in enumerate(zip(q_lengths, k_lengths)):
        rows, keys = slice(cu_q[i], cu_q[i + 1]), slice(cu_k[i], cu_k[i + 1])
        seq = {n: x[None, sl].transpose(0, 2, 1, 3) for n, x, sl in
               (("Q", q, rows), ("K", k, keys), ("V", v, keys), ("DO", dout, rows))}
        if slopes is not None:
            seq["Slopes"] = (slopes if slopes.ndim == 1 else slopes[i])[None]
        grads = reference(dict(seq, sm_scale=d ** -0.5), visible(nq, nk, causal, *window),
                          {"H": h, "H_KV": h_kv}, softcap)[2]
        for w, g, sl in zip(want, grads, (rows, keys, keys)):
            w[sl] = g[0].transpose(1, 0, 2)
    return got, want, (q, k, v)


@pytest.mark.parametrize("options", [
    {"causal": True},
    {"h": 4, "h_kv": 2, "window": (6, 2), "deterministic": True},
    {"softcap": 2.0, "causal": True, "window": (10, -1), "target": "emulate"},
    {"d": 40, "h": 3, "h_kv": 1, "deterministic": True, "target": "emulate"},
    {"slopes": "BH", "causal": True, "h": 4, "h_kv": 2},
    {"slopes": "H", "window": (6, 2), "softcap": 2.0, "deterministic": True,
     "target": "emulate"},
])
def test_varlen_gradients(options):
    # Sequences shorter and longer than the key and query blocks, one of no
    # queries and one of a single query; each sequence's gradient its own.
    check(*varlen_gradients([30, 0, 1, 70], [45, 7, 20, 50], **options))
