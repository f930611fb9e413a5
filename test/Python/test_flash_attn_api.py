"""flashc.flash_attn: flash_attn 2.8's function names, signatures and
returns over flashc's kernels, against the float64 reference."""
import numpy as np
import pytest

from flashc import flash_attn as fa
from conftest import relative_error
from test_attention import TOLERANCE, expected, inputs


def test_func_returns_out_or_out_lse_and_no_probs():
    q, k, v = inputs()
    window = np.array([9, 3])  # flash_attn's tests pass the window as a tensor
    want, want_lse = expected(q, k, v, 0.125, causal=True, window=(9, 3))
    out = fa.flash_attn_func(q, k, v, 0.0, None, True, window)
    assert relative_error(out, want) < TOLERANCE
    out, lse, probs = fa.flash_attn_func(q, k, v, causal=True, window_size=window,
                                         return_attn_probs=True)
    assert probs is None
    assert relative_error(out, want) < TOLERANCE
    assert np.abs(lse - want_lse).max() < 1e-2


def test_packed_forms_unpack_as_flash_attn():
    q, k, v = inputs(h=2, h_kv=2, nq=40, nk=40)
    want, _ = expected(q, k, v, 0.125)
    qkv = np.stack((q, k, v), axis=2)
    assert relative_error(fa.flash_attn_qkvpacked_func(qkv), want) < TOLERANCE
    kv = np.stack((k, v), axis=2)
    assert relative_error(fa.flash_attn_kvpacked_func(q, kv), want) < TOLERANCE


def test_varlen_forms():
    q, k, v = inputs(h=2, h_kv=2, nq=40, nk=40)
    cu = np.array([0, 40], np.int32)
    want, want_lse = expected(q, k, v, 0.125, causal=True)
    out, lse, probs = fa.flash_attn_varlen_qkvpacked_func(
        np.stack((q[0], k[0], v[0]), axis=1), cu, 40, causal=True, return_attn_probs=True)
    assert probs is None and lse.shape == (2, 40)
    assert relative_error(out, want[0]) < TOLERANCE
    assert np.abs(lse - want_lse[0]).max() < 1e-2
    out = fa.flash_attn_varlen_kvpacked_func(q[0], np.stack((k[0], v[0]), axis=1), cu, cu,
                                             40, 40, causal=True)
    assert relative_error(out, want[0]) < TOLERANCE


def test_kvcache_heuristic_splits():
    q, k, v = inputs(nq=3, nk=50)
    want, _ = expected(q, k, v, 0.125, causal=True)
    out = fa.flash_attn_with_kvcache(q, k, v, cache_seqlens=50, causal=True, num_splits=0)
    assert relative_error(out, want) < TOLERANCE


@pytest.mark.parametrize("call, argument", [
    (lambda q, k, v: fa.flash_attn_func(q, k, v, dropout_p=0.1), "dropout_p"),
    (lambda q, k, v: fa.flash_attn_varlen_func(
        q[0], k[0], v[0], np.array([0, 37], np.int32), np.array([0, 53], np.int32), 37, 53,
        block_table=np.zeros((1, 1), np.int32)), "block_table"),
])
def test_missing_features_name_the_argument(call, argument):
    with pytest.raises(NotImplementedError, match=argument):
        call(*inputs())
