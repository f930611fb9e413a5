"""flashc.FlashAttnFunc, flashc.FlashAttnVarlenFunc and FlexAttentionFunc:
torch.autograd.Functions over attention's, attention_varlen's and
flex_attention's forwards (with the log-sum-exp) and their backwards. Built on first use, so that the package imports without
torch; all the work is in the NumPy-tested functions."""
import functools

from .attention import forward as attention_forward
from .backward import attention_backward, attention_varlen_backward
from .inference import attention_varlen


@functools.lru_cache(maxsize=1)
def flash_attn_function():
    import torch

    class FlashAttnFunc(torch.autograd.Function):
        """apply(q, k, v, softmax_scale, causal, window_size, deterministic,
        target, arch, alibi_slopes=None, softcap=0.0, rng=None) -> (out,
        softmax_lse); softmax_lse and the slopes have no gradient. rng
        (attention.dropout_state's array: seed, offset, threshold) turns on
        dropout; the backward recomputes the mask from it."""

        @staticmethod
        def forward(ctx, q, k, v, softmax_scale, causal, window_size, deterministic,
                    target, arch, alibi_slopes=None, softcap=0.0, rng=None):
            out, lse = attention_forward(q, k, v, softmax_scale, causal, window_size,
                                         softcap=softcap, alibi_slopes=alibi_slopes,
                                         return_lse=True, target=target, arch=arch, rng=rng)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.options = dict(softmax_scale=softmax_scale, causal=causal,
                               window_size=window_size, deterministic=deterministic,
                               target=target, arch=arch, alibi_slopes=alibi_slopes,
                               softcap=softcap, rng=rng)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            dq, dk, dv = attention_backward(dout, *ctx.saved_tensors, **ctx.options)
            return dq, dk, dv, None, None, None, None, None, None, None, None, None

    return FlashAttnFunc


@functools.lru_cache(maxsize=1)
def flash_attn_varlen_function():
    import torch

    class FlashAttnVarlenFunc(torch.autograd.Function):
        """apply(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
        max_seqlen_k, softmax_scale, causal, window_size, softcap,
        alibi_slopes, deterministic, target, arch, rng=None) -> (out,
        softmax_lse); only q, k and v have gradients. rng: FlashAttnFunc's."""

        @staticmethod
        def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                    softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                    target, arch, rng=None):
            out, lse = attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                        max_seqlen_k, softmax_scale, causal, window_size,
                                        softcap, return_lse=True, target=target, arch=arch,
                                        alibi_slopes=alibi_slopes, rng=rng)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.lengths = (cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
            ctx.options = dict(softmax_scale=softmax_scale, causal=causal,
                               window_size=window_size, softcap=softcap,
                               deterministic=deterministic, target=target, arch=arch,
                               alibi_slopes=alibi_slopes, rng=rng)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            dq, dk, dv = attention_varlen_backward(dout, *ctx.saved_tensors, *ctx.lengths,
                                                   **ctx.options)
            return (dq, dk, dv) + (None,) * 13

    return FlashAttnVarlenFunc


@functools.lru_cache(maxsize=1)
def flex_attention_function():
    import torch

    from .flex import flex_attention, flex_attention_backward

    class FlexAttentionFunc(torch.autograd.Function):
        """apply(q, k, v, score_mod, mask_mod, block_mask, scale, enable_gqa,
        kernel_options, target, arch) -> (out, lse): flex_attention with
        Python modifiers or a BlockMask (kernel_options: the forward's),
        whose backward is flex_attention_backward over the same BlockMask;
        lse and captured tensors have no gradient."""

        @staticmethod
        def forward(ctx, q, k, v, score_mod, mask_mod, block_mask, scale, enable_gqa,
                    kernel_options, target, arch):
            out, lse = flex_attention(q, k, v, score_mod, mask_mod, block_mask=block_mask,
                                      scale=scale, enable_gqa=enable_gqa, return_lse=True,
                                      kernel_options=kernel_options, target=target, arch=arch)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.options = dict(score_mod=score_mod, mask_mod=mask_mod, block_mask=block_mask,
                               scale=scale, target=target, arch=arch)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            dq, dk, dv = flex_attention_backward(dout.contiguous(), *ctx.saved_tensors,
                                                 **ctx.options)
            return (dq, dk, dv) + (None,) * 8

    return FlexAttentionFunc
