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


def torch_gradients(torch, call, inputs, dout):
    """The gradients of q, k, v (NumPy) through call(q, k, v) on torch tensors."""
    tensors = [torch.from_numpy(x).requires_grad_() for x in inputs]
    out = call(*tensors)
    out.backward(torch.from_numpy(dout))
    return [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("h, h_kv, causal, softcap, dv", [
    (2, 2, True, 0.0, 32), (4, 2, False, 0.0, 32), (2, 1, True, 2.0, 48)])
def test_gradients(h, h_kv, causal, softcap, dv):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    q = (rng.standard_normal((1, 24, h, 32)) * 3).astype(np.float16)
    k = rng.standard_normal((1, 40, h_kv, 32)).astype(np.float16)
    v = rng.standard_normal((1, 40, h_kv, dv)).astype(np.float16)
    dout = rng.standard_normal((1, 24, h, dv)).astype(np.float16)
    got = torch_gradients(torch, lambda *x: flashc.attention(*x, causal=causal,
                                                             softcap=softcap),
                          (q, k, v), dout)
    heads_first = {n: x.transpose(0, 2, 1, 3) for n, x in
                   (("Q", q), ("K", k), ("V", v), ("DO", dout))}
    want = reference(dict(heads_first, sm_scale=32 ** -0.5),
                     visible(24, 40, causal, -1, -1), {"H": h, "H_KV": h_kv}, softcap)[2]
    for g, w in zip(got, want):
        assert relative_error(g, w.transpose(0, 2, 1, 3)) < 5e-3


def test_varlen_gradients():
    # flash_attn_varlen_func (and its packed form) through FlashAttnVarlenFunc
    # give attention_varlen_backward's gradients (test_backward.py checks
    # those against float64): the autograd plumbing.
    torch = pytest.importorskip("torch")
    from flashc import flash_attn as fa

    rng = np.random.default_rng(5)
    q, k, v, dout = (rng.standard_normal((29, 2, 32)).astype(np.float16) for _ in range(4))
    cu = np.array([0, 20, 29], np.int32)
    out, lse = flashc.attention_varlen(q, k, v, cu, cu, 20, 20, causal=True, return_lse=True)
    want = flashc.attention_varlen_backward(dout, q, k, v, out, lse, cu, cu, 20, 20,
                                            causal=True, deterministic=True)
    got = torch_gradients(torch, lambda q, k, v: fa.flash_attn_varlen_func(
        q, k, v, cu, cu, 20, 20, causal=True, deterministic=True), (q, k, v), dout)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    qkv = torch.from_numpy(np.stack((q, k, v), axis=1)).requires_grad_()
    fa.flash_attn_varlen_qkvpacked_func(qkv, cu, 20, causal=True,
                                        deterministic=True).backward(
        torch.from_numpy(dout))
    for i, w in enumerate(want):
        np.testing.assert_array_equal(qkv.grad[:, i].numpy(), w)


def test_lse_has_no_gradient():
    torch = pytest.importorskip("torch")
    q = torch.zeros((1, 16, 2, 32), dtype=torch.float16, requires_grad=True)
    out, lse = flashc.FlashAttnFunc.apply(q, q, q, None, False, (-1, -1), False, None, "sm_80")
    assert out.requires_grad and not lse.requires_grad
