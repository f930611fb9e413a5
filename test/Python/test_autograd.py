"""flashc.attention on torch tensors that require grad: FlashAttnFunc's
gradients against the analytic float64 gradient (skipped without torch)."""
import importlib.util

import numpy as np
import pytest

import flashc
from check_backward import reference
from check_variant import visible
from conftest import relative_error

HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.skipif(HAS_TORCH, reason="torch is importable")
def test_no_function_without_torch():
    with pytest.raises(ImportError):
        flashc.FlashAttnFunc


@pytest.mark.parametrize("h, h_kv, causal", [(2, 2, True), (4, 2, False)])
def test_gradients(h, h_kv, causal):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    q = rng.standard_normal((1, 24, h, 32)).astype(np.float16)
    k, v = (rng.standard_normal((1, 40, h_kv, 32)).astype(np.float16) for _ in range(2))
    dout = rng.standard_normal(q.shape).astype(np.float16)
    tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (q, k, v))
    out = flashc.attention(tq, tk, tv, causal=causal)
    out.backward(torch.from_numpy(dout))
    heads_first = {n: x.transpose(0, 2, 1, 3) for n, x in
                   (("Q", q), ("K", k), ("V", v), ("DO", dout))}
    want = reference(dict(heads_first, sm_scale=32 ** -0.5),
                     visible(24, 40, causal, -1, -1), {"H": h, "H_KV": h_kv})[2:]
    for t, w in zip((tq, tk, tv), want):
        assert relative_error(t.grad.numpy(), w.transpose(0, 2, 1, 3)) < 5e-3


def test_lse_has_no_gradient_and_softcap_is_refused():
    torch = pytest.importorskip("torch")
    q = torch.zeros((1, 16, 2, 32), dtype=torch.float16, requires_grad=True)
    out, lse = flashc.FlashAttnFunc.apply(q, q, q, None, False, (-1, -1), False, None, "sm_80")
    assert out.requires_grad and not lse.requires_grad
    with pytest.raises(NotImplementedError, match="softcap"):
        flashc.attention(q, q, q, softcap=5.0)
    with pytest.raises(NotImplementedError, match="v's head dim"):
        flashc.attention(q, q, torch.zeros((1, 16, 2, 64), dtype=torch.float16))
