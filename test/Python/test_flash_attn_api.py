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
    (lambda q, k, v: fa.flash_attn_varlen_func(
        q[0], k[0, None], v[0, None], np.array([0, 37], np.int32), np.array([0, 53], np.int32),
        37, 53, dropout_p=0.1, block_table=np.zeros((1, 1), np.int32)), "dropout_p"),
])
def test_missing_features_name_the_argument(call, argument):
    with pytest.raises(NotImplementedError, match=argument):
        call(*inputs())


def varlen_sequences(rng, q_lengths, k_lengths, h=4, h_kv=2, d=32):
    """Packed q [TotalQ, H, D] and each sequence's k, v [Nk, H_KV, D]."""
    q = rng.standard_normal((sum(q_lengths), h, d)).astype(np.float16)
    kv = [tuple(rng.standard_normal((n, h_kv, d)).astype(np.float16) for _ in range(2))
          for n in k_lengths]
    return q, kv


def check_varlen(out, lse, q, kv, q_lengths, slopes, causal, window):
    """Each sequence against the float64 reference (ALiBi from its row of
    slopes [H] or [B, H])."""
    cu = np.concatenate([[0], np.cumsum(q_lengths)])
    for b, (k, v) in enumerate(kv):
        rows = slice(cu[b], cu[b + 1])
        if not q_lengths[b]:
            continue
        x = {"Q": q[None, rows], "K": k[None], "V": v[None]}
        if slopes is not None:
            x["Slopes"] = (slopes if slopes.ndim == 1 else slopes[b])[None]
        want, want_lse = expected(x["Q"], x["K"], x["V"], 32 ** -0.5, causal=causal,
                                  window=window, slopes=x.get("Slopes"))
        assert relative_error(out[rows], want[0]) < TOLERANCE
        got_lse = lse[:, rows]
        seen = np.isfinite(want_lse[0])   # rows that see no key: +inf
        assert np.array_equal(np.isposinf(got_lse), ~seen)
        assert np.abs(got_lse[seen] - want_lse[0][seen]).max() < 1e-2


@pytest.mark.parametrize("slopes_shape, causal, window, target", [
    ("H", False, (-1, -1), "interp"),
    ("BH", True, (-1, -1), "interp"),
    ("BH", False, (9, 3), "emulate"),
    ("H", True, (12, -1), "emulate"),
])
def test_varlen_alibi(slopes_shape, causal, window, target):
    # alibi_slopes [H] or [B, H]: sequence b's distances count from its own
    # bottom-right corner; softmax_lse as the dense ALiBi kernels give it.
    rng = np.random.default_rng(21)
    q_lengths, k_lengths = [5, 0, 19, 40], [9, 4, 19, 30]
    q, kv = varlen_sequences(rng, q_lengths, k_lengths)
    slopes = rng.uniform(0.05, 0.5, (4,) if slopes_shape == "H" else (4, 4)).astype(np.float32)
    k, v = (np.concatenate([pair[i] for pair in kv]) for i in range(2))
    cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32)
                  for n in (q_lengths, k_lengths))
    out, lse, probs = fa.flash_attn_varlen_func(
        q, k, v, cu_q, cu_k, max(q_lengths), max(k_lengths), causal=causal,
        window_size=window, alibi_slopes=slopes, return_attn_probs=True, target=target)
    assert probs is None and lse.shape == (4, sum(q_lengths))
    check_varlen(out, lse, q, kv, q_lengths, slopes, causal, window)


@pytest.mark.parametrize("page_size, causal, alibi, target", [
    (16, True, False, "interp"),
    (5, False, True, "interp"),
    (16, False, True, "emulate"),
    (7, True, False, "emulate"),
])
def test_varlen_paged(page_size, causal, alibi, target):
    # block_table: k and v are caches [num_blocks, page_block_size, H_KV, D];
    # sequence b's keys are the first cu_seqlens_k[b + 1] - cu_seqlens_k[b]
    # tokens of its pages (shuffled, the unused slots NaN).
    rng = np.random.default_rng(22)
    q_lengths, k_lengths = [5, 0, 19, 40], [9, 4, 19, 37]
    q, kv = varlen_sequences(rng, q_lengths, k_lengths)
    per_seq = -(-max(k_lengths) // page_size) + 1
    pages = len(k_lengths) * per_seq
    table = rng.permutation(pages).astype(np.int32).reshape(len(k_lengths), per_seq)
    caches = [np.full((pages, page_size, 2, 32), np.nan, np.float16) for _ in range(2)]
    for b, pair in enumerate(kv):
        for i in range(k_lengths[b]):
            for cache, x in zip(caches, pair):
                cache[table[b, i // page_size], i % page_size] = x[i]
    slopes = rng.uniform(0.05, 0.5, (4,)).astype(np.float32) if alibi else None
    cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32)
                  for n in (q_lengths, k_lengths))
    out, lse, _ = fa.flash_attn_varlen_func(
        q, caches[0], caches[1], cu_q, cu_k, max(q_lengths), max(k_lengths), causal=causal,
        alibi_slopes=slopes, return_attn_probs=True, block_table=table, target=target)
    check_varlen(out, lse, q, kv, q_lengths, slopes, causal, (-1, -1))


def test_varlen_paged_errors():
    q = np.zeros((10, 4, 32), np.float16)
    cache = np.zeros((3, 16, 2, 32), np.float16)
    cu_q, cu_k = np.array([0, 4, 10], np.int32), np.array([0, 20, 53], np.int32)
    table = np.array([[0, 1], [2, 0]], np.int32)
    with pytest.raises(ValueError, match=r"sequence 1 has 33 keys; block_table holds 2 pages"):
        fa.flash_attn_varlen_func(q, cache, cache, cu_q, cu_k, 6, 33, block_table=table)
    with pytest.raises(ValueError, match=r"block_table must be \[B, max_num_blocks_per_seq\]"):
        fa.flash_attn_varlen_func(q, cache, cache, cu_q, cu_q, 6, 6, block_table=table[:1])
    with pytest.raises(ValueError, match=r"block_table\[1, 0\] is 3"):
        fa.flash_attn_varlen_func(q, cache, cache, cu_q, cu_q, 6, 6,
                                  block_table=np.array([[0, 1], [3, 0]], np.int32))
    with pytest.raises(ValueError, match="paged caches"):
        fa.flash_attn_varlen_func(q, cache[0], cache[0], cu_q, cu_q, 6, 6, block_table=table)
    with pytest.raises(ValueError, match=r"alibi_slopes must be \[H\]"):
        fa.flash_attn_varlen_func(q, cache, cache, cu_q, cu_q, 6, 6, block_table=table,
                                  alibi_slopes=np.zeros((3,), np.float32))
