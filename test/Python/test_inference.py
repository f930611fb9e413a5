"""flashc.attention_varlen and flashc.attention_with_kvcache against the
float64 reference of the attention variants, one sequence at a time."""
import numpy as np
import pytest

import flashc
from flashc.flash_attn import flash_attn_with_kvcache
from check_variant import reference
from conftest import relative_error

TOLERANCE = 3e-3


def sequence_reference(q, k, v, scale, causal=False, window=(-1, -1), softcap=0.0):
    """float64 (out [Nq, H, D], lse [H, Nq]) of one sequence, token-major."""
    x = {n: a.transpose(1, 0, 2)[None] for n, a in (("Q", q), ("K", k), ("V", v))}
    x["sm_scale"] = scale
    sizes = {"B": 1, "H": q.shape[1], "H_KV": k.shape[1], "Nq": q.shape[0], "Nk": k.shape[0]}
    opts = {"causal": causal, "left": window[0], "right": window[1], "softcap": softcap}
    out, lse = reference(x, opts, sizes)
    return out[0].transpose(1, 0, 2), lse[0]


def packed(rng, lengths, heads, d=32):
    return rng.standard_normal((sum(lengths), heads, d)).astype(np.float16)


def cumulative(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


# sm_90a on the emulator: 8 warps and a producer warpgroup issuing every K
# and V block as a TMA box of one head's rows in the packed tensors (rows
# past a sequence are the next one's, masked); keys over several blocks.
@pytest.mark.parametrize("options,lk,platform", [
    ({"causal": True}, [9, 4, 19, 30], {}),
    ({"window_size": (6, 2), "softcap": 4.0}, [9, 4, 19, 30], {}),
    ({"causal": True}, [9, 4, 150, 200], {"target": "emulate", "arch": "sm_90a"}),
    ({"window_size": (70, 2)}, [9, 4, 150, 200], {"target": "emulate", "arch": "sm_90a"}),
])
def test_varlen(options, lk, platform):
    rng = np.random.default_rng(3)
    lq = [5, 0, 19, 12]
    q, k, v = packed(rng, lq, 4), packed(rng, lk, 2), packed(rng, lk, 2)
    cq, ck = cumulative(lq), cumulative(lk)
    out, lse = flashc.attention_varlen(q, k, v, cq, ck, max(lq), max(lk),
                                       return_lse=True, **options, **platform)
    assert out.shape == q.shape and lse.shape == (4, sum(lq)) and lse.dtype == np.float32
    for b in range(len(lq)):
        rows = slice(cq[b], cq[b + 1])
        want, want_lse = sequence_reference(
            q[rows], k[ck[b]:ck[b + 1]], v[ck[b]:ck[b + 1]], 32 ** -0.5,
            options.get("causal", False), options.get("window_size", (-1, -1)),
            options.get("softcap", 0.0))
        if lq[b]:
            assert relative_error(out[rows], want) < TOLERANCE
            assert np.allclose(lse[:, rows], want_lse, rtol=1e-3, atol=1e-3)


def paged_cache(rng, lens, page_size, h_kv=2, d=32, capacity=None):
    """(k_cache, v_cache, block_table): the pages of each sequence shuffled,
    unused slots NaN; room for `capacity` tokens per sequence."""
    capacity = capacity or max(lens)
    per_seq = -(-capacity // page_size)
    pages = len(lens) * per_seq
    order = rng.permutation(pages).astype(np.int32)
    table = order.reshape(len(lens), per_seq)
    caches = []
    for _ in range(2):
        cache = np.full((pages, page_size, h_kv, d), np.nan, np.float16)
        for b, n in enumerate(lens):
            tokens = rng.standard_normal((n, h_kv, d)).astype(np.float16)
            for i in range(n):
                cache[table[b, i // page_size], i % page_size] = tokens[i]
        caches.append(cache)
    return caches[0], caches[1], table


def gathered(cache, table, b, n):
    page_size = cache.shape[1]
    return np.stack([cache[table[b, i // page_size], i % page_size] for i in range(n)])


def check_kvcache(q, k_cache, v_cache, table, lens, out, lse, causal):
    for b, n in enumerate(lens):
        k, v = gathered(k_cache, table, b, n), gathered(v_cache, table, b, n)
        want, want_lse = sequence_reference(q[b], k, v, 32 ** -0.5, causal)
        assert relative_error(out[b], want) < TOLERANCE
        assert np.allclose(lse[b], want_lse, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("num_splits", [1, 3])
def test_kvcache_decode(num_splits):
    rng = np.random.default_rng(4)
    lens = [21, 40]
    k_cache, v_cache, table = paged_cache(rng, lens, page_size=16)
    q = rng.standard_normal((2, 1, 4, 32)).astype(np.float16)
    out, lse = flashc.attention_with_kvcache(
        q, k_cache, v_cache, cache_seqlens=np.array(lens, np.int32), block_table=table,
        num_splits=num_splits, return_softmax_lse=True)
    assert out.shape == q.shape and lse.shape == (2, 4, 1)
    check_kvcache(q, k_cache, v_cache, table, lens, out, lse, causal=False)


def test_kvcache_append_causal():
    rng = np.random.default_rng(5)
    lens, new = [7, 18], 3
    k_cache, v_cache, table = paged_cache(rng, lens, page_size=8, capacity=24)
    k_new, v_new = (rng.standard_normal((2, new, 2, 32)).astype(np.float16) for _ in range(2))
    q = rng.standard_normal((2, new, 2, 32)).astype(np.float16)
    seqlens = np.array(lens, np.int32)
    out, lse = flashc.attention_with_kvcache(
        q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens, block_table=table,
        causal=True, return_softmax_lse=True)
    assert list(seqlens) == lens  # not updated, as flash_attn_with_kvcache
    grown = [n + new for n in lens]
    for b, n in enumerate(lens):
        assert np.array_equal(gathered(k_cache, table, b, n + new)[n:], k_new[b])
        assert np.array_equal(gathered(v_cache, table, b, n + new)[n:], v_new[b])
    check_kvcache(q, k_cache, v_cache, table, grown, out, lse, causal=True)


def test_kvcache_contiguous_cache_on_emulate():
    rng = np.random.default_rng(6)
    k_cache, v_cache = (rng.standard_normal((2, 24, 1, 32)).astype(np.float16) for _ in range(2))
    q = rng.standard_normal((2, 1, 2, 32)).astype(np.float16)
    out = flashc.attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=np.array([24, 10]),
                                        target="emulate")
    for b, n in enumerate([24, 10]):
        want, _ = sequence_reference(q[b], k_cache[b, :n], v_cache[b, :n], 32 ** -0.5)
        assert relative_error(out[b], want) < TOLERANCE


def test_kvcache_errors():
    q = np.zeros((1, 1, 2, 32), np.float16)
    cache = np.zeros((2, 16, 1, 32), np.float16)
    with pytest.raises(ValueError, match="needs cache_seqlens"):
        flashc.attention_with_kvcache(q, cache, cache, block_table=np.zeros((1, 2), np.int32))
    with pytest.raises(ValueError, match="must be contiguous"):
        strided = np.zeros((2, 16, 2, 32), np.float16)[:, :, :1]
        flashc.attention_with_kvcache(q, strided, strided, q[:, :, :1], q[:, :, :1],
                                      cache_seqlens=1, block_table=np.zeros((1, 2), np.int32))


@pytest.mark.parametrize("target", ["interp", "emulate"])
def test_kvcache_kernel_asserts_capacity(kernels, target):
    # The kernels themselves refuse keys past the block table (2 pages of
    # 16 tokens), as the Python checks before them do.
    attend = flashc.compile(f"{kernels}/flash_attn_kvcache.tile", HEAD_DIM=32)
    append = flashc.compile(f"{kernels}/kvcache_append.tile", HEAD_DIM=32, BLOCK_H=1)
    q = np.zeros((1, 1, 2, 32), np.float16)
    cache = np.zeros((3, 16, 1, 32), np.float16)
    table = np.array([[2, 0]], np.int32)
    new = np.ones((1, 1, 1, 32), np.float16)

    def run(seqlen):
        o = np.zeros_like(q)
        lse = np.zeros((1, 2, 1), np.float32)
        attend(Q=q, K_cache=cache, V_cache=cache, block_table=table,
               cache_seqlens=np.array([seqlen], np.int32),
               cache_leftpad=np.zeros(1, np.int32), Slopes=np.zeros((1, 2), np.float32),
               O=o, LSE=lse,
               sm_scale=0.125, target=target)

    run(32)
    with pytest.raises(RuntimeError, match="page index past the block table: "
                                           r"cache_seqlens\[b\] > MaxPages"):
        run(33)
    append(K_new=new, V_new=new, K_cache=cache, V_cache=cache.copy(), block_table=table,
           cache_seqlens=np.array([31], np.int32), target=target)
    with pytest.raises(RuntimeError, match=r"cache_seqlens\[b\] \+ Nnew > MaxPages"):
        append(K_new=new, V_new=new, K_cache=cache, V_cache=cache.copy(), block_table=table,
               cache_seqlens=np.array([32], np.int32), target=target)


def test_kvcache_capacity_errors():
    # The block table holds 2 pages of 16 tokens: 32 fit, one more does not,
    # whether it is cached already or appended now; nothing is written.
    q = np.zeros((1, 1, 2, 32), np.float16)
    cache = np.zeros((3, 16, 1, 32), np.float16)
    table = np.array([[2, 0]], np.int32)
    new = np.ones((1, 1, 1, 32), np.float16)
    flashc.attention_with_kvcache(q, cache, cache, cache_seqlens=32, block_table=table)
    with pytest.raises(ValueError, match=r"cache_seqlens\[0\] \(33\) exceeds the cache's "
                                         r"capacity of 32 tokens \(block_table's 2 pages of 16\)"):
        flashc.attention_with_kvcache(q, cache, cache, cache_seqlens=33, block_table=table)
    with pytest.raises(ValueError, match=r"\(32\) plus 1 new tokens exceeds"):
        flashc.attention_with_kvcache(q, cache, cache, new, new, cache_seqlens=32,
                                      block_table=table)
    assert not cache.any()
    with pytest.raises(ValueError, match=r"cache_seqlens\[1\] is -1"):
        flashc.attention_with_kvcache(np.zeros((2, 1, 2, 32), np.float16), cache, cache,
                                      cache_seqlens=np.array([3, -1], np.int32),
                                      block_table=np.array([[0, 1], [2, 0]], np.int32))
    # Without a block table the capacity is the cache's sequence length.
    with pytest.raises(ValueError, match="capacity of 16 tokens"):
        flashc.attention_with_kvcache(q, cache, cache, cache_seqlens=17)


def test_varlen_head_dim_padded():
    # Head dim 59: padded to the kernels' 64 and cut back, scale 1 / sqrt(59).
    rng = np.random.default_rng(8)
    lq, lk = [5, 12], [9, 30]
    q, k, v = packed(rng, lq, 4, d=59), packed(rng, lk, 2, d=59), packed(rng, lk, 2, d=59)
    cq, ck = cumulative(lq), cumulative(lk)
    out = flashc.attention_varlen(q, k, v, cq, ck, max(lq), max(lk), causal=True)
    assert out.shape == q.shape
    for b in range(len(lq)):
        rows = slice(cq[b], cq[b + 1])
        want, _ = sequence_reference(q[rows], k[ck[b]:ck[b + 1]], v[ck[b]:ck[b + 1]],
                                     59 ** -0.5, causal=True)
        assert relative_error(out[rows], want) < TOLERANCE


@pytest.mark.parametrize("num_splits", [1, 2])
def test_kvcache_head_dim_padded(num_splits):
    # Head dim 40 (kernels: 48): the tokens appended to the padded copy of
    # the cache land in the caller's cache; the output has 40 columns.
    rng = np.random.default_rng(9)
    lens, new, d = [7, 18], 2, 40
    k_cache, v_cache, table = paged_cache(rng, lens, page_size=8, d=d, capacity=24)
    k_new, v_new = (rng.standard_normal((2, new, 2, d)).astype(np.float16) for _ in range(2))
    q = rng.standard_normal((2, new, 2, d)).astype(np.float16)
    out = flashc.attention_with_kvcache(
        q, k_cache, v_cache, k_new, v_new, cache_seqlens=np.array(lens, np.int32),
        block_table=table, causal=True, num_splits=num_splits)
    assert out.shape == q.shape
    for b, n in enumerate(lens):
        k = gathered(k_cache, table, b, n + new)
        v = gathered(v_cache, table, b, n + new)
        assert np.array_equal(k[n:], k_new[b]) and np.array_equal(v[n:], v_new[b])
        want, _ = sequence_reference(q[b], k, v, d ** -0.5, causal=True)
        assert relative_error(out[b], want) < TOLERANCE


def rotated(x, cos, sin, positions, interleaved):
    """float64 rotary embedding of x [N, H, D] (token i at row positions[i] of
    cos and sin [S, R / 2]), rounded to x's dtype as flash_attn stores it."""
    half = cos.shape[1]
    c = cos.astype(np.float64)[positions][:, None, :]
    s = sin.astype(np.float64)[positions][:, None, :]
    y = x.astype(np.float64)
    if interleaved:
        x1, x2 = y[..., 0:2 * half:2].copy(), y[..., 1:2 * half:2].copy()
        y[..., 0:2 * half:2], y[..., 1:2 * half:2] = x1 * c - x2 * s, x2 * c + x1 * s
    else:
        x1, x2 = y[..., :half].copy(), y[..., half:2 * half].copy()
        y[..., :half], y[..., half:2 * half] = x1 * c - x2 * s, x2 * c + x1 * s
    return y.astype(x.dtype)


def rotary_tables(rng, rows, rotary_dim):
    angle = rng.uniform(0, 2 * np.pi, (rows, rotary_dim // 2))
    return np.cos(angle).astype(np.float16), np.sin(angle).astype(np.float16)


@pytest.mark.parametrize("num_splits,target", [(1, "interp"), (2, "interp"), (1, "emulate")])
def test_kvcache_batch_idx_leftpad(num_splits, target):
    # Batch b reads cache row cache_batch_idx[b] from cache_leftpad[b] on:
    # the slots before it (NaN here) are invisible and causal counts from it;
    # the new tokens land at cache_seqlens[b] of that row.
    rng = np.random.default_rng(10)
    rows, capacity, new, d = 4, 40, 3, 32
    k_cache, v_cache = (rng.standard_normal((rows, capacity, 2, d)).astype(np.float16)
                        for _ in range(2))
    batch_idx = np.array([2, 0, 3], np.int32)
    lens = np.array([30, 9, 17], np.int32)
    pads = np.array([11, 0, 17], np.int32)
    for b, row in enumerate(batch_idx):
        k_cache[row, :pads[b]] = np.nan
        v_cache[row, :pads[b]] = np.nan
    before_k, before_v = k_cache.copy(), v_cache.copy()
    k_new, v_new = (rng.standard_normal((3, new, 2, d)).astype(np.float16) for _ in range(2))
    q = rng.standard_normal((3, new, 4, d)).astype(np.float16)
    out, lse = flash_attn_with_kvcache(
        q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, cache_batch_idx=batch_idx,
        cache_leftpad=pads, causal=True, num_splits=num_splits, return_softmax_lse=True,
        target=target)
    untouched = np.ones(rows, bool)
    untouched[batch_idx] = False
    assert np.array_equal(k_cache[untouched], before_k[untouched], equal_nan=True)
    for b, row in enumerate(batch_idx):
        n, pad = lens[b], pads[b]
        assert np.array_equal(k_cache[row, n:n + new], k_new[b])
        assert np.array_equal(v_cache[row, n:n + new], v_new[b])
        assert np.array_equal(k_cache[row, :n], before_k[row, :n], equal_nan=True)
        want, want_lse = sequence_reference(q[b], k_cache[row, pad:n + new],
                                            v_cache[row, pad:n + new], d ** -0.5, causal=True)
        assert relative_error(out[b], want) < TOLERANCE
        assert np.allclose(lse[b], want_lse, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("interleaved,causal,window,num_splits,target", [
    (True, True, (-1, -1), 1, "interp"),
    (False, False, (-1, -1), 1, "interp"),
    (True, False, (4, -1), 2, "interp"),
    (False, True, (-1, -1), 1, "emulate"),
    (True, False, (-1, -1), 1, "emulate"),
])
def test_kvcache_rotary(interleaved, causal, window, num_splits, target):
    # The new keys are rotated at cache positions cache_seqlens[b] + i and
    # stored so; the queries at the same positions with causal or a window,
    # else all at cache_seqlens[b]. Head dim 40 (kernels: 48), rotary_dim 32
    # (features 32 .. 39 not rotated); left padding and cache_batch_idx do
    # not move the positions (they count from the cache's slot 0).
    rng = np.random.default_rng(11)
    capacity, new, d, rotary_dim = 36, 4, 40, 32
    k_cache, v_cache = (rng.standard_normal((3, capacity, 1, d)).astype(np.float16)
                        for _ in range(2))
    cos, sin = rotary_tables(rng, capacity, rotary_dim)
    lens = np.array([13, 0], np.int32)
    pads = np.array([5, 0], np.int32)
    batch_idx = np.array([1, 2], np.int32)
    k_new, v_new = (rng.standard_normal((2, new, 1, d)).astype(np.float16) for _ in range(2))
    q = rng.standard_normal((2, new, 3, d)).astype(np.float16)
    out = flash_attn_with_kvcache(
        q, k_cache, v_cache, k_new, v_new, rotary_cos=cos, rotary_sin=sin,
        cache_seqlens=lens, cache_batch_idx=batch_idx, cache_leftpad=pads, causal=causal,
        window_size=window, rotary_interleaved=interleaved, num_splits=num_splits,
        target=target)
    for b, row in enumerate(batch_idx):
        n, pad = lens[b], pads[b]
        positions = n + np.arange(new)
        k_ro = rotated(k_new[b], cos, sin, positions, interleaved)
        assert relative_error(k_cache[row, n:n + new], k_ro) < 1e-3
        assert np.array_equal(k_cache[row, n:n + new, :, rotary_dim:], k_new[b, :, :, rotary_dim:])
        assert np.array_equal(v_cache[row, n:n + new], v_new[b])
        per_token = causal or window != (-1, -1)
        q_ro = rotated(q[b], cos, sin, positions if per_token else np.full(new, n),
                       interleaved)
        want, _ = sequence_reference(q_ro, k_cache[row, pad:n + new], v_cache[row, pad:n + new],
                                     d ** -0.5, causal, window)
        assert relative_error(out[b], want) < TOLERANCE


def test_kvcache_rotary_leftpad_batch_idx_errors():
    q = np.zeros((1, 2, 2, 32), np.float16)
    cache = np.zeros((2, 16, 1, 32), np.float16)
    new = np.zeros((1, 2, 1, 32), np.float16)
    cos = np.zeros((16, 8), np.float16)
    table = np.zeros((1, 1), np.int32)
    seqlens = np.array([4], np.int32)
    cases = [
        (dict(rotary_cos=cos, rotary_sin=cos), "need k and v"),
        (dict(k=new, v=new, rotary_cos=cos), "go together"),
        (dict(k=new, v=new, rotary_cos=cos, rotary_sin=cos[:, :4]), r"both be \[seqlen_ro"),
        (dict(k=new, v=new, rotary_cos=cos[:, :4], rotary_sin=cos[:, :4]),
         "must be a multiple of 16"),
        (dict(k=new, v=new, rotary_cos=np.zeros((16, 24), np.float16),
              rotary_sin=np.zeros((16, 24), np.float16)), "up to the head dim 32"),
        (dict(k=new, v=new, rotary_cos=cos[:15], rotary_sin=cos[:15]), "have 15 rows"),
        (dict(k=new, v=new, rotary_cos=cos.astype(np.float32),
              rotary_sin=cos.astype(np.float32)), "must have q's dtype"),
        (dict(cache_batch_idx=np.array([0], np.int32), block_table=table),
         "cache_batch_idx with block_table"),
        (dict(cache_batch_idx=np.array([2], np.int32)), r"cache_batch_idx\[0\] is 2"),
        (dict(cache_batch_idx=np.array([0, 1], np.int32)), r"must be \[B\]"),
        (dict(cache_leftpad=np.array([1], np.int32), block_table=table),
         "cache_leftpad with block_table"),
        (dict(cache_leftpad=np.array([5], np.int32)), r"cache_leftpad\[0\] is 5"),
        (dict(cache_leftpad=np.array([-1], np.int32)), r"cache_leftpad\[0\] is -1"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            flash_attn_with_kvcache(q, cache, cache, cache_seqlens=seqlens, **kwargs)
    assert not cache.any()


def alibi_reference(q, k, v, slopes, causal, window=(-1, -1)):
    """float64 (out [Nq, H, D], lse [H, Nq]) of one sequence with ALiBi."""
    x = {n: a.transpose(1, 0, 2)[None] for n, a in (("Q", q), ("K", k), ("V", v))}
    x["sm_scale"] = q.shape[-1] ** -0.5
    x["Slopes"] = slopes
    sizes = {"B": 1, "H": q.shape[1], "H_KV": k.shape[1], "Nq": q.shape[0], "Nk": k.shape[0]}
    opts = {"causal": causal, "left": window[0], "right": window[1], "softcap": 0.0}
    out, lse = reference(x, opts, sizes)
    return out[0].transpose(1, 0, 2), lse[0]


@pytest.mark.parametrize("slopes_shape,nq,causal,window,num_splits,target", [
    ("H", 1, False, (-1, -1), 1, "interp"),       # decode: GQA packed, a slope per row
    ("BH", 1, False, (-1, -1), 2, "interp"),
    ("BH", 3, True, (-1, -1), 1, "interp"),
    ("H", 3, False, (5, 0), 2, "interp"),
    ("BH", 1, False, (-1, -1), 1, "emulate"),
    ("H", 3, True, (-1, -1), 1, "emulate"),
])
def test_kvcache_alibi(slopes_shape, nq, causal, window, num_splits, target):
    # ALiBi over a paged cache, and (second batch) with left padding on a
    # contiguous one: distances count from cache_leftpad.
    rng = np.random.default_rng(12)
    lens = [21, 40]
    k_cache, v_cache, table = paged_cache(rng, lens, page_size=16)
    q = rng.standard_normal((2, nq, 4, 32)).astype(np.float16)
    slopes = rng.uniform(0.05, 0.5, (4,) if slopes_shape == "H" else (2, 4)).astype(np.float32)
    out, lse = flash_attn_with_kvcache(
        q, k_cache, v_cache, cache_seqlens=np.array(lens, np.int32), block_table=table,
        causal=causal, window_size=window, alibi_slopes=slopes, num_splits=num_splits,
        return_softmax_lse=True, target=target)
    for b, n in enumerate(lens):
        k, v = gathered(k_cache, table, b, n), gathered(v_cache, table, b, n)
        row = slopes if slopes.ndim == 1 else slopes[b]
        want, want_lse = alibi_reference(q[b], k, v, row, causal, window)
        assert relative_error(out[b], want) < TOLERANCE
        assert np.allclose(lse[b], want_lse, rtol=1e-3, atol=1e-3)
    dense_k = np.stack([gathered(k_cache, table, b, 40) if b else
                        np.concatenate([gathered(k_cache, table, 0, 21),
                                        np.zeros((19, 2, 32), np.float16)]) for b in range(2)])
    dense_v = np.stack([gathered(v_cache, table, b, 40) if b else
                        np.concatenate([gathered(v_cache, table, 0, 21),
                                        np.zeros((19, 2, 32), np.float16)]) for b in range(2)])
    pads = np.array([0, 12], np.int32)
    out = flash_attn_with_kvcache(
        q, dense_k, dense_v, cache_seqlens=np.array(lens, np.int32), cache_leftpad=pads,
        causal=causal, window_size=window, alibi_slopes=slopes, num_splits=num_splits,
        target=target)
    for b, n in enumerate(lens):
        row = slopes if slopes.ndim == 1 else slopes[b]
        want, _ = alibi_reference(q[b], dense_k[b, pads[b]:n], dense_v[b, pads[b]:n], row,
                                  causal, window)
        assert relative_error(out[b], want) < TOLERANCE


def test_kvcache_alibi_slopes_shape():
    # Refused before anything is appended.
    q = np.zeros((2, 1, 4, 32), np.float16)
    k_cache, v_cache = np.zeros((2, 16, 2, 32), np.float16), np.zeros((2, 16, 2, 32), np.float16)
    new = np.ones((2, 1, 2, 32), np.float16)
    with pytest.raises(ValueError, match=r"alibi_slopes must be \[H\]"):
        flash_attn_with_kvcache(q, k_cache, v_cache, new, new, cache_seqlens=3,
                                alibi_slopes=np.zeros((3,), np.float32))
    assert not k_cache.any() and not v_cache.any()
