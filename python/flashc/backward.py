"""FlashAttention-2's _flash_attn_backward and _flash_attn_varlen_backward
over the backward kernels of docs/kernels.md ("The backward pass"):
preprocess, flash_attn_bwd, then the dQ convert (atomic dQ) or
flash_attn_bwd_dq (deterministic); with ALiBi their _alibi forms, for a
packed batch their flash_attn_varlen_ forms."""
from .kernel import DEFAULT_ARCH
from .attention import (backend, check_slopes, default_scale, kernel, mask_constants,
                        padded_head_dim, run)


def attention_backward(dout, q, k, v, out, softmax_lse, softmax_scale=None, causal=False,
                       window_size=(-1, -1), deterministic=False, target=None,
                       arch=DEFAULT_ARCH, alibi_slopes=None, softcap=0.0, rng=None):
    """dout, out [B, Nq, H, DV]; q [B, Nq, H, D]; k [B, Nk, H_KV, D], v [B,
    Nk, H_KV, DV] (DV may differ from D); softmax_lse f32 [B, H, Nq] as
    attention(..., return_lse=True) gives it (with the same alibi_slopes, f32
    [H] or [B, H], and softcap). Returns (dq, dk, dv) in the layouts of q, k
    and v; dk and dv are summed over the query heads of each KV group. With
    rng (attention.dropout_state's array) the gradients of the dropout
    forward of that state: the _dropout kernels, which take ALiBi as a
    constant and Slopes always."""
    arrays = backend(q)
    alibi = "_alibi" if alibi_slopes is not None else ""
    if alibi:
        check_slopes(alibi_slopes, q.shape[0], q.shape[2])
    tensors = _padded(arrays, q, k, v, out, dout)
    lse = arrays.contiguous(softmax_lse)
    slopes, constants, extra = None, (), {}
    if alibi:  # Slopes [1 or B, H]
        slopes = arrays.array(alibi_slopes, tensors[0]).reshape(-1, q.shape[2])
    if rng is not None:
        if slopes is None:
            slopes = arrays.empty(tensors[0], (1, q.shape[2]), float32=True)
        constants = (("ALIBI", bool(alibi)),)
        alibi, extra = "_dropout", {"Rng": arrays.array(rng, tensors[0], int32=True)}
    grads = _run(arrays, "flash_attn", alibi, tensors, lse, {}, slopes, q.shape[-1],
                 softmax_scale, causal, window_size, softcap, deterministic, target, arch,
                 constants, extra)
    return tuple(arrays.take_last(arrays.seq_first(g), x.shape[-1])
                 for g, x in zip(grads, (q, k, v)))


def attention_varlen_backward(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k,
                              max_seqlen_q, max_seqlen_k, softmax_scale=None, causal=False,
                              window_size=(-1, -1), softcap=0.0, deterministic=False,
                              target=None, arch=DEFAULT_ARCH, alibi_slopes=None, rng=None):
    """The gradients of attention_varlen: dout, q, out [TotalQ, H, D]; k, v
    [TotalK, H_KV, D] packed as cu_seqlens_q and cu_seqlens_k (int32 [B +
    1]) say; softmax_lse f32 [H, TotalQ] as attention_varlen(...,
    return_lse=True) gives it (with the same alibi_slopes, f32 [H] or [B,
    H]). Returns (dq, dk, dv) in the layouts of q, k and v. The kernels take the packed tensors heads first with a batch dim
    of 1 ([1, H, TotalQ, D]), so the preprocess and the dQ convert are
    flash_attn_bwd's. rng: attention_backward's (the _dropout kernels)."""
    arrays = backend(q)
    tensors = _padded(arrays, *(x[None] for x in (q, k, v, out, dout)))
    lse = arrays.contiguous(softmax_lse).reshape(1, q.shape[1], q.shape[0])
    packed = {"cu_seqlens_q": arrays.array(cu_seqlens_q, tensors[0], int32=True),
              "cu_seqlens_k": arrays.array(cu_seqlens_k, tensors[0], int32=True),
              "max_seqlen_q": int(max_seqlen_q), "max_seqlen_k": int(max_seqlen_k)}
    # The packed kernels take ALiBi as a constant and Slopes always (one
    # row, not read, without).
    batch, heads = packed["cu_seqlens_q"].shape[0] - 1, q.shape[1]
    if alibi_slopes is None:
        slopes = arrays.empty(tensors[0], (1, heads), float32=True)
    else:
        check_slopes(alibi_slopes, batch, heads)
        slopes = arrays.array(alibi_slopes, tensors[0]).reshape(-1, heads)
    suffix, extra = "", None
    if rng is not None:
        suffix, extra = "_dropout", {"Rng": arrays.array(rng, tensors[0], int32=True)}
    grads = _run(arrays, "flash_attn_varlen", suffix, tensors, lse, packed, slopes,
                 q.shape[-1], softmax_scale, causal, window_size, softcap, deterministic,
                 target, arch, (("ALIBI", alibi_slopes is not None),), extra)
    return tuple(arrays.take_last(arrays.seq_first(g)[0], x.shape[-1])
                 for g, x in zip(grads, (q, k, v)))


def _padded(arrays, q, k, v, out, dout):
    """Q, K, V, O, dO heads first, head dims padded to the kernels' multiples
    of 16: q and k to one, v, out and dout to another."""
    padded, padded_v = padded_head_dim(q.shape[-1]), padded_head_dim(v.shape[-1])
    return tuple(arrays.heads_first(arrays.pad_last(x, size)) for x, size in
                 ((q, padded), (k, padded), (v, padded_v), (out, padded_v), (dout, padded_v)))


def _run(arrays, prefix, alibi, tensors, lse, packed, slopes, head_dim, softmax_scale, causal,
         window_size, softcap, deterministic, target, arch, constants=(), extra=None):
    """The backward kernels on heads-first tensors; returns (DQ, DK, DV)."""
    Q, K, V, O, DO = tensors
    dtype = arrays.dtype_name(Q)
    scale = default_scale(softmax_scale, head_dim)
    padded, padded_v = Q.shape[-1], V.shape[-1]
    head_dim_v = (("HEAD_DIM_V", padded_v),) if padded_v != padded else ()
    grads = {"DQ": arrays.empty(Q, Q.shape), "DK": arrays.empty(K, K.shape),
             "DV": arrays.empty(V, V.shape)}
    work = {"Delta": arrays.empty(Q, Q.shape[:3], float32=True),
            "DQaccum": arrays.empty(Q, Q.shape, float32=True)}
    rows = (("HEAD_DIM", padded),)
    run(kernel("flash_attn_bwd_preprocess", arch, rows + head_dim_v, dtype), arrays, target,
        {"O": O, "DO": DO, **work})
    mask = mask_constants(padded, causal, window_size,
                          softcap=float(softcap) if softcap else None) + head_dim_v + constants
    arrays_in = {n: a for n, a in packed.items() if n.startswith("cu_")}
    inputs = {"Q": Q, "K": K, "V": V, "DO": DO, "LSE": lse, **work, **arrays_in}
    if slopes is not None:
        inputs["Slopes"] = slopes
    inputs.update(extra or {})
    lengths = {n: packed[n] for n in ("max_seqlen_k",) if n in packed}
    run(kernel(prefix + "_bwd" + alibi, arch,
               mask + (("DETERMINISTIC", bool(deterministic)),), dtype),
        arrays, target, {**inputs, "DK": grads["DK"], "DV": grads["DV"]}, sm_scale=scale,
        **lengths)
    if deterministic:
        del inputs["DQaccum"]
        lengths = {n: packed[n] for n in ("max_seqlen_q",) if n in packed}
        run(kernel(prefix + "_bwd_dq" + alibi, arch, mask, dtype), arrays, target,
            {**inputs, "DQ": grads["DQ"]}, sm_scale=scale, **lengths)
    else:
        run(kernel("flash_attn_bwd_dq_convert", arch, rows, dtype), arrays,
            target, {"DQaccum": work["DQaccum"], "DQ": grads["DQ"]}, sm_scale=scale)
    return grads["DQ"], grads["DK"], grads["DV"]
