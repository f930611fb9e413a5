"""FlashAttention-2's _flash_attn_backward over the backward kernels of
docs/kernels.md ("The backward pass"): preprocess, flash_attn_bwd, then the
dQ convert (atomic dQ) or flash_attn_bwd_dq (deterministic); with ALiBi
their _alibi forms."""
from .kernel import DEFAULT_ARCH
from .attention import (backend, check_slopes, default_scale, kernel, mask_constants,
                        padded_head_dim, run)


def attention_backward(dout, q, k, v, out, softmax_lse, softmax_scale=None, causal=False,
                       window_size=(-1, -1), deterministic=False, target=None,
                       arch=DEFAULT_ARCH, alibi_slopes=None):
    """dout, q, out [B, Nq, H, D]; k, v [B, Nk, H_KV, D]; softmax_lse f32
    [B, H, Nq] as attention(..., return_lse=True) gives it (with the same
    alibi_slopes, f32 [H] or [B, H], when given). Returns (dq, dk, dv) in
    the layouts of q, k and v; dk and dv are summed over the query heads of
    each KV group."""
    arrays = backend(q)
    alibi = "_alibi" if alibi_slopes is not None else ""
    if alibi:
        check_slopes(alibi_slopes, q.shape[0], q.shape[2])
    dtype = arrays.dtype_name(q)
    head_dim = q.shape[-1]
    scale = default_scale(softmax_scale, head_dim)
    padded = padded_head_dim(head_dim)
    Q, K, V, O, DO = (arrays.heads_first(arrays.pad_last(x, padded))
                      for x in (q, k, v, out, dout))
    head_dim = padded
    grads = {"DQ": arrays.empty(Q, Q.shape), "DK": arrays.empty(K, K.shape),
             "DV": arrays.empty(V, V.shape)}
    work = {"Delta": arrays.empty(Q, Q.shape[:3], float32=True),
            "DQaccum": arrays.empty(Q, Q.shape, float32=True)}
    rows = (("HEAD_DIM", head_dim),)
    run(kernel("flash_attn_bwd_preprocess", arch, rows, dtype), arrays, target,
        {"O": O, "DO": DO, **work})
    mask = mask_constants(head_dim, causal, window_size, softcap=None)
    inputs = {"Q": Q, "K": K, "V": V, "DO": DO, "LSE": arrays.contiguous(softmax_lse), **work}
    if alibi:  # Slopes [1 or B, H]
        inputs["Slopes"] = arrays.array(alibi_slopes, Q).reshape(-1, q.shape[2])
    run(kernel("flash_attn_bwd" + alibi, arch,
               mask + (("DETERMINISTIC", bool(deterministic)),), dtype),
        arrays, target, {**inputs, "DK": grads["DK"], "DV": grads["DV"]}, sm_scale=scale)
    if deterministic:
        del inputs["DQaccum"]
        run(kernel("flash_attn_bwd_dq" + alibi, arch, mask, dtype), arrays, target,
            {**inputs, "DQ": grads["DQ"]}, sm_scale=scale)
    else:
        run(kernel("flash_attn_bwd_dq_convert", arch, rows, dtype), arrays,
            target, {"DQaccum": work["DQaccum"], "DQ": grads["DQ"]}, sm_scale=scale)
    return tuple(arrays.take_last(arrays.seq_first(grads[n]), q.shape[-1])
                 for n in ("DQ", "DK", "DV"))
