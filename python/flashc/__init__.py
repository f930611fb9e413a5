"""flashc from Python: compile tile programs, inspect every IR level and the
PTX, and run kernels on NumPy arrays (interpreter, emulator) or on the GPU.

    import flashc
    k = flashc.compile("kernels/fa2.tile", HEAD_DIM=64)
    k(Q=q, K=k_, V=v, O=o, sm_scale=0.125, target="emulate")

docs/python.md describes the package.
"""
from ._flashc import CompileError, Error, RunError, SanitizerError
from . import cache
from .kernel import DEFAULT_ARCH, OPTIONS, Kernel, compile
from .attention import attention
from .backward import attention_backward, attention_varlen_backward
from .inference import attention_varlen, attention_with_kvcache
from .flex import flex_attention, flex_attention_backward
from .block_mask import BlockMask, create_block_mask


def __getattr__(name):
    """FlashAttnFunc, FlashAttnVarlenFunc and FlexAttentionFunc
    (torch.autograd.Function) when torch is importable."""
    if name == "FlashAttnFunc":
        from .autograd import flash_attn_function

        return flash_attn_function()
    if name == "FlashAttnVarlenFunc":
        from .autograd import flash_attn_varlen_function

        return flash_attn_varlen_function()
    if name == "FlexAttentionFunc":
        from .autograd import flex_attention_function

        return flex_attention_function()
    raise AttributeError(f"module 'flashc' has no attribute '{name}'")


__all__ = [
    "DEFAULT_ARCH",
    "OPTIONS",
    "CompileError",
    "BlockMask",
    "Error",
    "Kernel",
    "RunError",
    "SanitizerError",
    "attention",
    "attention_backward",
    "attention_varlen",
    "attention_varlen_backward",
    "attention_with_kvcache",
    "cache",
    "compile",
    "create_block_mask",
    "flex_attention",
    "flex_attention_backward",
]
