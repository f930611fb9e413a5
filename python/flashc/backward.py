"""FlashAttention-2's _flash_attn_backward over the backward kernels of
docs/kernels.md ("The backward pass"): preprocess, flash_attn_bwd, then the
dQ convert (atomic dQ) or flash_attn_bwd_dq (deterministic)."""
from .kernel import DEFAULT_ARCH
from .attention import backend, default_scale, kernel, mask_constants, padded_head_dim, run


def attention_backward(dout, q, k, v, out, softmax_lse, softmax_scale=None, causal=False,
                       window_size=(-1, -1), deterministic=False, target=None,
                       arch=DEFAULT_ARCH):
    """dout, q, out [B, Nq, H, D]; k, v [B, Nk, H_KV, D]; softmax_lse f32
    [B, H, Nq] as attention(..., return_lse=True) gives it. Returns (dq, dk,
    dv) in the layouts of q, k and v; dk and dv are summed over the query
    heads of each KV group."""
    arrays = backend(q)
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
    run(kernel("flash_attn_bwd", arch, mask + (("DETERMINISTIC", bool(deterministic)),),
               dtype),
        arrays, target, {**inputs, "DK": grads["DK"], "DV": grads["DV"]}, sm_scale=scale)
    if deterministic:
        del inputs["DQaccum"]
        run(kernel("flash_attn_bwd_dq", arch, mask, dtype), arrays, target,
            {**inputs, "DQ": grads["DQ"]}, sm_scale=scale)
    else:
        run(kernel("flash_attn_bwd_dq_convert", arch, rows, dtype), arrays,
            target, {"DQaccum": work["DQaccum"], "DQ": grads["DQ"]}, sm_scale=scale)
    return tuple(arrays.take_last(arrays.seq_first(grads[n]), q.shape[-1])
                 for n in ("DQ", "DK", "DV"))
