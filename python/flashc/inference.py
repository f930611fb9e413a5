"""flash_attn_varlen_func and flash_attn_with_kvcache over the inference
kernels of docs/kernels.md (flash_attn_varlen, flash_attn_kvcache, _split,
_combine, kvcache_append, kvcache_rotary). Their tensors keep
FlashAttention-2's token-major layout, so nothing is transposed here."""
from .kernel import DEFAULT_ARCH
from .attention import (backend, check_slopes, default_scale, kernel, mask_constants,
                        padded_head_dim, run)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                     softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                     return_lse=False, target=None, arch=DEFAULT_ARCH, alibi_slopes=None,
                     block_table=None, rng=None):
    """flash_attn_varlen_func: q [TotalQ, H, D], k and v [TotalK, H_KV, D]
    packed, sequence b being rows cu_seqlens[b] .. cu_seqlens[b + 1] - 1
    (int32 [B + 1]). Returns out [TotalQ, H, D], and with return_lse also
    softmax_lse f32 [H, TotalQ]. alibi_slopes f32 [H] or [B, H]: query i and
    key j of a sequence get -slope * |i + Nk - Nq - j| added to their scaled
    score. With block_table int32 [B, max_pages] k and v are a paged cache
    [num_blocks, page_block_size, H_KV, D]: key n of sequence b (n below
    cu_seqlens_k[b + 1] - cu_seqlens_k[b]) is slot n % page_block_size of
    page block_table[b, n // page_block_size]. max_seqlen_k is accepted for
    the signature; the kernel does not need it. With rng
    (attention.dropout_state's array) the dropout kernel
    flash_attn_varlen_dropout (contiguous k and v only)."""
    del max_seqlen_k
    arrays = backend(q)
    head_dim = q.shape[-1]
    padded = padded_head_dim(head_dim)
    q, k, v = (arrays.pad_last(x, padded) for x in (q, k, v))
    cu_q = arrays.array(cu_seqlens_q, q, int32=True)
    cu_k = arrays.array(cu_seqlens_k, q, int32=True)
    batch, heads, kv_heads = cu_q.shape[0] - 1, q.shape[1], k.shape[-2]
    slopes = _varlen_slopes(arrays, q, alibi_slopes, batch)
    if rng is not None:
        if block_table is not None:
            raise NotImplementedError("dropout_p > 0 with block_table: flashc has no paged "
                                      "dropout kernel")
        constants = mask_constants(padded, causal, window_size, softcap) + (
            ("ALIBI", alibi_slopes is not None),)
        compiled = kernel("flash_attn_varlen_dropout", arch, constants, arrays.dtype_name(q))
        args = dict(Q=arrays.contiguous(q), K=arrays.contiguous(k), V=arrays.contiguous(v),
                    cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, O=arrays.empty(q, q.shape),
                    LSE=arrays.empty(q, (heads, q.shape[0]), float32=True), Slopes=slopes,
                    Rng=arrays.array(rng, q, int32=True))
        run(compiled, arrays, target, args, max_seqlen_q=int(max_seqlen_q),
            sm_scale=default_scale(softmax_scale, head_dim))
        out = arrays.take_last(args["O"], head_dim)
        return (out, args["LSE"]) if return_lse else out
    if block_table is None:
        page_size = 1
        unread = arrays.empty(q, (1, 1, kv_heads, padded))
        kv = {"K": arrays.contiguous(k), "V": arrays.contiguous(v), "K_cache": unread,
              "V_cache": unread, "block_table": arrays.array([[0]], q, int32=True)}
    else:
        table = arrays.array(block_table, q, int32=True)
        page_size = _check_varlen_pages(cu_k, table, k, v, batch)
        unread = arrays.empty(q, (1, kv_heads, padded))
        kv = {"K": unread, "V": unread, "K_cache": arrays.contiguous(k),
              "V_cache": arrays.contiguous(v), "block_table": table}
    constants = mask_constants(padded, causal, window_size, softcap) + (
        ("ALIBI", alibi_slopes is not None), ("PAGED", block_table is not None),
        ("PAGE_SIZE", page_size))
    compiled = kernel("flash_attn_varlen", arch, constants, arrays.dtype_name(q))
    args = dict(kv, Q=arrays.contiguous(q), cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                O=arrays.empty(q, q.shape), Slopes=slopes,
                LSE=arrays.empty(q, (heads, q.shape[0]), float32=True))
    run(compiled, arrays, target, args, max_seqlen_q=int(max_seqlen_q),
        sm_scale=default_scale(softmax_scale, head_dim))
    out = arrays.take_last(args["O"], head_dim)
    return (out, args["LSE"]) if return_lse else out


def _varlen_slopes(arrays, q, alibi_slopes, batch):
    """alibi_slopes as flash_attn_varlen's Slopes f32 [SB, H] (zeros [1, H],
    not read, without)."""
    heads = q.shape[1]
    if alibi_slopes is None:
        return arrays.empty(q, (1, heads), float32=True)
    check_slopes(alibi_slopes, batch, heads)
    return arrays.array(alibi_slopes, q).reshape(-1, heads)


def _check_varlen_pages(cu_seqlens_k, block_table, k_cache, v_cache, batch):
    """flash_attn_varlen_func's paged cache: k_cache and v_cache [num_blocks,
    page_block_size, H_KV, D] alike, block_table [B, max_pages] holding every
    sequence's keys (cu_seqlens_k and block_table: the backend's int32
    arrays). Returns page_block_size."""
    if len(k_cache.shape) != 4 or tuple(k_cache.shape) != tuple(v_cache.shape):
        raise ValueError("with block_table, k and v must be paged caches [num_blocks, "
                         "page_block_size, H_KV, D] of one shape, not %s and %s"
                         % (tuple(k_cache.shape), tuple(v_cache.shape)))
    if len(block_table.shape) != 2 or block_table.shape[0] != batch:
        raise ValueError("block_table must be [B, max_num_blocks_per_seq] with B = %d "
                         "(cu_seqlens_k has B + 1 entries), not %s"
                         % (batch, tuple(block_table.shape)))
    cu = [int(n) for n in cu_seqlens_k.reshape(-1).tolist()]
    seqlens = [cu[b + 1] - cu[b] for b in range(batch)]
    page_size, pages = k_cache.shape[1], block_table.shape[1]
    for b, length in enumerate(seqlens):
        if length < 0:
            raise ValueError("cu_seqlens_k must not decrease: sequence %d has %d keys"
                             % (b, length))
        if length > pages * page_size:
            raise ValueError("sequence %d has %d keys; block_table holds %d pages of %d "
                             "tokens (%d)" % (b, length, pages, page_size, pages * page_size))
    # Only the entries of each sequence's pages are read.
    table = block_table.tolist()
    for b, length in enumerate(seqlens):
        for j in range(-(-length // page_size)):
            if not 0 <= int(table[b][j]) < k_cache.shape[0]:
                raise ValueError("block_table[%d, %d] is %d; k_cache has pages 0 .. %d"
                                 % (b, j, int(table[b][j]), k_cache.shape[0] - 1))
    return int(page_size)


def _cache_tables(arrays, q, k_cache, cache_seqlens, block_table, cache_batch_idx=None):
    """(block_table, cache_seqlens) as int32 arrays. Without a block table the
    cache is [B_cache, S, H_KV, D], read as pages of S tokens: batch b's is
    page cache_batch_idx[b] (default b)."""
    batch = q.shape[0]
    if block_table is None:
        if cache_batch_idx is None:
            block_table = [[b] for b in range(batch)]
        else:
            rows = _int_list(cache_batch_idx, "cache_batch_idx", batch)
            for b, row in enumerate(rows):
                if not 0 <= row < k_cache.shape[0]:
                    raise ValueError("cache_batch_idx[%d] is %d; k_cache has rows 0 .. %d"
                                     % (b, row, k_cache.shape[0] - 1))
            block_table = [[row] for row in rows]
        if cache_seqlens is None:
            cache_seqlens = k_cache.shape[1]
    elif cache_seqlens is None:
        raise ValueError("a paged cache (block_table) needs cache_seqlens")
    if isinstance(cache_seqlens, int):
        cache_seqlens = [cache_seqlens] * batch
    return (arrays.array(block_table, q, int32=True),
            arrays.array(cache_seqlens, q, int32=True))


def _int_list(values, name, batch):
    """A [B] integer argument as a list of ints."""
    if tuple(values.shape) != (batch,):
        raise ValueError("%s must be [B] (%d,), not %s" % (name, batch, tuple(values.shape)))
    return [int(x) for x in values.tolist()]


def _leftpad(arrays, q, cache_leftpad, seqlens, block_table):
    """cache_leftpad as an int32 [B] array (zeros without it): batch b's keys
    start at cache position cache_leftpad[b], which is at most
    cache_seqlens[b]."""
    batch = q.shape[0]
    if cache_leftpad is None:
        return arrays.array([0] * batch, q, int32=True)
    if block_table is not None:
        raise ValueError("cache_leftpad with block_table: flash_attn_with_kvcache takes "
                         "them only apart (a contiguous cache with left padding)")
    pads = _int_list(cache_leftpad, "cache_leftpad", batch)
    lengths = [int(n) for n in seqlens.reshape(-1).tolist()]
    for b, (pad, length) in enumerate(zip(pads, lengths)):
        if not 0 <= pad <= length:
            raise ValueError("cache_leftpad[%d] is %d; it must be 0 .. cache_seqlens[%d] (%d)"
                             % (b, pad, b, length))
    return arrays.array(pads, q, int32=True)


def _check_capacity(seqlens, table, k_cache, new_tokens):
    """Every sequence, with its appended tokens, must fit in its pages: the
    kernels read pages from the block table only, and a position past it has
    no page to read or write."""
    page_size, pages = k_cache.shape[1], table.shape[1]
    lengths = [int(n) for n in seqlens.reshape(-1).tolist()]
    for b, length in enumerate(lengths):
        if length < 0:
            raise ValueError("cache_seqlens[%d] is %d; it must be at least 0" % (b, length))
        if length + new_tokens > pages * page_size:
            raise ValueError(
                "cache_seqlens[%d] (%d)%s exceeds the cache's capacity of %d tokens "
                "(block_table's %d pages of %d)" % (
                    b, length, " plus %d new tokens" % new_tokens if new_tokens else "",
                    pages * page_size, pages, page_size))


def _append(arrays, dtype, k, v, caches, arch, target):
    """kvcache_append: k and v [B, Nnew, H_KV, D] into the cache, in place."""
    if not all(_is_contiguous(c) for c in (caches["K_cache"], caches["V_cache"])):
        raise ValueError("k_cache and v_cache must be contiguous to be appended to")
    head_dim, page_size = k.shape[-1], caches["K_cache"].shape[1]
    compiled = kernel("kvcache_append", arch,
                      (("HEAD_DIM", head_dim), ("PAGE_SIZE", page_size)), dtype)
    cache = {n: a for n, a in caches.items() if n != "cache_leftpad"}
    run(compiled, arrays, target,
        dict(cache, K_new=arrays.contiguous(k), V_new=arrays.contiguous(v)))


def _is_contiguous(x):
    flags = getattr(x, "flags", None)
    return flags["C_CONTIGUOUS"] if flags is not None else x.is_contiguous()


def attention_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None,
                           block_table=None, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, num_splits=1,
                           return_softmax_lse=False, pack_gqa=None, target=None,
                           arch=DEFAULT_ARCH, rotary_cos=None, rotary_sin=None,
                           rotary_interleaved=True, cache_batch_idx=None, cache_leftpad=None,
                           alibi_slopes=None):
    """flash_attn_with_kvcache: q [B, Nq, H, D]; k_cache, v_cache [Pages,
    PAGE_SIZE, H_KV, D] with block_table int32 [B, MaxPages] (or [B_cache, S,
    H_KV, D] without one, batch b in row cache_batch_idx[b], default b);
    cache_seqlens int32 [B] (or an int). k and v [B, Nnew, H_KV, D], when
    given, are written into the cache at cache_seqlens (in place) and attended
    to. cache_leftpad int32 [B] (contiguous cache only): batch b's keys start
    at cache position cache_leftpad[b]. rotary_cos, rotary_sin [SeqRo,
    rotary_dim / 2] (with k): k rotated at positions cache_seqlens[b] + i
    before it is written, q at cache_seqlens[b] + i with causal or a window,
    else at cache_seqlens[b]; rotary_interleaved pairs features (2j, 2j + 1),
    else (j, j + rotary_dim / 2). alibi_slopes f32 [H] or [B, H]: query i
    and key j (positions in the sequence) get -slope * |i + Nk - Nq - j|
    added to their scaled score. num_splits > 1 runs split-KV and the
    combine. Returns out [B, Nq, H, D], and with return_softmax_lse also
    softmax_lse f32 [B, H, Nq]. pack_gqa: None packs the heads of a KV group
    when Nq == 1.
    """
    arrays = backend(q)
    dtype = arrays.dtype_name(q)
    if cache_batch_idx is not None and block_table is not None:
        raise ValueError("cache_batch_idx with block_table: flash_attn_with_kvcache takes "
                         "them only apart (the block table names each sequence's pages)")
    table, seqlens = _cache_tables(arrays, q, k_cache, cache_seqlens, block_table,
                                   cache_batch_idx)
    new_tokens = 0 if k is None else k.shape[1]
    _check_capacity(seqlens, table, k_cache, new_tokens)
    leftpad = _leftpad(arrays, q, cache_leftpad, seqlens, block_table)
    slopes = _slopes(arrays, q, alibi_slopes)
    head_dim = q.shape[-1]
    padded = padded_head_dim(head_dim)
    capacity = table.shape[1] * k_cache.shape[1]     # positions per sequence
    rotary = _rotary(q, k, rotary_cos, rotary_sin, capacity, head_dim)
    caches = {"K_cache": arrays.pad_last(k_cache, padded),
              "V_cache": arrays.pad_last(v_cache, padded), "block_table": table,
              "cache_seqlens": seqlens, "cache_leftpad": leftpad}

    def rotate(x, per_token):
        return _rotate(arrays, dtype, x, rotary_cos, rotary_sin, seqlens, rotary_interleaved,
                       per_token, arch, target)

    if k is not None:
        if padded != head_dim and not all(_is_contiguous(c) for c in (k_cache, v_cache)):
            raise ValueError("k_cache and v_cache must be contiguous to be appended to")
        k_new = arrays.pad_last(k, padded)
        if rotary:
            k_new = rotate(k_new, True)
        _append(arrays, dtype, k_new, arrays.pad_last(v, padded), caches, arch, target)
        if padded != head_dim:
            # The kernels appended to padded copies (as flash_attn does for
            # such head dims): the new tokens go back into the caller's.
            _copy_into(k_cache, caches["K_cache"][..., :head_dim])
            _copy_into(v_cache, caches["V_cache"][..., :head_dim])
        caches["cache_seqlens"] = arrays.array(seqlens + new_tokens, q, int32=True)
    q = arrays.pad_last(q, padded)
    if rotary:
        q = rotate(q, _rotates_per_token(causal, window_size, capacity))
    batch, nq, heads, _ = q.shape
    if pack_gqa is None:
        pack_gqa = nq == 1 and heads > k_cache.shape[2]
    constants = mask_constants(padded, causal, window_size, softcap) + (
        ("PAGE_SIZE", k_cache.shape[1]), ("LEFTPAD", cache_leftpad is not None),
        ("ALIBI", alibi_slopes is not None), ("PACK_GQA", bool(pack_gqa)))
    args = dict(caches, Q=arrays.contiguous(q), Slopes=slopes, O=arrays.empty(q, q.shape),
                LSE=arrays.empty(q, (batch, heads, nq), float32=True))
    scale = default_scale(softmax_scale, head_dim)
    if num_splits > 1:
        _split_and_combine(arrays, dtype, args, constants, num_splits, scale, arch, target)
    else:
        run(kernel("flash_attn_kvcache", arch, constants, dtype),
            arrays, target, args, sm_scale=scale)
    out = arrays.take_last(args["O"], head_dim)
    return (out, args["LSE"]) if return_softmax_lse else out


def _slopes(arrays, q, alibi_slopes):
    """alibi_slopes as the kernels' Slopes f32 [SB, H] (zeros [1, H], not
    read, without)."""
    batch, heads = q.shape[0], q.shape[2]
    if alibi_slopes is None:
        return arrays.empty(q, (1, heads), float32=True)
    check_slopes(alibi_slopes, batch, heads)
    return arrays.array(alibi_slopes, q).reshape(-1, heads)


def _rotary(q, k, cos, sin, seqlen_k, head_dim):
    """Whether q and k are rotated; flash_attn's checks of rotary_cos and
    rotary_sin [SeqRo, rotary_dim / 2] (seqlen_k: the cache's capacity per
    sequence)."""
    if cos is None and sin is None:
        return False
    if cos is None or sin is None:
        raise ValueError("rotary_cos and rotary_sin go together: one of them is None")
    if k is None:
        raise ValueError("rotary_cos and rotary_sin rotate the new keys: they need k and v")
    if len(cos.shape) != 2 or tuple(sin.shape) != tuple(cos.shape):
        raise ValueError("rotary_cos and rotary_sin must both be [seqlen_ro, rotary_dim / 2], "
                         "not %s and %s" % (tuple(cos.shape), tuple(sin.shape)))
    rotary_dim = 2 * cos.shape[1]
    if rotary_dim > head_dim or rotary_dim % 16:
        raise ValueError("rotary_dim (2 * rotary_cos.shape[1] = %d) must be a multiple of 16 "
                         "up to the head dim %d" % (rotary_dim, head_dim))
    if cos.shape[0] < seqlen_k:
        raise ValueError("rotary_cos and rotary_sin have %d rows; the cache holds %d "
                         "positions per sequence, each needs one" % (cos.shape[0], seqlen_k))
    for name, table in (("rotary_cos", cos), ("rotary_sin", sin)):
        if str(table.dtype) != str(q.dtype):
            raise ValueError("%s must have q's dtype %s, not %s" % (name, q.dtype, table.dtype))
    return True


def _rotates_per_token(causal, window_size, seqlen_k):
    """flash_attn rotates each query at its own position (cache_seqlens[b] +
    i) with causal or a window, else every query at cache_seqlens[b]; a
    window side of seqlen_k or more is no window."""
    return bool(causal) or any(0 <= int(w) < seqlen_k for w in window_size)


def _rotate(arrays, dtype, x, cos, sin, seqlens, interleaved, per_token, arch, target):
    """kvcache_rotary: x [B, N, H, D] with its first rotary_dim features of
    token i of batch b rotated to position seqlens[b] + i (per_token) or
    seqlens[b]; a new array."""
    batch, tokens, heads, head_dim = x.shape
    view = (batch, tokens, heads) + ((head_dim // 2, 2) if interleaved else (1, head_dim))
    compiled = kernel("kvcache_rotary", arch, (
        ("HEAD_DIM", head_dim), ("ROTARY_DIM", 2 * cos.shape[1]),
        ("INTERLEAVED", bool(interleaved)), ("PER_TOKEN", bool(per_token))), dtype)
    out = arrays.empty(x, view)
    run(compiled, arrays, target, {"X": arrays.contiguous(x).reshape(view),
                                   "cos": arrays.contiguous(cos), "sin": arrays.contiguous(sin),
                                   "cache_seqlens": seqlens, "Y": out})
    return out.reshape(x.shape)


def _copy_into(dest, values):
    """dest[...] = values for a NumPy array or a torch tensor."""
    if hasattr(dest, "copy_"):
        dest.copy_(values)
    else:
        dest[...] = values


def _split_and_combine(arrays, dtype, args, constants, splits, scale, arch, target):
    """flash_attn_kvcache_split into f32 partials, then the combine into O, LSE."""
    batch, nq, heads, head_dim = args["Q"].shape
    inputs = {n: a for n, a in args.items() if n not in ("O", "LSE")}
    out, lse = args["O"], args["LSE"]
    partial = {"O_part": arrays.empty(out, (splits, batch, nq, heads, head_dim), float32=True),
               "LSE_part": arrays.empty(out, (splits, batch, heads, nq), float32=True)}
    run(kernel("flash_attn_kvcache_split", arch, constants, dtype),
        arrays, target, dict(inputs, **partial), sm_scale=scale)
    run(kernel("flash_attn_kvcache_combine", arch, (("HEAD_DIM", head_dim),), dtype),
        arrays, target, dict(partial, O=out, LSE=lse))
