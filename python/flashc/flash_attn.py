"""flash_attn 2.8's functions with their own names, signatures and returns,
over flashc's kernels: `from flashc.flash_attn import flash_attn_func` in
place of `from flash_attn import flash_attn_func`.

Every function also takes the keywords `target` (interp, emulate or cuda;
default: cuda for tensors on the GPU, else interp) and `arch`. An argument
flashc has no kernel for raises NotImplementedError naming it
(docs/python.md lists them); nothing is silently ignored.
"""
from .attention import (attention, backend, dropout_probs, dropout_seed, dropout_state,
                        forward, wants_grad)
from .inference import attention_varlen, attention_with_kvcache
from .kernel import DEFAULT_ARCH


def _dropout_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                  alibi_slopes, deterministic, return_attn_probs, target, arch):
    """flash_attn_func with dropout_p > 0: the seed is drawn from torch's
    default generator (torch tensors) or NumPy's global one, offset 0
    (attention.dropout_seed); the backward reuses the state."""
    rng = dropout_state(dropout_p, dropout_seed(q))
    window = _window(window_size)
    if wants_grad(q, k, v):
        from .autograd import flash_attn_function

        out, lse = flash_attn_function().apply(q, k, v, softmax_scale, causal, window,
                                               deterministic, target, arch, alibi_slopes,
                                               softcap, rng)
    else:
        out, lse = forward(q, k, v, softmax_scale, causal, window, softcap, alibi_slopes,
                           target=target, arch=arch, rng=rng)
    if not return_attn_probs:
        return out
    s_dmask = dropout_probs(q, k, rng, softmax_scale, causal, window, softcap, alibi_slopes,
                            target=target, arch=arch)
    return out, lse, s_dmask


def _window(window_size):
    """(left, right) as ints: the upstream tests pass a 2-element tensor."""
    left, right = window_size
    return int(left), int(right)


def _with_probs(out, lse, return_attn_probs):
    """flash_attn's return: out, or (out, softmax_lse, S_dmask); S_dmask is
    only produced with dropout, which flashc does not have."""
    return (out, lse, None) if return_attn_probs else out


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False, *, target=None,
                    arch=DEFAULT_ARCH, q_descale=None, k_descale=None, v_descale=None):
    """q [B, Nq, H, D], k and v [B, Nk, H_KV, D]; returns out [B, Nq, H, D],
    with return_attn_probs (out, softmax_lse [B, H, Nq], S_dmask): S_dmask
    is None without dropout, else [B, H, round128(Nq), round128(Nk)]
    (attention.dropout_probs). e4m3 q, k, v take FlashAttention-3's
    q_descale / k_descale / v_descale and return bf16 (attention.attention)."""
    if q_descale is not None or k_descale is not None or v_descale is not None:
        if dropout_p or return_attn_probs:
            raise ValueError("e4m3 attention takes no dropout and returns no probabilities")
        return attention(q, k, v, softmax_scale, causal, _window(window_size), softcap,
                         alibi_slopes, target=target, arch=arch, q_descale=q_descale,
                         k_descale=k_descale, v_descale=v_descale)
    if dropout_p:
        return _dropout_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                             alibi_slopes, deterministic, return_attn_probs, target, arch)
    result = attention(q, k, v, softmax_scale, causal, _window(window_size), softcap,
                       alibi_slopes, return_lse=return_attn_probs,
                       deterministic=deterministic, target=target, arch=arch)
    if return_attn_probs:
        return _with_probs(*result, True)
    return result


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False,
                              window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                              deterministic=False, return_attn_probs=False, *,
                              target=None, arch=DEFAULT_ARCH):
    """qkv [B, N, 3, H, D]."""
    q, k, v = (qkv[:, :, i] for i in range(3))
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                           alibi_slopes, deterministic, return_attn_probs,
                           target=target, arch=arch)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False,
                             window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                             deterministic=False, return_attn_probs=False, *,
                             target=None, arch=DEFAULT_ARCH):
    """kv [B, Nk, 2, H_KV, D]."""
    return flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], dropout_p, softmax_scale, causal,
                           window_size, softcap, alibi_slopes, deterministic,
                           return_attn_probs, target=target, arch=arch)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None,
                           *, target=None, arch=DEFAULT_ARCH):
    """q [TotalQ, H, D], k and v [TotalK, H_KV, D], cu_seqlens int32 [B + 1];
    returns out [TotalQ, H, D], with return_attn_probs (out, softmax_lse
    [H, TotalQ], None). alibi_slopes f32 [H] or [B, H]. With block_table
    int32 [B, max_pages], k and v are paged caches [num_blocks,
    page_block_size, H_KV, D] (forward only, as flash_attn: the output has
    no gradient). Other torch tensors that require grad go through
    flashc.FlashAttnVarlenFunc (the varlen backward kernels; `deterministic`
    picks the dQ kernel without atomics). dropout_p > 0 (not with
    block_table) as flash_attn_func's; S_dmask is then [B, H,
    round128(max_seqlen_q), round128(max_seqlen_k)], sequence b's rows and
    keys from 0."""
    if dropout_p:
        if block_table is not None:
            raise NotImplementedError("dropout_p > 0 with block_table: flashc has no paged "
                                      "dropout kernel")
        return _dropout_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                               max_seqlen_k, dropout_p, softmax_scale, causal, window_size,
                               softcap, alibi_slopes, deterministic, return_attn_probs, target,
                               arch)
    if block_table is None and wants_grad(q, k, v):
        from .autograd import flash_attn_varlen_function

        out, lse = flash_attn_varlen_function().apply(
            q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale,
            causal, _window(window_size), softcap, alibi_slopes, deterministic, target, arch)
    else:
        out, lse = attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                    max_seqlen_k, softmax_scale, causal, _window(window_size),
                                    softcap, return_lse=True, target=target, arch=arch,
                                    alibi_slopes=alibi_slopes, block_table=block_table)
    return _with_probs(out, lse, return_attn_probs)


def _dropout_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                    dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                    deterministic, return_attn_probs, target, arch):
    rng = dropout_state(dropout_p, dropout_seed(q))
    window = _window(window_size)
    if wants_grad(q, k, v):
        from .autograd import flash_attn_varlen_function

        out, lse = flash_attn_varlen_function().apply(
            q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale,
            causal, window, softcap, alibi_slopes, deterministic, target, arch, rng)
    else:
        out, lse = attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                    max_seqlen_k, softmax_scale, causal, window, softcap,
                                    return_lse=True, target=target, arch=arch,
                                    alibi_slopes=alibi_slopes, rng=rng)
    if not return_attn_probs:
        return out
    return out, lse, _varlen_probs(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                   max_seqlen_k, rng, softmax_scale, causal, window, softcap,
                                   alibi_slopes, target, arch)


def _varlen_probs(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, rng,
                  softmax_scale, causal, window, softcap, alibi_slopes, target, arch):
    """S_dmask of a packed batch: dropout_probs of each sequence, its
    generator rows and keys counted from its start in the packed tensors."""
    arrays = backend(q)
    cu_q = [int(n) for n in list(cu_seqlens_q)]
    cu_k = [int(n) for n in list(cu_seqlens_k)]
    rounded = tuple(-(-int(n) // 128) * 128 for n in (max_seqlen_q, max_seqlen_k))
    batch = len(cu_q) - 1
    s_dmask = arrays.empty(q, (batch, q.shape[1]) + rounded)
    for b in range(batch):
        nq, nk = cu_q[b + 1] - cu_q[b], cu_k[b + 1] - cu_k[b]
        if nq == 0 or nk == 0:
            continue
        slopes = alibi_slopes
        if slopes is not None and len(slopes.shape) == 2:
            slopes = slopes[b]
        s = dropout_probs(q[None, cu_q[b]:cu_q[b + 1]], k[None, cu_k[b]:cu_k[b + 1]], rng,
                          softmax_scale, causal, window, softcap, slopes, target=target,
                          arch=arch, rng_row=cu_q[b], rng_col=cu_k[b])
        rows, cols = min(s.shape[2], rounded[0]), min(s.shape[3], rounded[1])
        s_dmask[b, :, :rows, :cols] = s[0, :, :rows, :cols]
    return s_dmask


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0,
                                     softmax_scale=None, causal=False,
                                     window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                                     deterministic=False, return_attn_probs=False, *,
                                     target=None, arch=DEFAULT_ARCH):
    """qkv [Total, 3, H, D]."""
    return flash_attn_varlen_func(qkv[:, 0], qkv[:, 1], qkv[:, 2], cu_seqlens, cu_seqlens,
                                  max_seqlen, max_seqlen, dropout_p, softmax_scale, causal,
                                  window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs, target=target, arch=arch)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                    max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                                    causal=False, window_size=(-1, -1), softcap=0.0,
                                    alibi_slopes=None, deterministic=False,
                                    return_attn_probs=False, *, target=None,
                                    arch=DEFAULT_ARCH):
    """kv [TotalK, 2, H_KV, D]."""
    return flash_attn_varlen_func(q, kv[:, 0], kv[:, 1], cu_seqlens_q, cu_seqlens_k,
                                  max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale,
                                  causal, window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs, target=target, arch=arch)


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None,
                            rotary_sin=None, cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None, softmax_scale=None,
                            causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0,
                            return_softmax_lse=False, *, target=None, arch=DEFAULT_ARCH):
    """flashc.attention_with_kvcache under flash_attn's signature; num_splits
    0 (flash_attn's heuristic) runs without splitting."""
    return attention_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens, block_table,
                                  softmax_scale, causal, _window(window_size), softcap,
                                  max(int(num_splits), 1), return_softmax_lse,
                                  target=target, arch=arch, rotary_cos=rotary_cos,
                                  rotary_sin=rotary_sin, rotary_interleaved=rotary_interleaved,
                                  cache_batch_idx=cache_batch_idx, cache_leftpad=cache_leftpad,
                                  alibi_slopes=alibi_slopes)
