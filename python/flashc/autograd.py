"""flashc.FlashAttnFunc: a torch.autograd.Function over attention's forward
(with the log-sum-exp) and attention_backward. Built on first use, so that
the package imports without torch; all the work is in the NumPy-tested
functions."""
import functools

from .attention import forward as attention_forward
from .backward import attention_backward


@functools.lru_cache(maxsize=1)
def flash_attn_function():
    import torch

    class FlashAttnFunc(torch.autograd.Function):
        """apply(q, k, v, softmax_scale, causal, window_size, deterministic,
        target, arch, alibi_slopes=None) -> (out, softmax_lse); softmax_lse
        and the slopes have no gradient."""

        @staticmethod
        def forward(ctx, q, k, v, softmax_scale, causal, window_size, deterministic,
                    target, arch, alibi_slopes=None):
            out, lse = attention_forward(q, k, v, softmax_scale, causal, window_size,
                                         alibi_slopes=alibi_slopes, return_lse=True,
                                         target=target, arch=arch)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.options = dict(softmax_scale=softmax_scale, causal=causal,
                               window_size=window_size, deterministic=deterministic,
                               target=target, arch=arch, alibi_slopes=alibi_slopes)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            dq, dk, dv = attention_backward(dout, *ctx.saved_tensors, **ctx.options)
            return dq, dk, dv, None, None, None, None, None, None, None

    return FlashAttnFunc
